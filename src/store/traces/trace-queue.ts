import type { TraceRecord, TraceRetentionPolicy, TraceSummary, TraceWriterStats } from "./trace-store.js";

/** The four bodies, by their place in a stored trace. */
export const BODY_SLOTS = ["clientRequest", "upstreamRequest", "upstreamResponse", "clientResponse"] as const;
export type BodySlot = (typeof BODY_SLOTS)[number];

/**
 * A trace's listed fields, and its reports (losses, repairs, timings...) as the JSON text they are stored as:
 * written once here, they cross to the writer as one string instead of a graph of objects to clone, and the
 * writer redacts them only when its search finds something that could need it. A stream's arrival times (numbers
 * only, two per read: a paced stream's hundreds) cross as numbers, which cloning copies for less than writing
 * them as text here; the writer adds them to the text.
 */
export type TraceFields = TraceSummary & { reports: string; arrivals?: TraceRecord["arrivals"] };

/**
 * A trace as the queue holds it: its fields, and per body slot its UTF-8 bytes, or the text itself where UTF-8
 * cannot carry it (a lone surrogate), or nothing. The bodies are encoded when the trace is queued, so that the
 * request's strings are not kept alive (and copied by the garbage collector) while a batch gathers.
 */
export interface QueuedTrace {
  fields: TraceFields;
  bodies: Array<Uint8Array | string | undefined>;
}

/** Why `TraceStore.record` did not store a trace. */
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
  write(traces: readonly QueuedTrace[]): Promise<Array<string | undefined>>;
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

/**
 * The listed fields a trace copies, every one by name: a field added to `TraceSummary` fails to compile here until
 * it is listed. Copied one by one rather than by an object rest of the record, which took three times as long
 * (measured: ~6 against ~2 µs a trace, the reports' JSON included).
 */
const LISTED: { readonly [key in Exclude<keyof TraceSummary, "lossyCount" | "repairCount">]-?: true } = {
  id: true,
  requestId: true,
  createdAt: true,
  route: true,
  provider: true,
  clientModel: true,
  upstreamModel: true,
  status: true,
  durationMs: true,
  inputTokens: true,
  cacheReadTokens: true,
  cacheWriteTokens: true,
  outputTokens: true,
  switchedFrom: true,
  conversationId: true,
  tenant: true,
  stream: true,
};
const LISTED_KEYS = Object.keys(LISTED) as ReadonlyArray<keyof typeof LISTED>;

/** A trace without its bodies, its reports as their JSON text (see `TraceFields`). */
export function traceFields(trace: TraceRecord): TraceFields {
  const { lossy, repair } = trace;
  const reports: Record<string, unknown> = { lossy: lossy ?? [], repair: repair ?? [], timings: trace.timings ?? {} };
  if (trace.storedMessages !== undefined) reports.storedMessages = trace.storedMessages;
  if (trace.lossyStages !== undefined) reports.lossyStages = trace.lossyStages;
  const fields: Record<string, unknown> = {};
  for (const key of LISTED_KEYS) {
    const value = trace[key];
    if (value !== undefined) fields[key] = value;
  }
  fields.lossyCount = Array.isArray(lossy) ? lossy.length : 0;
  fields.repairCount = Array.isArray(repair) ? repair.length : 0;
  fields.reports = JSON.stringify(reports);
  if (trace.arrivals !== undefined) fields.arrivals = trace.arrivals;
  return fields as TraceFields;
}

interface Waiting {
  trace: QueuedTrace;
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
  private readonly arena = new ByteArena();

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
    this.waiting.push({ trace: this.pack(trace), chars, resolve, reject });
    this.schedule();
    return promise;
  }

  private pack(trace: TraceRecord): QueuedTrace {
    const arena = this.arena;
    return {
      fields: traceFields(trace),
      bodies: [
        arena.encode(trace.clientRequest),
        arena.encode(trace.upstreamRequest),
        arena.encode(trace.upstreamResponse),
        arena.encode(trace.clientResponse),
      ],
    };
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
    this.writing = this.startWrite(batch.map((entry) => entry.trace))
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

  /** The sink's write; one that throws (a writer thread that cannot start) fails the batch, never the process. */
  private startWrite(traces: QueuedTrace[]): Promise<Array<string | undefined>> {
    try {
      return this.sink.write(traces);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private settle(entry: Waiting, failure: string | undefined): void {
    // Written or failed, its bodies are read no more: their bytes' segments may be filled again.
    for (const body of entry.trace.bodies) if (body instanceof Uint8Array) this.arena.release(body);
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

/**
 * Encodes bodies as UTF-8 into 1 MB segments, a slice each (a larger body gets a buffer of its own). A segment
 * whose every slice has been written (or failed) is kept to be filled again, a few at most.
 */
class ByteArena {
  private segment: Buffer = Buffer.allocUnsafeSlow(0);
  private used = 0;
  /** Per segment, the slices not yet released. */
  private readonly live = new Map<ArrayBufferLike, number>();
  private readonly free: Buffer[] = [];

  encode(body: unknown): Uint8Array | string | undefined {
    if (body === undefined || body === null) return undefined;
    const text = typeof body === "string" ? body : JSON.stringify(body);
    if (!(text as unknown as { isWellFormed(): boolean }).isWellFormed()) return text;
    // At most three bytes a UTF-16 unit: room for that is room enough.
    const most = text.length * 3;
    if (most > SEGMENT_BYTES / 4) return Buffer.from(text, "utf8");
    if (this.used + most > this.segment.length) this.nextSegment();
    const written = this.segment.write(text, this.used, "utf8");
    const slice = this.segment.subarray(this.used, this.used + written);
    this.used += written;
    this.live.set(this.segment.buffer, (this.live.get(this.segment.buffer) ?? 0) + 1);
    return slice;
  }

  /** A slice `encode` gave is no longer read. */
  release(slice: Uint8Array): void {
    const count = this.live.get(slice.buffer);
    if (count === undefined) return;
    if (count > 1) {
      this.live.set(slice.buffer, count - 1);
      return;
    }
    this.live.delete(slice.buffer);
    if (slice.buffer !== this.segment.buffer && this.free.length < FREE_SEGMENTS) {
      this.free.push(Buffer.from(slice.buffer as ArrayBuffer));
    }
  }

  private nextSegment(): void {
    const previous = this.segment;
    // A segment left with nothing queued in it is free at once.
    if (previous.length > 0 && !this.live.has(previous.buffer) && this.free.length < FREE_SEGMENTS) {
      this.free.push(previous);
    }
    this.segment = this.free.pop() ?? Buffer.allocUnsafeSlow(SEGMENT_BYTES);
    this.used = 0;
  }
}

const FREE_SEGMENTS = 4;
const SEGMENT_BYTES = 1024 * 1024;

function withResolvers(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((done, fail) => {
    resolve = done;
    reject = fail;
  });
  return { promise, resolve, reject };
}
