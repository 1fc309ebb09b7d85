import { type ConversationRequest, UpstreamError } from "../../core/index.js";
import type { ClientRoute, FormatAdapter, TokenCounter } from "../../formats/adapter.js";
import { repair } from "../../repair/index.js";
import { Cancellation } from "../../upstream/index.js";
import { forwardsClientQuery } from "../exchange/plan.js";
import type { ProviderRuntime } from "../exchange/providers.js";
import { expectObject, readJsonBody } from "../http/body.js";
import { type Context, sendJson } from "../http/context.js";
import { targetModel } from "../models/route-model.js";
import type { GatewayState } from "../state.js";
import { countInputTokens } from "../token-count.js";

/**
 * A client's token count (`POST /v1/messages/count_tokens`, Gemini's `:countTokens`): asked of the provider the model
 * routes to when its server counts (its connection's `tokenCounter`: Anthropic, llama.cpp, vLLM, Gemini), through the
 * model's own template and tokenizer, with the provider's hidden tool and thinking prompts; estimated by the gateway
 * otherwise, and whenever the provider's count fails, times out (`timeouts.countTokensMs`) or cannot be read: a
 * count is advice, and an estimate now serves the client better than an error. The request's log line says which it
 * got (`tokenCount`: `upstream` or `estimate`) and why a provider's count was not used (`tokenCountError`).
 */
export async function handleCountTokens(
  ctx: Context,
  state: GatewayState,
  format: FormatAdapter,
  clientRoute: ClientRoute,
): Promise<void> {
  const raw = expectObject(await readJsonBody(ctx, state.config.limits.maxBodyBytes));
  const request = format.client.readCountTokensRequest!(raw, {
    route: clientRoute,
    params: ctx.params,
    query: ctx.query,
  });
  const route = targetModel(state, request.model);
  const provider = state.providers[route.provider.name];
  const counter = provider?.connection.tokenCounter?.(format.id);
  let count: number | undefined;
  if (provider !== undefined && counter !== undefined) {
    ctx.log.provider = provider.config.name;
    ctx.log.upstreamModel = route.upstreamModel ?? request.model;
    count = await askProvider(ctx, state, format, provider, counter, {
      request: { ...request, model: route.upstreamModel ?? request.model },
      raw,
    });
  }
  ctx.log.tokenCount = count === undefined ? "estimate" : "upstream";
  count ??= await countInputTokens(request);
  ctx.log.inputTokens = count;
  sendJson(ctx, 200, format.client.countTokensBody?.(count) ?? { input_tokens: count });
}

/**
 * The provider's count, or undefined (the reason in the log line) when it could not be had in time. Its history is
 * repaired for the provider as a turn's would be, so what is counted is what would be sent.
 */
async function askProvider(
  ctx: Context,
  state: GatewayState,
  format: FormatAdapter,
  provider: ProviderRuntime,
  counter: TokenCounter,
  { request, raw }: { request: ConversationRequest; raw: Record<string, unknown> },
): Promise<number | undefined> {
  const repaired = repair(request.messages, { ...provider.connection.repairTarget, binding: provider.binding });
  if (repaired.messages.length === 0 && request.messages.length > 0) {
    ctx.log.tokenCountError = "every message is empty: nothing for the provider to count";
    return undefined;
  }
  const timeoutMs = state.config.timeouts.countTokensMs;
  const deadline = new Cancellation();
  const stopFollowing = ctx.clientGone.onAbort((reason) => deadline.abort(reason));
  const timer = setTimeout(() => {
    deadline.abort(
      new UpstreamError("timeout_error", `the provider did not count within ${timeoutMs} ms (timeouts.countTokensMs)`, {
        retryable: false,
      }),
    );
  }, timeoutMs);
  const started = performance.now();
  const retryBy = started + timeoutMs;
  try {
    const count = await counter.count({
      request: { ...request, messages: repaired.messages, stream: false },
      clientApi: format.id,
      clientBody: raw,
      clientHeaders: ctx.req.headers,
      ...(forwardsClientQuery(format, provider) ? { clientQuery: ctx.query } : {}),
      post: async (url, headers, body) => {
        const answer = await state.upstream.postWhole({
          url,
          headers,
          body: JSON.stringify(body),
          cancel: deadline,
          retryBy,
          requestId: ctx.requestId,
        });
        try {
          return JSON.parse(answer.text) as unknown;
        } catch {
          throw new UpstreamError("api_error", `${counter.endpoint} answered with a body that is not JSON`, {
            retryable: false,
          });
        }
      },
    });
    if (count === undefined) ctx.log.tokenCountError = `${counter.endpoint} answered without a count`;
    return count;
  } catch (error) {
    // The client left: nothing is answered, estimated or not.
    if (ctx.clientGone.aborted) throw error;
    ctx.log.tokenCountError = `${counter.endpoint}: ${(error as Error).message}`.slice(0, 500);
    return undefined;
  } finally {
    clearTimeout(timer);
    stopFollowing();
    ctx.log.upstreamMs = Math.round((performance.now() - started) * 100) / 100;
  }
}
