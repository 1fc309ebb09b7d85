import { type ConversationResponse, UpstreamError } from "../../core/index.js";
import type { Context } from "../http/context.js";
import { formatLossyHeader, responseLossyEntries } from "../lossy-header.js";
import type { GatewayState } from "../state.js";
import { compactedAnswer } from "./compaction.js";
import { appendCapped, checkAnswer, checkAnswerDepth, type Exchange, withInputEstimate } from "./exchange.js";
import { encodeOptions } from "./plan.js";
import { boundAnswer } from "./reasoning-binding.js";
import { recordUsage } from "./record-usage.js";

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
  const target = provider.connection.target(ctx.req.headers, false, exchange.query, exchange.upstreamModel);
  const response = await state.upstream.postWhole({
    // the provider's own compaction endpoint, for a client's call to its API's
    url: exchange.plan.url ?? target.url,
    headers: target.headers,
    body: exchange.bodyText,
    cancel: ctx.clientGone,
    requestId: ctx.requestId,
  });
  recordUpstream(ctx, state, exchange, response.headersMs, response.attempts);
  const text = response.text;
  exchange.trace.timings.upstreamBodyMs = performance.now() - ctx.startedAt;
  exchange.trace.upstreamResponse = appendCapped("", text, state.config.traces.maxBodyBytes);
  const json = parseObject(text);
  checkAnswer(provider.adapter, json, state.secrets);
  const converted = provider.connection.decodeResponse(json, request.core);
  const compaction = exchange.plan.compaction;
  const answer = boundAnswer(converted.value, provider.config.name, provider.binding);
  const decoded = compaction === undefined ? answer : compactedAnswer(answer, compaction);
  const core: ConversationResponse = { ...decoded, model: request.clientModel };
  core.usage = { ...core.usage, ...withInputEstimate(core.usage, exchange) } as ConversationResponse["usage"];

  let body: unknown;
  const responseLossy = [...converted.lossy];
  const passthrough = exchange.passthrough;
  if (passthrough !== undefined) {
    // Same API both sides: the upstream's answer goes back as it came; among several providers of the API, its
    // reasoning in envelopes naming the provider and the key behind it, as a stream's (`bindingDecoder`).
    const owner = provider.connection.signatureOwner;
    body = passthrough.response(json, {
      clientModel: request.clientModel,
      ...(owner === undefined ? {} : { signatureOwner: owner, binding: provider.binding }),
      ...(request.answerId === undefined ? {} : { answerId: request.answerId }),
    });
  } else {
    const encoded = request.format.client.encodeResponse(core, encodeOptions(request));
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
  recordUsage(ctx, state, exchange, core.usage);
  if (beforeSend !== undefined) await beforeSend(core);
  ctx.res.writeHead(200, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(bodyText),
  });
  ctx.res.end(bodyText);
  return core;
}

/** An upstream's whole answer: a JSON object, else a 502 saying what came instead. */
function parseObject(text: string): Record<string, unknown> {
  checkAnswerDepth(text);
  let json: unknown;
  let problem = "a body that is not JSON";
  try {
    json = JSON.parse(text);
    problem = "JSON that is not an object";
  } catch {
    json = undefined;
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw new UpstreamError("api_error", `upstream answered with ${problem}`, {
      retryable: false,
      status: 502,
      body: text.slice(0, 500),
    });
  }
  return json as Record<string, unknown>;
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
