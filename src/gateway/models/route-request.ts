import type { ResolvedRoute } from "../config/routing.js";
import type { ClientRequest } from "../exchange/plan.js";
import type { ProviderRuntime } from "../exchange/providers.js";
import type { GatewayState } from "../state.js";
import { checkThread } from "../threads.js";
import { approximateInputTokens } from "../token-count.js";
import { fitMaxTokens } from "./fit-request.js";
import { routeModel } from "./route-model.js";

export interface RoutedRequest {
  route: ResolvedRoute;
  provider: ProviderRuntime;
  /** The client's request, its `max_tokens` lowered (and reported) where the model cannot honour it. */
  request: ClientRequest;
  /** The prompt's token estimate, computed at most once. */
  estimateInputTokens(): number;
}

/** The provider and model a request goes to, and the request fitted to that model's limits. */
export async function routeRequest(state: GatewayState, request: ClientRequest): Promise<RoutedRequest> {
  const route = await routeModel(state, request.clientModel);
  const provider = state.providers[route.provider.name]!;
  if (request.format.id === "anthropic") checkThread(request.raw, provider);
  let estimate: number | undefined;
  const estimateInputTokens = () => {
    estimate ??= approximateInputTokens(request.core);
    return estimate;
  };
  // A client of the provider's own API whose body goes through as sent (Anthropic's) is not fitted.
  if (request.format === provider.adapter && provider.adapter.passthrough !== undefined) {
    return { route, provider, request, estimateInputTokens };
  }
  const limits = state.catalogue.limits(provider.config.name, route.upstreamModel);
  const fitted = fitMaxTokens(request.core, route.upstreamModel, limits, estimateInputTokens);
  if (fitted.lossy.length === 0) return { route, provider, request, estimateInputTokens };
  return {
    route,
    provider,
    request: { ...request, core: fitted.request, lossy: [...request.lossy, ...fitted.lossy] },
    estimateInputTokens,
  };
}
