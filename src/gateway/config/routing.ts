import type { GatewayConfig, ProviderConfig } from "./types.js";

export interface ResolvedRoute {
  provider: ProviderConfig;
  /** The model name sent upstream. */
  upstreamModel: string;
}

/**
 * Client model name -> provider and upstream model. The first route whose glob matches wins; otherwise the
 * default provider. The upstream model is the route's `model`, else the provider's rename map, else the
 * client's own name.
 */
export function resolveRoute(config: GatewayConfig, clientModel: string): ResolvedRoute {
  for (const route of config.routes) {
    if (!globMatches(route.match, clientModel)) continue;
    const provider = config.providers[route.provider]!;
    return { provider, upstreamModel: route.model ?? provider.models[clientModel] ?? clientModel };
  }
  const provider = config.providers[config.defaultProvider]!;
  return { provider, upstreamModel: provider.models[clientModel] ?? clientModel };
}

const globCache = new Map<string, RegExp>();

/** `*` matches any run of characters, `?` exactly one; everything else is literal. Case-sensitive. */
export function globMatches(pattern: string, value: string): boolean {
  let regex = globCache.get(pattern);
  if (regex === undefined) {
    const source = pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".");
    regex = new RegExp(`^${source}$`, "s");
    globCache.set(pattern, regex);
  }
  return regex.test(value);
}
