import type { StreamEvent } from "../../core/index.js";
import { isParleyError, UpstreamError } from "../../core/index.js";
import type { FormatAdapter } from "../../formats/adapter.js";
import type { StreamingMessageWriter } from "../../store/conversations/conversation-store.js";
import { Cancellation, ERROR_BODY_BYTES, redactSecrets, upstreamErrorForFailure } from "../../upstream/index.js";
import type { Context } from "../http/context.js";
import type { GatewayState } from "../state.js";
import { recordUpstream } from "./answer-once.js";
import { compactedEvents } from "./compaction.js";
import { appendCapped, arrivalMs, checkAnswer, checkAnswerDepth, type Exchange, streamArrivals } from "./exchange.js";
import { encodeOptions } from "./plan.js";
import { bindingDecoder } from "./reasoning-binding.js";
import { StreamRelay } from "./stream-relay.js";
import { upstreamEventBatches } from "./upstream-events.js";

/**
 * A streamed answer. The status line waits for the upstream's first content (or error): an upstream that
 * fails before saying anything gets a real error status, not "200 then error". After that, errors are
 * `error` events; a silent upstream gets pings; a slow client pauses the upstream read (backpressure); a
 * client that leaves aborts the upstream request at once.
 */
export async function streamAnswer(
  ctx: Context,
  state: GatewayState,
  exchange: Exchange,
  headers: Record<string, string>,
  storeWriter: () => Promise<StreamingMessageWriter | undefined>,
): Promise<void> {
  const { provider, request } = exchange;
  // Cancelled when the client leaves, and on its own when the stream ends or the gateway shuts down.
  const upstreamAbort = new Cancellation();
  const stopFollowingClient = ctx.clientGone.onAbort((reason) => upstreamAbort.abort(reason));
  const target = provider.connection.target(ctx.req.headers, true, exchange.query, exchange.upstreamModel);
  const tracing = exchange.tracing;
  const holdUntil = performance.now() + state.config.timeouts.firstEventHoldMs;
  let attemptsUsed = 0;
  try {
    for (;;) {
      const relay = new StreamRelay(
        ctx,
        state,
        exchange,
        request.format.client.streamEncoder({
          ...encodeOptions(request),
          // Same API, one provider of it: its reasoning reaches the client as it made it.
          ...(exchange.passthrough !== undefined && provider.connection.signatureOwner === undefined
            ? { reasoningAsMade: true }
            : {}),
          model: request.clientModel,
          includeUsage: request.includeUsage ?? false,
        }),
        headers,
        tracing,
      );
      relay.holdUntil = holdUntil;
      const posted = state.upstream.post({
        url: target.url,
        headers: target.headers,
        body: exchange.bodyText,
        cancel: upstreamAbort,
        requestId: ctx.requestId,
        // Attempts in all: a stream that broke before any content spent some already.
        maxAttempts: Math.max(1, state.config.retries.maxAttempts - attemptsUsed),
        // A rate limit waited past the hold would reach the client as 200 and an error event: it gets the 429 now.
        retryBy: holdUntil,
      });
      let response: Awaited<typeof posted>;
      try {
        response = await headersOrOpenEarly(posted, relay, upstreamAbort);
      } catch (error) {
        if (!relay.committed) throw error;
        relay.failEarly(error);
        return;
      }
      attemptsUsed += response.attempts;
      recordUpstream(ctx, state, exchange, response.headersMs, attemptsUsed);
      let body: AsyncIterable<Uint8Array> = response.body;
      const markup = markupType(response.headers["content-type"]);
      if (markup !== undefined) {
        // A login page or a proxy's error page sent with 200: no event will come of it, and trying again will not help.
        const text = await response.body.text(ERROR_BODY_BYTES);
        exchange.trace.upstreamResponse = appendCapped("", text, state.config.traces.maxBodyBytes);
        throw new UpstreamError(
          "api_error",
          `upstream answered a streaming request with ${markup}, not an event stream`,
          { retryable: false, status: 502, body: redactSecrets(text.slice(0, 500), state.secrets) },
        );
      }
      if (isJson(response.headers["content-type"])) {
        // Some servers ignore `stream: true`; the whole answer is still an answer.
        const text = await response.body.text();
        const asStream = provider.connection.wholeAnswerAsStream;
        if (asStream === undefined) {
          exchange.trace.upstreamResponse = appendCapped("", text, state.config.traces.maxBodyBytes);
          throw new UpstreamError(
            "api_error",
            "upstream answered a streaming request with a JSON body instead of an event stream",
            { retryable: false, status: 502, body: text.slice(0, 500) },
          );
        }
        ctx.log.upstreamIgnoredStream = true;
        body = wholeAnswerAsStream(provider.adapter, asStream, text, state.secrets);
      }
      exchange.trace.upstreamResponse = "";
      if (tracing) streamArrivals(exchange).upstreamResponse.length = 0;
      const iterator = upstreamBatches(provider, exchange, body, tracing, state.config, ctx.startedAt);
      const retry = await relayStream(ctx, state, relay, iterator, upstreamAbort, storeWriter, attemptsUsed);
      if (!retry) break;
    }
  } finally {
    stopFollowingClient();
  }
}

