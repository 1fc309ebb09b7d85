import type { ConversationResponse, StreamEvent } from "../../core/index.js";
import type { StreamingMessageWriter } from "../../store/conversations/conversation-store.js";
import { type Accumulator, createAccumulator } from "../../stream/accumulate.js";
import type { Context } from "../http/context.js";
import type { GatewayState } from "../state.js";
import { appendCapped, arrivalMs, type Exchange, streamArrivals } from "./exchange.js";
import { encodeOptions } from "./plan.js";
import { recordUsage } from "./record-usage.js";
import { isContent } from "./stream-events.js";

/**
 * What watches a relayed stream without steering it: the trace's copy, the stored turn, the usage counters. The
 * relay hands each of them every event as the client gets it and every text as written, and nothing more.
 */
export interface StreamObserver {
  event?(event: StreamEvent): void;
  written?(text: string, at: number): void;
}

/** The first content's time and the answer's tokens, into the log line, the trace's timings and /metrics. */
export class UsageObserver implements StreamObserver {
  private firstContentSeen = false;

  constructor(
    private readonly ctx: Context,
    private readonly state: GatewayState,
    private readonly exchange: Exchange,
  ) {}

  event(event: StreamEvent): void {
    const provider = this.exchange.provider.config.name;
    if (event.type === "finish") {
      recordUsage(this.ctx, this.state, this.exchange, event.usage);
    } else if (!this.firstContentSeen && isContent(event)) {
      this.firstContentSeen = true;
      const elapsed = performance.now() - this.ctx.startedAt;
      this.ctx.log.firstTokenMs = Math.round(elapsed * 100) / 100;
      this.exchange.trace.timings.firstTokenMs = elapsed;
      this.state.metrics.firstToken.observe({ provider }, elapsed / 1000);
    }
  }
}

/**
 * The answer as the client got it, folded by the one reducer: for the trace's loss report and for an answer
 * kept for later turns.
 */
export class AnswerObserver implements StreamObserver {
  private accumulator: Accumulator | undefined = createAccumulator();

  event(event: StreamEvent): void {
    try {
      this.accumulator?.push(event);
    } catch {
      // An order the reducer refuses: the trace goes without its loss report, the stream goes on.
      this.accumulator = undefined;
    }
  }

  answer(): ConversationResponse | undefined {
    const answer = this.accumulator?.snapshot();
    this.accumulator = undefined;
    return answer;
  }
}

/** The client's side of a traced stream: its text, capped, and when each piece went out. */
export class TraceObserver implements StreamObserver {
  constructor(
    private readonly ctx: Context,
    private readonly state: GatewayState,
    private readonly exchange: Exchange,
  ) {}

  written(text: string, at: number): void {
    const trace = this.exchange.trace;
    const cap = this.state.config.traces.maxBodyBytes;
    if (trace.clientResponse.length >= cap) return;
    streamArrivals(this.exchange).clientResponse.push(trace.clientResponse.length, arrivalMs(this.ctx.startedAt, at));
    trace.clientResponse = appendCapped(trace.clientResponse, text, cap);
  }

  /** What the answer's format could not carry to the client. */
  answerLossy(answer: ConversationResponse): void {
    try {
      const request = this.exchange.request;
      this.exchange.trace.responseLossy = request.format.client.streamedAnswerLossy(answer, encodeOptions(request));
    } catch (error) {
      // The trace must never break the stream it describes.
      this.state.logger.warn({ requestId: this.ctx.requestId, err: (error as Error).message }, "answer not traced");
    }
  }
}

/**
 * A stateful turn's answer into the store as it streams. Events that come before the store's writer is known are
 * held, and given to it once it is; a stateless turn has no writer and drops them.
 */
export class StoreObserver implements StreamObserver {
  private writer: StreamingMessageWriter | undefined;
  private pending: StreamEvent[] | undefined = [];

  event(event: StreamEvent): void {
    if (this.writer !== undefined) this.writer.push(event);
    else this.pending?.push(event);
  }

  attach(writer: StreamingMessageWriter | undefined): void {
    this.writer = writer;
    const pending = this.pending ?? [];
    this.pending = undefined;
    if (writer !== undefined) for (const event of pending) writer.push(event);
  }

  /**
   * Completes the stored answer when the stream ended whole, else leaves it marked incomplete. Resolves to the
   * failure when the store could not keep it (the client must be told), undefined when it was kept or there was
   * nothing to keep.
   */
  async close(whole: boolean): Promise<Error | undefined> {
    const writer = this.writer;
    this.writer = undefined;
    this.pending = undefined;
    if (writer === undefined) return undefined;
    try {
      if (whole) await writer.complete();
      else await writer.abort();
      return undefined;
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }
}
