import type { ConversationResponse, StreamError, StreamEvent } from "../../core/index.js";
import {
  isErrorType,
  isParleyError,
  type ParleyError,
  statusForErrorType,
  type UpstreamError,
} from "../../core/index.js";
import type { ClientStreamEncoder } from "../../formats/adapter.js";
import type { StreamingMessageWriter } from "../../store/conversations/conversation-store.js";
import { type Cancellation, redactSecrets, upstreamErrorForFailure } from "../../upstream/index.js";
import type { Context } from "../http/context.js";
import type { GatewayState, OpenStream } from "../state.js";
import { type Exchange, streamErrorToUpstreamError, withInputEstimate } from "./exchange.js";
import { isContent } from "./stream-events.js";
import {
  AnswerObserver,
  StoreObserver,
  type StreamObserver,
  TraceObserver,
  UsageObserver,
} from "./stream-observers.js";

export { isContent } from "./stream-events.js";

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
  private shutdownReason: string | undefined;
  private startSent = false;
  // The side jobs, each watching what the client gets: usage and timings, the stored turn, the answer (for the
  // trace's loss report and for keeping it), the trace's copy of the client's side.
  private readonly store = new StoreObserver();
  private readonly answer: AnswerObserver | undefined;
  private readonly trace: TraceObserver | undefined;
  private readonly observers: StreamObserver[];
  private readonly writeObservers: StreamObserver[];
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
    tracing: boolean,
  ) {
    if (tracing || exchange.keepAnswer !== undefined) this.answer = new AnswerObserver();
    if (tracing) this.trace = new TraceObserver(ctx, state, exchange);
    this.observers = [new UsageObserver(ctx, state, exchange), this.store];
    if (this.answer !== undefined) this.observers.push(this.answer);
    this.writeObservers = this.trace === undefined ? [] : [this.trace];
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

  /**
   * Reads until the first content, finish or error event (or the hold time passes), then runs `beforeStatus` (the
   * stored turn's start: a store that fails it fails the request with its own status) and sends the status.
   */
  async hold(iterator: AsyncIterator<StreamEvent[]>, beforeStatus: () => Promise<void>): Promise<void> {
    // Opened early: the events go out as they come.
    if (this.committed) return beforeStatus();
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
    await beforeStatus();
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
    this.store.attach(writer);
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
    this.stopPings();
    await this.settle();
    this.end();
  }

  /**
   * The answer's side jobs, before the client sees the end: its trace's loss report, then the stored turn and the
   * kept answer, complete before the stream's end (its finish, held back unencoded in `heldEnd`) goes out, so that a
   * next turn sent at once finds them. What could not be kept whole gets an error event in place of that end: the
   * client is never told a turn was kept when it was not.
   */
  private async settle(): Promise<void> {
    const answer = this.answer?.answer();
    if (answer !== undefined) this.trace?.answerLossy(answer);
    const whole = this.sawFinish && !this.sawError && !this.ctx.clientGone.aborted;
    let failure = await this.store.close(whole);
    if (failure === undefined && whole && answer !== undefined) failure = await this.keepAnswer(answer);
    const heldEnd = this.heldEnd ?? [];
    this.heldEnd = undefined;
    if (failure === undefined) {
      for (const event of heldEnd) this.write(this.encoder.encode(event));
      return;
    }
    this.state.logger.error({ requestId: this.ctx.requestId, err: failure.message }, "answer not kept");
    if (!whole) return;
    this.writeError({
      type: "api_error",
      message: `the answer was not kept whole in the store, so this turn did not complete: ${failure.message}`,
      status: 503,
    });
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
    for (const observer of this.observers) observer.event?.(patched);
    if (this.heldEnd !== undefined) {
      this.heldEnd.push(patched);
      return true;
    }
    if (
      patched.type === "finish" &&
      (this.exchange.conversationId !== undefined || this.exchange.keepAnswer !== undefined)
    ) {
      this.heldEnd = [patched];
      return true;
    }
    return this.write(this.encoder.encode(patched));
  }

  /**
   * A kept turn's finish and anything after it, not yet encoded: they go out once the answer is kept, or an error
   * event goes in their place (see `settle`). Held as events, since an encoder that wrote its end takes no error.
   */
  private heldEnd: StreamEvent[] | undefined;

  /** While set, writes collect here and go out together in `flushBatch`. */
  private batch: string | undefined;

  private flushBatch(): boolean {
    const text = this.batch ?? "";
    this.batch = undefined;
    return this.write(text);
  }

  /** The event as the client gets it: its model, and the input estimate where the upstream counted nothing. */
  private patch(event: StreamEvent): StreamEvent {
    const { exchange } = this;
    if (event.type === "message-start")
      return { ...event, model: exchange.request.clientModel, usage: withInputEstimate(event.usage, exchange) };
    if (event.type !== "finish") return event;
    this.sawFinish = true;
    const usage = { ...event.usage, ...withInputEstimate(event.usage, exchange) } as typeof event.usage;
    return { ...event, usage };
  }

  private write(text: string): boolean {
    if (this.batch !== undefined) {
      this.batch += text;
      return true;
    }
    if (text === "" || this.ctx.res.destroyed) return true;
    this.lastWriteAt = performance.now();
    for (const observer of this.writeObservers) observer.written?.(text, this.lastWriteAt);
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

  /** Keeps a finished answer for later turns (the client's `store`); the failure, when it was not kept. */
  private async keepAnswer(answer: ConversationResponse): Promise<Error | undefined> {
    try {
      await this.exchange.keepAnswer?.(answer);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  private writeError(error: StreamError): void {
    this.sawError = true;
    // The status line said 200, but the exchange failed: its trace says how, so that it is found among failures.
    this.exchange.trace.status = error.status ?? statusForErrorType(isErrorType(error.type) ? error.type : "api_error");
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
    this.heldEnd = undefined;
    this.write(this.encoder.end());
    this.ctx.res.end();
  }

  stopPings(): void {
    if (this.pingTimer) clearInterval(this.pingTimer);
  }

  /** A stream that ended by an exception: the stored answer stays marked incomplete. */
  async closeStore(): Promise<void> {
    const failure = await this.store.close(false);
    if (failure !== undefined)
      this.state.logger.error({ requestId: this.ctx.requestId, err: failure.message }, "store write failed");
  }
}