/** The upstream body decoded to canonical event batches (and copied, capped, into the trace). */
function upstreamBatches(
  provider: Exchange["provider"],
  exchange: Exchange,
  body: AsyncIterable<Uint8Array>,
  tracing: boolean,
  config: GatewayState["config"],
  startedAt: number,
): AsyncIterator<StreamEvent[]> {
  const traceCap = config.traces.maxBodyBytes;
  const decoder = bindingDecoder(
    provider.connection.streamDecoder(exchange.request.core),
    provider.config.name,
    provider.binding,
  );
  const arrivals = tracing ? streamArrivals(exchange).upstreamResponse : undefined;
  const onChunk = tracing
    ? (text: string) => {
        if (exchange.trace.upstreamResponse.length < traceCap) {
          arrivals!.push(exchange.trace.upstreamResponse.length, arrivalMs(startedAt));
          exchange.trace.upstreamResponse = appendCapped(exchange.trace.upstreamResponse, text, traceCap);
        }
      }
    : undefined;
  const batches = upstreamEventBatches(body, decoder, onChunk, config.limits.maxEventBytes, config.timeouts.idleMs);
  const compaction = exchange.plan.compaction;
  return compaction === undefined ? batches : compactedEvents(batches, compaction);
}

/**
 * Holds, commits and pumps one upstream response. Returns true when it failed before anything reached the
 * client and the failure is worth another attempt (a dropped connection, a 5xx-like error event).
 */
async function relayStream(
  ctx: Context,
  state: GatewayState,
  relay: StreamRelay,
  iterator: AsyncIterator<StreamEvent[]>,
  upstreamAbort: Cancellation,
  storeWriter: () => Promise<StreamingMessageWriter | undefined>,
  attemptsUsed: number,
): Promise<boolean> {
  relay.register(upstreamAbort);
  let writer: StreamingMessageWriter | undefined;
  try {
    await relay.hold(iterator, async () => {
      writer = await storeWriter();
    });
    relay.attachStore(writer);
    await relay.pump(iterator);
  } catch (error) {
    if (relay.committed) {
      relay.fail(error);
      return false;
    }
    await iterator.return?.();
    if (ctx.clientGone.aborted) throw error;
    const mapped = isParleyError(error) ? error : upstreamErrorForFailure(error);
    const retryable = mapped instanceof UpstreamError && mapped.retryable;
    if (retryable && attemptsUsed < state.config.retries.maxAttempts) {
      state.metrics.retries.inc({ provider: relay.providerName });
      state.logger.warn({ requestId: ctx.requestId, err: mapped.message }, "retrying upstream stream");
      return true;
    }
    throw mapped;
  } finally {
    relay.stopPings();
    relay.unregister();
    if (relay.committed && !relay.finished) upstreamAbort.abort(new Error("stream ended"));
    await relay.closeStore();
  }
  return false;
}

/**
 * A whole answer (or error) in one JSON body, as the event stream its API says it stands for, so that the
 * stream decoder reads it as it reads a stream.
 */
async function* wholeAnswerAsStream(
  adapter: FormatAdapter,
  asStream: (body: Record<string, unknown>) => string,
  text: string,
  secrets: readonly string[],
): AsyncGenerator<Uint8Array> {
  checkAnswerDepth(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new UpstreamError("api_error", "upstream answered a streaming request with a body that is not JSON", {
      retryable: false,
      status: 502,
      body: text.slice(0, 500),
    });
  }
  const body = parsed as Record<string, unknown>;
  checkAnswer(adapter, body, secrets);
  yield new TextEncoder().encode(asStream(body));
}

/**
 * The upstream's response headers; when they take longer than the relay's hold, the stream opens first (status,
 * `message_start`, pings) and the headers are awaited behind it. A client that leaves cancels the request
 * (`upstreamAbort` follows it), so a one-slot local server is not left prefilling for nobody.
 */
async function headersOrOpenEarly<T>(posted: Promise<T>, relay: StreamRelay, upstreamAbort: Cancellation): Promise<T> {
  const wait = relay.holdUntil - performance.now();
  let timer: NodeJS.Timeout | undefined;
  const held = new Promise<typeof HEADERS_LATE>((resolve) => {
    timer = setTimeout(() => resolve(HEADERS_LATE), Math.max(0, wait));
  });
  try {
    const first = await Promise.race([posted, held]);
    if (first !== HEADERS_LATE) return first;
  } finally {
    clearTimeout(timer);
  }
  relay.openEarly(upstreamAbort);
  return posted;
}

const HEADERS_LATE = Symbol("headers-late");

/** A markup content type (`text/html`, `application/xhtml+xml`, `text/xml`): a page, never an answer. */
function markupType(contentType: string | string[] | undefined): string | undefined {
  const value = (Array.isArray(contentType) ? contentType[0] : contentType)?.split(";")[0]?.trim().toLowerCase();
  return value !== undefined && /^(text\/html|text\/xml|application\/xhtml\+xml|application\/xml)$/.test(value)
    ? value
    : undefined;
}

function isJson(contentType: string | string[] | undefined): boolean {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  return value !== undefined && /^application\/(.+\+)?json/i.test(value.trim());
}
