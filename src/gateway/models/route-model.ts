import { ParleyError } from "../../core/index.js";
import { findUpstreamType } from "../../formats/registry.js";
import { globMatches, type ResolvedRoute } from "../config/routing.js";
import type { ProviderConfig } from "../config/types.js";
import type { GatewayState } from "../state.js";

/**
 * Client model name -> provider and upstream model, with what the providers serve taken into account:
 *
 * 1. the first route whose glob matches names the provider (and the model, when it sets one);
 * 2. otherwise a provider that listed the name itself (the default provider first) takes it;
 * 3. otherwise the default provider.
 *
 * The upstream model is the route's `model`, else the provider's rename map, else the name itself when the provider
 * serves it; a name it does not serve goes to the provider's default model (`--model`, `defaultModel`), or to its
 * one model when it lists exactly one. A provider that lists several and has no default answers 404, naming them:
 * sending the client's name on would only get the upstream's own 404, slower and less clear.
 */
export async function routeModel(state: GatewayState, clientModel: string): Promise<ResolvedRoute> {
  const choice = chooseProvider(state, clientModel);
  if (choice.model === undefined) await state.catalogue.beforeRequest(choice.provider.name);
  const target = targetModel(state, clientModel);
  if (target.upstreamModel === undefined) {
    throw new ParleyError("not_found_error", notServedMessage(target.provider, clientModel, target.served ?? []));
  }
  return { provider: target.provider, upstreamModel: target.upstreamModel };
}

export interface ModelTarget {
  provider: ProviderConfig;
  /** Undefined when the provider serves several models, none of them this one, and has no default. */
  upstreamModel: string | undefined;
  served?: string[];
}

/** Where a name goes with what is known now, asking nothing (for listings and count_tokens). */
export function targetModel(state: GatewayState, clientModel: string): ModelTarget {
  const { provider, model } = chooseProvider(state, clientModel);
  if (model !== undefined) return { provider, upstreamModel: model };
  if (takesClientModelNames(provider)) return { provider, upstreamModel: clientModel };
  const listing = state.catalogue.models(provider.name);
  if (listing.status !== "listed") return { provider, upstreamModel: provider.defaultModel ?? clientModel };
  if (listing.models.has(clientModel)) return { provider, upstreamModel: clientModel };
  if (provider.defaultModel !== undefined) return { provider, upstreamModel: provider.defaultModel };
  if (listing.models.size === 1) return { provider, upstreamModel: listing.models.keys().next().value as string };
  if (listing.models.size === 0) return { provider, upstreamModel: clientModel };
  return { provider, upstreamModel: undefined, served: [...listing.models.keys()] };
}

function chooseProvider(state: GatewayState, clientModel: string): { provider: ProviderConfig; model?: string } {
  const { config } = state;
  for (const route of config.routes) {
    if (!globMatches(route.match, clientModel)) continue;
    const provider = config.providers[route.provider]!;
    const model = route.model ?? provider.models[clientModel];
    return model === undefined ? { provider } : { provider, model };
  }
  const fallback = config.providers[config.defaultProvider]!;
  const renamed = fallback.models[clientModel];
  if (renamed !== undefined) return { provider: fallback, model: renamed };
  if (state.catalogue.serves(fallback.name, clientModel)) return { provider: fallback, model: clientModel };
  for (const provider of Object.values(config.providers)) {
    if (state.catalogue.serves(provider.name, clientModel)) return { provider, model: clientModel };
  }
  return { provider: fallback };
}

function notServedMessage(provider: ProviderConfig, clientModel: string, served: string[]): string {
  const shown = served.slice(0, 8).join(", ");
  const more = served.length > 8 ? ` and ${served.length - 8} more` : "";
  return (
    `model '${clientModel}' is not served by ${provider.baseUrl}, which serves ${shown}${more}: ask for one of ` +
    `those, or choose the model other names go to with ${defaultModelSetting(provider)}`
  );
}

/** Whether the provider's API takes a client's model name as sent (its own names and aliases), whatever it lists. */
export function takesClientModelNames(provider: ProviderConfig): boolean {
  return findUpstreamType(provider.type)?.upstream.takesClientModelNames === true;
}

/** Where a provider's default model is set, as a person would change it. */
export function defaultModelSetting(provider: ProviderConfig): string {
  return provider.fromFlags ? "--model (PARLEY_MODEL)" : `providers.${provider.name}.defaultModel`;
}

/** Where a provider's URL is set, as a person would change it. */
export function baseUrlSetting(provider: ProviderConfig): string {
  return provider.fromFlags ? "--upstream (PARLEY_UPSTREAM_URL)" : `providers.${provider.name}.baseUrl`;
}
