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

/** Model ids the gateway can answer for, for `GET /v1/models`: route patterns without wildcards, rename keys. */
export function listedModels(config: GatewayConfig): string[] {
  const ids = new Set<string>();
  for (const route of config.routes) if (!/[*?]/.test(route.match)) ids.add(route.match);
  for (const provider of Object.values(config.providers))
    for (const name of Object.keys(provider.models)) ids.add(name);
  return [...ids];
}
