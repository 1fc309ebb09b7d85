import { DEFAULT_TRACE_BYTES } from "../traces/retention.js";
import { TraceQueue, type TraceWriterOptions, writerRetention } from "../traces/trace-queue.js";
import type {
  TracePage,
  TraceQuery,
  TraceRecord,
  TraceRetentionPolicy,
  TraceStore,
  TraceUsage,
  TraceWriterStats,
} from "../traces/trace-store.js";
import { MemoryTraceTables } from "./trace-tables.js";

/** The traces of `memory:`, written from a timer in the process and gone when it ends. */
export class MemoryTraces implements TraceStore {
  private readonly tables: MemoryTraceTables;
  private readonly queue: TraceQueue;

  constructor(options: TraceWriterOptions = {}) {
    const retention = writerRetention(options.traceRetention, DEFAULT_TRACE_BYTES.memory);
    const tables = new MemoryTraceTables(retention, options.traceSecrets ?? []);
    this.tables = tables;
    // Deferred to a timer, so that chunking runs after the response rather than on the request path. Small
    // batches: here a batch is held in the heap until it is written, and there is no commit to share.
    this.queue = new TraceQueue(
      { write: (batch) => tables.write(batch) },
      { batchTraces: 64, delayMs: 20, ...options.traceQueue },
    );
  }

  record(trace: TraceRecord): Promise<void> {
    return this.queue.enqueue(trace);
  }

  async list(query: TraceQuery = {}): Promise<TracePage> {
    return this.tables.list(query);
  }

  async get(idOrRequestId: string): Promise<TraceRecord | undefined> {
    return this.tables.get(idOrRequestId);
  }

  async prune(policy: TraceRetentionPolicy): Promise<number> {
    return this.tables.prune(policy);
  }

  async usage(): Promise<TraceUsage> {
    return this.tables.usage();
  }

  stats(): TraceWriterStats {
    return this.queue.stats();
  }

  /** Writes what the queue holds. */
  async close(): Promise<void> {
    await this.queue.close();
  }
}
