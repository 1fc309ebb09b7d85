import { UpstreamError } from "../core/index.js";
import { isUnreachable } from "../upstream/index.js";
import type { ProviderRuntime } from "./exchange/providers.js";
import { AnsweredError } from "./http/answered-error.js";
import { baseUrlSetting } from "./models/route-model.js";
import type { GatewayState } from "./state.js";

/**
 * What a failed upstream call tells the catalogue, and how it reaches the client. A 404 may mean the model is gone
 * (a server restarted with another one), so the provider's model list is asked again before the next request. An
 * upstream nobody answers for, after the gateway's own retries, is answered at once with where to look (the URL
 * and the setting to change) and `x-should-retry: false`: without it Claude Code would retry a 502 ten times, for
 * about three minutes, before saying anything.
 */
export function explainUpstreamFailure(error: unknown, provider: ProviderRuntime, state: GatewayState): unknown {
  if (!(error instanceof UpstreamError)) return error;
  if (error.upstreamStatus === 404) state.catalogue.markStale(provider.config.name);
  if (!isUnreachable(error)) return error;
  state.catalogue.markStale(provider.config.name);
  const { config } = provider;
  return new AnsweredError(
    "api_error",
    `${error.message}: nothing answers at ${config.baseUrl} (provider ${config.name}); start the server there, ` +
      `or point ${baseUrlSetting(config)} at it`,
    { status: 502, cause: error, headers: { "x-should-retry": "false" } },
  );
}
