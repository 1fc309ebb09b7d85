import type { StreamError, StreamEvent } from "../../core/index.js";
import { isParleyError, UpstreamError } from "../../core/index.js";
import type { StreamingMessageWriter } from "../../store/types.js";
import { Cancellation, redactSecrets, upstreamErrorForFailure } from "../../upstream/index.js";
import type { Context } from "../http/context.js";
import type { GatewayState, OpenStream } from "../state.js";
import { recordUpstream } from "./answer-once.js";
import { type ClientStreamEncoder, clientStreamEncoder } from "./client-stream.js";
import { createAnthropicStreamDecoder, createOpenAIStreamDecoder } from "./codecs.js";
import {
  appendCapped,
  checkOpenAIAnswer,
  decodeOptionsFor,
  type Exchange,
  streamErrorToUpstreamError,
  withInputEstimate,
} from "./exchange.js";
import { upstreamEventBatches } from "./upstream-events.js";

const HOLD_EXPIRED = Symbol("hold-expired");

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
  const target = provider.headers(ctx.req.headers, true, exchange.query);
  const tracing = state.config.traces.enabled && state.store !== undefined;
  let attemptsUsed = 0;
  try {
    for (;;) {
      const response = await state.upstream.post({
        url: target.url,
        headers: target.headers,
        body: exchange.bodyText,
        cancel: upstreamAbort,
        requestId: ctx.requestId,
        // Attempts in all: a stream that broke before any content spent some already.
        maxAttempts: Math.max(1, state.config.retries.maxAttempts - attemptsUsed),
      });
      attemptsUsed += response.attempts;
      recordUpstream(ctx, state, exchange, response.headersMs, attemptsUsed);
      let body: AsyncIterable<Uint8Array> = response.body;
      if (isJson(response.headers["content-type"])) {
        // Some servers ignore `stream: true`; the whole answer is still an answer.
        const text = await response.body.text();
        if (provider.config.type !== "openai") {
          exchange.trace.upstreamResponse = appendCapped("", text, state.config.traces.maxBodyBytes);
          throw new UpstreamError(
            "api_error",
            "upstream answered a streaming request with a JSON body instead of an event stream",
            { retryable: false, status: 502, body: text.slice(0, 500) },
          );
        }
        ctx.log.upstreamIgnoredStream = true;
        body = completionAsStream(text, state.secrets);
      }
      exchange.trace.upstreamResponse = "";
      const relay = new StreamRelay(
        ctx,
        state,
        exchange,
        clientStreamEncoder(request.format, {
          model: request.clientModel,
          includeUsage: request.includeUsage ?? false,
        }),
        headers,
        tracing,
      );
      const iterator = upstreamBatches(provider, exchange, body, tracing, state.config.traces.maxBodyBytes);
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
  traceCap: number,
): AsyncIterator<StreamEvent[]> {
  const decoder =
    provider.config.type === "openai"
      ? createOpenAIStreamDecoder(decodeOptionsFor(exchange))
      : createAnthropicStreamDecoder();
  const utf8 = new TextDecoder();
  const onChunk = tracing
    ? (chunk: Uint8Array) => {
        if (exchange.trace.upstreamResponse.length < traceCap) {
          exchange.trace.upstreamResponse = appendCapped(
            exchange.trace.upstreamResponse,
            utf8.decode(chunk, { stream: true }),
            traceCap,
          );
        }
      }
    : undefined;
  return upstreamEventBatches(body, decoder, onChunk);
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
  const open: OpenStream = { end: (reason) => relay.shutdown(reason, upstreamAbort) };
  state.openStreams.add(open);
  state.metrics.streamOpened();
  let writer: StreamingMessageWriter | undefined;
  try {
    await relay.hold(iterator);
    writer = await storeWriter();
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
    state.openStreams.delete(open);
    state.metrics.streamClosed();
    if (relay.committed && !relay.finished) upstreamAbort.abort(new Error("stream ended"));
    await relay.closeStore();
  }
  return false;
}

class StreamRelay {
  committed = false;
  finished = false;
  private sawFinish = false;
  private sawError = false;
  private lastWriteAt = performance.now();
  private pingTimer: NodeJS.Timeout | undefined;
  private store: StreamingMessageWriter | undefined;
  /** Events sent before the store's writer is known; dropped once it is (a stateless turn has none). */
  private pendingForStore: StreamEvent[] | undefined = [];
  private shutdownReason: string | undefined;
  private firstContentSeen = false;
  private startSent = false;

  get providerName(): string {
    return this.exchange.provider.config.name;
  }

  constructor(
    private readonly ctx: Context,
    private readonly state: GatewayState,
    private readonly exchange: Exchange,
    private readonly encoder: ClientStreamEncoder,
    private readonly headers: Record<string, string>,
    private readonly tracing: boolean,
  ) {}

  /** Reads until the first content, finish or error event (or the hold time passes), then sends the status. */
  async hold(iterator: AsyncIterator<StreamEvent[]>): Promise<void> {
    const held: StreamEvent[] = [];
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<typeof HOLD_EXPIRED>((resolve) => {
      timer = setTimeout(() => resolve(HOLD_EXPIRED), this.state.config.timeouts.firstEventHoldMs);
    });
    let next = iterator.next();
    try {
      while (true) {
        const result = await Promise.race([next, expired]);
        if (result === HOLD_EXPIRED) {
          // Keep the pending read: the pump continues from it.
          this.pendingNext = next;
          break;
        }
        if (result.done) break;
        let decisive = false;
        for (const event of result.value) {
          if (event.type === "error" && !held.some(isContent))
            throw streamErrorToUpstreamError(event.error, this.state.secrets);
          held.push(event);
          if (event.type !== "message-start") decisive = true;
        }
        if (decisive) break;
        next = iterator.next();
      }
    } finally {
      clearTimeout(timer);
    }
    this.commit();
    this.batch = "";
    for (const event of held) this.send(event);
    // The status line and message_start go out now, even from an upstream still silent when the hold time
    // ran out: ours carries the input estimate, and the upstream's own is skipped when it comes.
    if (!this.startSent) this.send({ type: "message-start", id: "", model: "" });
    this.flushBatch();
  }

  private pendingNext: Promise<IteratorResult<StreamEvent[]>> | undefined;

  attachStore(writer: StreamingMessageWriter | undefined): void {
    this.store = writer;
    const pending = this.pendingForStore ?? [];
    this.pendingForStore = undefined;
    if (writer !== undefined) for (const event of pending) writer.push(event);
  }

  async pump(iterator: AsyncIterator<StreamEvent[]>): Promise<void> {
    while (!this.sawError) {
      const result = await (this.pendingNext ?? iterator.next());
      this.pendingNext = undefined;
      if (result.done) break;
      // One socket write per upstream read, however many events it held.
      this.batch = "";
      for (const event of result.value) {
        this.send(event);
        if (this.sawError) break;
      }
      if (!this.flushBatch()) await this.drained();
    }
    if (!this.sawFinish && !this.sawError) {
      this.writeError({ type: "api_error", message: "upstream ended the stream before the answer was complete" });
    }
    // A stateful turn's answer is complete in the store before the client sees the end of the stream, so
    // that a next turn sent at once finds it.
    this.stopPings();
    await this.closeStore();
    this.end();
  }

  private commit(): void {
    this.committed = true;
    this.ctx.res.writeHead(200, {
      ...this.headers,
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    const interval = this.state.config.timeouts.pingIntervalMs;
    if (interval > 0) {
      this.pingTimer = setInterval(() => {
        if (performance.now() - this.lastWriteAt >= interval * 0.9 && this.ctx.res.writableNeedDrain === false) {
          this.write(this.encoder.ping());
        }
      }, interval);
      this.pingTimer.unref();
    }
  }

  /** Converts, records and writes one event; false when the client's buffer is full. */
  private send(event: StreamEvent): boolean {
    if (event.type === "message-start") {
      if (this.startSent) return true;
      this.startSent = true;
    }
    const patched = this.patch(event);
    if (patched.type === "error") {
      this.writeError(patched.error);
      return true;
    }
    if (this.store) this.store.push(patched);
    else this.pendingForStore?.push(patched);
    if (patched.type === "finish" && this.exchange.conversationId !== undefined) this.tail = "";
    return this.write(this.encoder.encode(patched));
  }

  /** Stateful turns: the end of the stream, held back until the answer is stored (see `pump`). */
  private tail: string | undefined;

  /** While set, writes collect here and go out together in `flushBatch`. */
  private batch: string | undefined;

  private flushBatch(): boolean {
    const text = this.batch ?? "";
    this.batch = undefined;
    return this.write(text);
  }

  private patch(event: StreamEvent): StreamEvent {
    const { exchange, ctx, state } = this;
    switch (event.type) {
      case "message-start":
        return { ...event, model: exchange.request.clientModel, usage: withInputEstimate(event.usage, exchange) };
      case "finish": {
        this.sawFinish = true;
        const usage = { ...event.usage, ...withInputEstimate(event.usage, exchange) } as typeof event.usage;
        ctx.log.inputTokens = usage.inputTokens;
        ctx.log.outputTokens = usage.outputTokens;
        const provider = exchange.provider.config.name;
        state.metrics.tokens.inc({ direction: "input", provider }, usage.inputTokens);
        state.metrics.tokens.inc({ direction: "output", provider }, usage.outputTokens);
        return { ...event, usage };
      }
      default:
        if (!this.firstContentSeen && isContent(event)) {
          this.firstContentSeen = true;
          const elapsed = performance.now() - ctx.startedAt;
          ctx.log.firstTokenMs = Math.round(elapsed * 100) / 100;
          exchange.trace.timings.firstTokenMs = elapsed;
          state.metrics.firstToken.observe({ provider: exchange.provider.config.name }, elapsed / 1000);
        }
        return event;
    }
  }

  private write(text: string): boolean {
    if (this.batch !== undefined) {
      this.batch += text;
      return true;
    }
    if (this.tail !== undefined) {
      this.tail += text;
      return true;
    }
    if (text === "" || this.ctx.res.destroyed) return true;
    this.lastWriteAt = performance.now();
    if (this.tracing) {
      this.exchange.trace.clientResponse = appendCapped(
        this.exchange.trace.clientResponse,
        text,
        this.state.config.traces.maxBodyBytes,
      );
    }
    return this.ctx.res.write(text);
  }

  private drained(): Promise<void> {
    const res = this.ctx.res;
    return new Promise((resolve) => {
      const done = () => {
        res.off("drain", done);
        res.off("close", done);
        resolve();
      };
      res.on("drain", done);
      res.on("close", done);
    });
  }

  private writeError(error: StreamError): void {
    this.sawError = true;
    this.ctx.log.errorType = error.type;
    this.state.metrics.errors.inc({ type: error.type });
    // An upstream's error text can echo what it was sent, keys included: none reaches the client.
    this.write(this.encoder.error({ ...error, message: redactSecrets(error.message, this.state.secrets) }));
  }

  /** An exception after the status line: an error event, unless the client is gone. */
  fail(error: unknown): void {
    if (this.ctx.clientGone.aborted) {
      this.ctx.log.errorType = "client_disconnected";
      return;
    }
    if (this.shutdownReason !== undefined) {
      this.writeError({ type: "overloaded_error", message: this.shutdownReason });
    } else {
      const mapped: UpstreamError | import("../../core/index.js").ParleyError = isParleyError(error)
        ? error
        : upstreamErrorForFailure(error);
      if (!isParleyError(error))
        this.state.logger.warn({ requestId: this.ctx.requestId, err: mapped.message }, "stream failed");
      this.writeError({ type: mapped.type, message: mapped.message, status: mapped.status });
    }
    this.end();
  }

  /** Graceful shutdown ran out of time: stop the upstream and close the stream with an error event. */
  shutdown(reason: string, upstreamAbort: Cancellation): void {
    this.shutdownReason = reason;
    upstreamAbort.abort(new Error(reason));
  }

  private end(): void {
    if (this.finished) return;
    this.finished = true;
    this.flushBatch();
    const tail = this.tail ?? "";
    this.tail = undefined;
    this.write(tail + this.encoder.end());
    this.ctx.res.end();
  }

  stopPings(): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
  }

  async closeStore(): Promise<void> {
    const writer = this.store;
    if (writer === undefined) return;
    this.store = undefined;
    try {
      if (this.sawFinish && !this.sawError && !this.ctx.clientGone.aborted) await writer.complete();
      else await writer.abort();
    } catch (error) {
      this.state.logger.error({ requestId: this.ctx.requestId, err: (error as Error).message }, "store write failed");
    }
  }
}

function isContent(event: StreamEvent): boolean {
  return event.type !== "message-start" && event.type !== "finish" && event.type !== "error";
}

/**
 * A Chat Completions answer (or error) in one JSON body, as the one-chunk event stream it is equivalent to:
 * the message becomes the delta, so that the same decoder reads it as it reads the non-streamed codec's input.
 */
async function* completionAsStream(text: string, secrets: readonly string[]): AsyncGenerator<Uint8Array> {
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
  checkOpenAIAnswer(parsed, secrets);
  const { choices, ...rest } = parsed as { choices?: Array<Record<string, unknown>> } & Record<string, unknown>;
  const chunk = {
    ...rest,
    choices: (Array.isArray(choices) ? choices : []).map(({ message, ...choice }) => ({ ...choice, delta: message })),
  };
  yield new TextEncoder().encode(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
}

function isJson(contentType: string | string[] | undefined): boolean {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  return value !== undefined && /^application\/(.+\+)?json/i.test(value.trim());
}
