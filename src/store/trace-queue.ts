import type { TraceRecord, TraceRetentionPolicy, TraceWriterStats } from "./types.js";

/** Why `recordTrace` did not store a trace. */
export class TraceNotRecordedError extends Error {
  constructor(
    readonly reason: "queue_full" | "write_failed",
    message: string,
  ) {
    super(message);
    this.name = "TraceNotRecordedError";
  }
}

/** Where a batch of traces goes: a backend in this thread, or the SQLite writer's worker. */
export interface TraceSink {
  /** Per trace, undefined once stored, or why it was not. */
  write(traces: readonly TraceRecord[]): Promise<Array<string | undefined>>;
}

/** The retention a writer keeps: the given one, `maxBytes` defaulting to the backend's. */
export function writerRetention(
  given: TraceRetentionPolicy | false | undefined,
  maxBytes: number,
): TraceRetentionPolicy {
  return given === false ? {} : { maxBytes, ...given };
}

export interface TraceQueueLimits {
  /** Traces waiting or being written, at most. */
  maxTraces: number;
  /** Characters of body text waiting or being written, at most. */
  maxChars: number;
  /** Traces per batch. */
  batchTraces: number;
  /** How long the first trace of a batch waits for more. */
  delayMs: number;
}

export const DEFAULT_QUEUE_LIMITS: TraceQueueLimits = {
  maxTraces: 4_096,
  maxChars: 128 * 1024 * 1024,
  batchTraces: 256,
  delayMs: 100,
};

/** What a store's trace writer is given when it opens. */
export interface TraceWriterOptions {
  /**
   * Kept while writing: after every batch the oldest traces beyond `maxCount`, `maxBytes` (default: the
   * backend's) or `maxAgeMs` go. `false` keeps everything.
   */
  traceRetention?: TraceRetentionPolicy | false;
  /** Replaced by `[redacted]` wherever they appear in a trace (the gateway's client and upstream keys). */
  traceSecrets?: readonly string[];
  traceQueue?: Partial<TraceQueueLimits>;
}

interface Waiting {
  trace: TraceRecord;
  chars: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Between the request path and the trace writer: `enqueue` only appends (the strings are referenced, not
 * copied); batches go to the sink one at a time, off the request path. When the writer falls behind and the
 * queue is full, a trace is dropped and counted, never queued without bound.
 */
export class TraceQueue {
  private readonly limits: TraceQueueLimits;
  private waiting: Waiting[] = [];
  private queuedTraces = 0;
  private queuedChars = 0;
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly counts = { recorded: 0, dropped: 0, failed: 0 };

  constructor(
    private readonly sink: TraceSink,
    limits: Partial<TraceQueueLimits> = {},
  ) {
    this.limits = { ...DEFAULT_QUEUE_LIMITS, ...limits };
  }

  enqueue(trace: TraceRecord): Promise<void> {
    const chars = bodyChars(trace);
    if (
      this.closed ||
      this.queuedTraces + 1 > this.limits.maxTraces ||
      (this.queuedChars + chars > this.limits.maxChars && this.queuedTraces > 0)
    ) {
      this.counts.dropped++;
      return Promise.reject(
        new TraceNotRecordedError(
          "queue_full",
          this.closed ? "the store is closing" : "the trace writer is behind and its queue is full",
        ),
      );
    }
    this.queuedTraces++;
    this.queuedChars += chars;
    const { promise, resolve, reject } = withResolvers();
    this.waiting.push({ trace, chars, resolve, reject });
    this.schedule();
    return promise;
  }

  stats(): TraceWriterStats {
    return { ...this.counts, queued: this.queuedTraces };
  }

  /** Resolves once everything queued before the call has been written (or has failed). */
  async drain(): Promise<void> {
    while (this.writing !== undefined || this.waiting.length > 0) {
      if (this.writing === undefined) this.writeNext();
      await this.writing;
    }
  }

  /** Writes what is queued, then refuses more. */
  async close(): Promise<void> {
    this.closed = true;
    await this.drain();
  }

  private schedule(): void {
    if (this.writing !== undefined || this.timer !== undefined) return;
    const delay = this.waiting.length >= this.limits.batchTraces ? 0 : this.limits.delayMs;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.writing === undefined) this.writeNext();
    }, delay);
  }

  private writeNext(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.waiting.length === 0) return;
    const batch = this.waiting.splice(0, this.limits.batchTraces);
    this.writing = this.sink
      .write(batch.map((entry) => entry.trace))
      .then(
        (outcomes) => {
          for (const [index, entry] of batch.entries()) this.settle(entry, outcomes[index]);
        },
        (error: unknown) => {
          for (const entry of batch) this.settle(entry, (error as Error).message ?? String(error));
        },
      )
      .finally(() => {
        this.writing = undefined;
        if (this.waiting.length > 0) this.schedule();
      });
  }

  private settle(entry: Waiting, failure: string | undefined): void {
    this.queuedTraces--;
    this.queuedChars -= entry.chars;
    if (failure === undefined) {
      this.counts.recorded++;
      entry.resolve();
    } else {
      this.counts.failed++;
      entry.reject(new TraceNotRecordedError("write_failed", `trace not written: ${failure}`));
    }
  }
}

function bodyChars(trace: TraceRecord): number {
  const length = (body: unknown) => (typeof body === "string" ? body.length : 0);
  return (
    length(trace.clientRequest) +
    length(trace.upstreamRequest) +
    length(trace.upstreamResponse) +
    length(trace.clientResponse)
  );
}

function withResolvers(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((done, fail) => {
    resolve = done;
    reject = fail;
  });
  return { promise, resolve, reject };
}
