import type { ClientRequest } from "./exchange/plan.js";
import type { ProviderRuntime } from "./exchange/providers.js";
import { AnsweredError } from "./http/answered-error.js";

/**
 * A request that continues history only a provider of the client's own API holds (its adapter's
 * `continuesHeldHistory`) cannot go to a provider of another API: sent on, it would arrive without its history and
 * be answered as if it had none. It is refused, in the client's API's words for history its server does not have.
 */
export function refuseHeldHistory(request: ClientRequest, provider: ProviderRuntime): void {
  if (request.raw === undefined || provider.adapter === request.format) return;
  const refusal = request.format.client.continuesHeldHistory?.(request.raw, provider.config.name);
  if (refusal === undefined) return;
  throw new AnsweredError(refusal.type, refusal.message, {
    ...(refusal.details === undefined ? {} : { details: refusal.details }),
  });
}
