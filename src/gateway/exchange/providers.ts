import type { FormatAdapter, UpstreamConnection } from "../../formats/adapter.js";
import { SettingError } from "../../formats/adapter.js";
import { findUpstreamType, orList, UPSTREAM_TYPES } from "../../formats/registry.js";
import { ConfigError } from "../config/load.js";
import type { GatewayConfig, ProviderConfig } from "../config/types.js";
import { providerBinding } from "./reasoning-binding.js";

/** A configured provider, ready to call: its API's adapter, and the connection that adapter built for it. */
export interface ProviderRuntime {
  config: ProviderConfig;
  /** The API the provider speaks. */
  adapter: FormatAdapter;
  /** Its endpoint, headers, quirks and history rules, resolved once at start-up. */
  connection: UpstreamConnection;
  /** The key or deployment behind it, as its answers' reasoning is bound to (`reasoning-binding.ts`). */
  binding: string;
}

/** How the provider says it refused reasoning it could not verify (its own words, else its API's); none: it never does. */
export function reasoningRefusalOf(provider: ProviderRuntime): ((status: number, body: string) => boolean) | undefined {
  return provider.connection.isReasoningRefusal ?? provider.adapter.upstream.isReasoningRefusal;
}

export function buildProviders(config: GatewayConfig): Record<string, ProviderRuntime> {
  const runtimes: Record<string, ProviderRuntime> = {};
  const all = Object.values(config.providers);
  for (const provider of all) {
    const adapter = findUpstreamType(provider.type);
    if (adapter === undefined)
      throw new ConfigError(`providers.${provider.name}.type`, `must be ${orList(UPSTREAM_TYPES)}`);
    if (provider.compacts !== undefined && adapter.upstream.compacts !== true)
      throw new ConfigError(
        `providers.${provider.name}.compacts`,
        `only an openai-responses provider compacts conversations itself; Parley compacts for a provider of type ${provider.type}`,
      );
    try {
      // A conversation may move among the providers of one API, so each is told of the others.
      const peers = all
        .filter((other) => other !== provider && other.type === provider.type)
        .map((other) => other.name);
      runtimes[provider.name] = {
        config: provider,
        adapter,
        connection: adapter.upstream.connect({ ...provider, peers }),
        binding: providerBinding(provider),
      };
    } catch (error) {
      if (error instanceof SettingError)
        throw new ConfigError(`providers.${provider.name}.${error.path}`, error.message);
      throw error;
    }
  }
  return runtimes;
}
