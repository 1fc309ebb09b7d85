import { type ConversationResponse, type LossyEntry, UpstreamError } from "../../core/index.js";
import type { AnthropicMessageResponse } from "../../formats/anthropic/index.js";
import type { OpenAIChatResponse } from "../../formats/openai-chat/index.js";
import type { Context } from "../http/context.js";
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from "../http/json-depth.js";
import { formatLossyHeader, responseLossyEntries } from "../lossy-header.js";
import type { GatewayState } from "../state.js";
import {
  anthropicResponseToCore,
  coreToAnthropicResponse,
  coreToOpenAIResponse,
  openaiResponseToCore,
} from "./codecs.js";
import { appendCapped, checkOpenAIAnswer, decodeOptionsFor, type Exchange, withInputEstimate } from "./exchange.js";

/**
 * A non-streamed answer: one upstream call, one conversion, one write. `beforeSend` (a stateful turn storing the
 * answer) runs before the client is answered, so that a next turn sent at once finds it; if it fails, the client
 * gets that error instead of an answer the conversation does not hold.
 */
export async function answerOnce(
  ctx: Context,
  state: GatewayState,
  exchange: Exchange,
  headers: Record<string, string>,
  beforeSend?: (answer: ConversationResponse) => Promise<void>,
): Promise<ConversationResponse> {
  const { provider, request } = exchange;
  const target = provider.headers(ctx.req.headers, false, exchange.query);
  const response = await state.upstream.postWhole({
    url: target.url,
    headers: target.headers,
    body: exchange.bodyText,
    cancel: ctx.clientGone,
    requestId: ctx.requestId,
  });
  recordUpstream(ctx, state, exchange, response.headersMs, response.attempts);
  const text = response.text;
  exchange.trace.timings.upstreamBodyMs = performance.now() - ctx.startedAt;
  exchange.trace.upstreamResponse = appendCapped("", text, state.config.traces.maxBodyBytes);
  if (jsonNestsDeeperThan(text)) {
    throw new UpstreamError("api_error", `upstream answered with JSON nested deeper than ${MAX_JSON_DEPTH} levels`, {
      retryable: false,
      status: 502,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UpstreamError("api_error", "upstream answered with a body that is not JSON", {
      retryable: false,
      status: 502,
      body: text.slice(0, 500),
    });
  }
  if (provider.config.type === "openai") checkOpenAIAnswer(json, state.secrets);
  const converted =
    provider.config.type === "openai"
      ? openaiResponseToCore(json as OpenAIChatResponse, decodeOptionsFor(exchange))
      : { value: anthropicResponseToCore(json as AnthropicMessageResponse), lossy: [] as LossyEntry[] };
  const core: ConversationResponse = { ...converted.value, model: request.clientModel };
  core.usage = { ...core.usage, ...withInputEstimate(core.usage, exchange) } as ConversationResponse["usage"];

  let body: unknown;
  const responseLossy = [...converted.lossy];
  if (
    request.format === "anthropic" &&
    provider.config.type === "anthropic" &&
    json !== null &&
    typeof json === "object"
  ) {
    // Same API both sides: the upstream's answer goes back as it came, only the model named as the client asked.
    body = { ...(json as Record<string, unknown>), model: request.clientModel };
  } else {
    const encoded =
      request.format === "anthropic"
        ? coreToAnthropicResponse(core)
        : coreToOpenAIResponse(core, { reasoning: "reasoning_content" });
    body = encoded.value;
    responseLossy.push(...encoded.lossy);
  }
  exchange.trace.responseLossy = responseLossy;
  // The status line has not gone out yet: what the answer's conversion could not carry joins the request's.
  if (responseLossy.length > 0) {
    const header = formatLossyHeader([...exchange.lossy, ...responseLossyEntries(responseLossy)]);
    if (header !== undefined) headers = { ...headers, "x-parley-lossy": header };
  }
  const bodyText = JSON.stringify(body);
  exchange.trace.clientResponse = appendCapped("", bodyText, state.config.traces.maxBodyBytes);
  ctx.log.inputTokens = core.usage.inputTokens;
  ctx.log.outputTokens = core.usage.outputTokens;
  state.metrics.tokens.inc({ direction: "input", provider: provider.config.name }, core.usage.inputTokens);
  state.metrics.tokens.inc({ direction: "output", provider: provider.config.name }, core.usage.outputTokens);
  if (beforeSend !== undefined) await beforeSend(core);
  ctx.res.writeHead(200, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(bodyText),
  });
  ctx.res.end(bodyText);
  return core;
}

export function recordUpstream(
  ctx: Context,
  state: GatewayState,
  exchange: Exchange,
  headersMs: number,
  attempts: number,
): void {
  ctx.log.upstreamMs = Math.round(headersMs * 100) / 100;
  ctx.log.attempts = attempts;
  exchange.trace.timings.upstreamHeadersMs = headersMs;
  state.metrics.upstreamLatency.observe({ provider: exchange.provider.config.name }, headersMs / 1000);
  if (attempts > 1) state.metrics.retries.inc({ provider: exchange.provider.config.name }, attempts - 1);
}
