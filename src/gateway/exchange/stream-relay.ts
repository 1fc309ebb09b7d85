import type { ConversationResponse, StreamError, StreamEvent } from "../../core/index.js";
import { isParleyError, type ParleyError, type UpstreamError } from "../../core/index.js";
import type { ClientStreamEncoder } from "../../formats/adapter.js";
import type { StreamingMessageWriter } from "../../store/types.js";
import { type Accumulator, createAccumulator } from "../../stream/accumulate.js";
import { type Cancellation, redactSecrets, upstreamErrorForFailure } from "../../upstream/index.js";
import type { Context } from "../http/context.js";
import type { GatewayState, OpenStream } from "../state.js";
import {
  appendCapped,
  arrivalMs,
  type Exchange,
  streamArrivals,
  streamErrorToUpstreamError,
  withInputEstimate,
} from "./exchange.js";
import { encodeOptions } from "./plan.js";

const HOLD_EXPIRED = Symbol("hold-expired");

/**
 * One streamed answer on its way to the client: holds the status line until the upstream's first content
 * (or error), then converts, records and writes each upstream read's events in one write, with pings while
 * the upstream is silent and backpressure from a slow client.
 */
export class StreamRelay {
  committed = false;
  finished = false;
  private sawFinish = false;
  private sawError = false;
  private lastWriteAt = performance.now();
  private pingTimer: NodeJS.Timeout | undefined;
  private store: StreamingMessageWriter | undefined;
  /**
   * The answer as the client gets it: with traces on, to record what its format could not carry; for an answer
   * kept for later turns, to keep.
   */
  private answer: Accumulator | undefined;
  /** Events sent before the store's writer is known; dropped once it is (a stateless turn has none). */
  private pendingForStore: StreamEvent[] | undefined = [];
  private shutdownReason: string | undefined;
  private firstContentSeen = false;
  private startSent = false;
  /** When the status line goes out at the latest, whether or not the upstream has said anything. */
  holdUntil = Number.POSITIVE_INFINITY;
  private registration: OpenStream | undefined;

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
  ) {
    if (tracing || exchange.keepAnswer !== undefined) this.answer = createAccumulator();
  }

  /** Counts the stream as open (metrics, and graceful shutdown ends it); once, however often it is called. */
  register(upstreamAbort: Cancellation): void {
    if (this.registration !== undefined) return;
    this.registration = { end: (reason) => this.shutdown(reason, upstreamAbort) };
    this.state.openStreams.add(this.registration);
    this.state.metrics.streamOpened();
  }

  unregister(): void {
    if (this.registration === undefined) return;
    this.state.openStreams.delete(this.registration);
    this.registration = undefined;
    this.state.metrics.streamClosed();
  }

  /**
   * The upstream has not even sent its headers when the hold time is over (a long prefill on a local server): the
   * status line, Parley's own `message_start` and then pings go out now, so that a client which gives up after
   * minutes without a first byte (and sends the request again) keeps waiting. The upstream's events follow as usual.
   */
  openEarly(upstreamAbort: Cancellation): void {
    this.register(upstreamAbort);
    this.commit();
    this.batch = "";
    this.send({ type: "message-start", id: "", model: "" });
    this.flushBatch();
  }

  /** The upstream failed after `openEarly`: the failure is an error event. */
  failEarly(error: unknown): void {
    this.fail(error);
    this.stopPings();
    this.unregister();
  }

  /** Reads until the first content, finish or error event (or the hold time passes), then sends the status. */
  async hold(iterator: AsyncIterator<StreamEvent[]>): Promise<void> {
    // Opened early: the events go out as they come.
    if (this.committed) return;
    const held: StreamEvent[] = [];
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<typeof HOLD_EXPIRED>((resolve) => {
      timer = setTimeout(() => resolve(HOLD_EXPIRED), Math.max(0, this.holdUntil - performance.now()));
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
    // The answer as the client got it, folded once: for its trace and for keeping it.
    const answer = this.answer?.snapshot();
    this.answer = undefined;
    if (answer !== undefined && this.tracing) this.recordAnswerLossy(answer);
    // A stateful turn's answer is complete in the store before the client sees the end of the stream, so
    // that a next turn sent at once finds it.
    this.stopPings();
    await this.closeStore();
    if (answer !== undefined && this.sawFinish && !this.sawError) await this.keepAnswer(answer);
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
    if (this.answer !== undefined) this.traceEvent(patched);
    if (this.store) this.store.push(patched);
    else this.pendingForStore?.push(patched);
    if (
      patched.type === "finish" &&
      (this.exchange.conversationId !== undefined || this.exchange.keepAnswer !== undefined)
    )
      this.tail = "";
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
    if (this.tracing && this.exchange.trace.clientResponse.length < this.state.config.traces.maxBodyBytes) {
      streamArrivals(this.exchange).clientResponse.push(
        this.exchange.trace.clientResponse.length,
        arrivalMs(this.ctx.startedAt, this.lastWriteAt),
      );
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

  private traceEvent(event: StreamEvent): void {
    try {
      this.answer?.push(event);
    } catch {
      // An order the accumulator refuses: the trace goes without its loss report, the stream goes on.
      this.answer = undefined;
    }
  }

  private async keepAnswer(answer: ConversationResponse): Promise<void> {
    try {
      await this.exchange.keepAnswer?.(answer);
    } catch (error) {
      this.state.logger.error({ requestId: this.ctx.requestId, err: (error as Error).message }, "answer not kept");
    }
  }

  private recordAnswerLossy(answer: ConversationResponse): void {
    try {
      const request = this.exchange.request;
      this.exchange.trace.responseLossy = request.format.client.streamedAnswerLossy(answer, encodeOptions(request));
    } catch (error) {
      // The trace must never break the stream it describes.
      this.state.logger.warn({ requestId: this.ctx.requestId, err: (error as Error).message }, "answer not traced");
    }
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
      const mapped: UpstreamError | ParleyError = isParleyError(error) ? error : upstreamErrorForFailure(error);
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

export function isContent(event: StreamEvent): boolean {
  return event.type !== "message-start" && event.type !== "finish" && event.type !== "error";
}
