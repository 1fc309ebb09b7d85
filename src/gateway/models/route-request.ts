import type { ResolvedRoute } from "../config/routing.js";
import { type ClientRequest, sameApiPassthrough } from "../exchange/plan.js";
import type { ProviderRuntime } from "../exchange/providers.js";
import { refuseHeldHistory } from "../held-history.js";
import type { GatewayState } from "../state.js";
import { approximateInputTokens, countInputTokens } from "../token-count.js";
import { fitRequest } from "./fit-request.js";
import { routeModel } from "./route-model.js";

export interface RoutedRequest {
  route: ResolvedRoute;
  provider: ProviderRuntime;
  /**
   * The client's request, its `max_tokens` lowered (and reported) where the model cannot honour it; a prompt over
   * the model's window never gets this far (its client's context-overflow error).
   */
  request: ClientRequest;
  /** The prompt's token estimate, computed at most once. */
  estimateInputTokens(): number;
}

/** The provider and model a request goes to, and the request fitted to that model's limits. */
export async function routeRequest(state: GatewayState, request: ClientRequest): Promise<RoutedRequest> {
  const route = await routeModel(state, request.clientModel);
  const provider = state.providers[route.provider.name]!;
  refuseHeldHistory(request, provider);
  let estimate: number | undefined;
  const estimateInputTokens = () => {
    // A request read on a prepare thread came with its estimate: here it has no history to count.
    estimate ??= request.prepared?.summary.inputEstimate ?? approximateInputTokens(request.core);
    return estimate;
  };
  // A client of the provider's own API whose body goes through as sent (Anthropic's) is not fitted.
  if (sameApiPassthrough(request.format, provider) !== undefined) {
    return { route, provider, request, estimateInputTokens };
  }
  const limits = state.catalogue.limits(provider.config.name, route.upstreamModel);
  const fitted = await fitRequest(request.core, route.upstreamModel, limits, {
    approximate: estimateInputTokens,
    exact: () => request.prepared?.countInputTokens() ?? countInputTokens(request.core),
  });
  if (fitted.lossy.length === 0) return { route, provider, request, estimateInputTokens };
  return {
    route,
    provider,
    request: { ...request, core: fitted.request, lossy: [...request.lossy, ...fitted.lossy] },
    estimateInputTokens,
  };
}
