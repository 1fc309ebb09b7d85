import type { ProviderConfig } from "../config/types.js";
import type { ProviderRuntime } from "../exchange/providers.js";
import type { GatewayState } from "../state.js";
import type { ResolvedLimits } from "./catalogue.js";
import { baseUrlSetting, defaultModelSetting, takesClientModelNames } from "./route-model.js";

/** Models named on a start-up line; the rest are counted. */
const SHOWN_MODELS = 6;

/**
 * One line per provider for the start-up output, after the listening line: its URL, type and preset, then what
 * it serves and each model's limits, or why there is no list (`unreachable: connection refused (...)`), and where
 * client model names go.
 */
export function providerLines(state: GatewayState): string[] {
  return Object.values(state.providers).map((runtime) => providerLine(state, runtime));
}

function providerLine(state: GatewayState, runtime: ProviderRuntime): string {
  const { config } = runtime;
  const head = `provider ${config.name}: ${config.baseUrl} (${kind(runtime)})`;
  const listing = state.catalogue.models(config.name);
  switch (listing.status) {
    case "pending":
      return `${head}: no answer yet to GET /models (still asking); ${whereNamesGo(state, config, 0)}`;
    case "unreachable":
      return `${head}: unreachable: ${listing.cause}; requests fail until it answers (if it runs elsewhere, change ${baseUrlSetting(config)})`;
    case "not-listed":
      return `${head}: no model list: ${listing.cause}; ${whereNamesGo(state, config, 0)}`;
    case "listed": {
      const ids = [...listing.models.keys()];
      const shown = ids
        .slice(0, SHOWN_MODELS)
        .map((id) => `${id} (${describeLimits(state.catalogue.limits(config.name, id))})`);
      const more = ids.length > SHOWN_MODELS ? `, and ${ids.length - SHOWN_MODELS} more` : "";
      const count = ids.length === 1 ? "1 model" : `${ids.length} models`;
      return `${head}: ${count}${ids.length === 0 ? "" : `: ${shown.join(", ")}${more}`}; ${whereNamesGo(state, config, ids.length)}`;
    }
    default: {
      const never: never = listing.status;
      throw new Error(`unknown status ${String(never)}`);
    }
  }
}

function kind(runtime: ProviderRuntime): string {
  const facts = runtime.connection.modelFacts;
  if (facts === undefined) return runtime.config.type;
  const from = { configuration: "", URL: " guessed from the URL", "model list": " recognised from its model list" };
  return `${runtime.config.type}, preset ${facts.preset}${from[facts.presetFrom]}`;
}

function whereNamesGo(state: GatewayState, config: ProviderConfig, listed: number): string {
  if (takesClientModelNames(config)) return "model names go as the client sends them";
  if (config.defaultModel !== undefined) {
    const limits = describeLimits(state.catalogue.limits(config.name, config.defaultModel));
    return `names it does not serve go to ${config.defaultModel} (${limits}; set by ${defaultModelSetting(config)})`;
  }
  if (listed === 1) return "every model name goes to it";
  if (listed > 1)
    return `other names get a 404 naming these (choose where they go with ${defaultModelSetting(config)})`;
  return `model names go as the client sends them (choose one with ${defaultModelSetting(config)})`;
}

/** `context 32768, output 8192` (from where, when not the provider's own list), or `limits unknown`. */
export function describeLimits(limits: ResolvedLimits): string {
  const parts: string[] = [];
  if (limits.contextWindow !== undefined) parts.push(`context ${limits.contextWindow}`);
  if (limits.maxOutputTokens !== undefined) parts.push(`output ${limits.maxOutputTokens}`);
  if (parts.length === 0) return "limits unknown";
  const sources = new Set([limits.contextSource, limits.outputSource].filter((source) => source !== undefined));
  return `${parts.join(", ")}, from ${[...sources].join(" and ")}`;
}
