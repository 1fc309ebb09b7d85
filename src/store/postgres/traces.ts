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
import type { PostgresPool } from "./driver.js";
import { PostgresTraceTables } from "./trace-tables.js";

/** The traces of `postgres://...`, shared by every gateway on the database. */
export class PostgresTraces implements TraceStore {
  private readonly tables: PostgresTraceTables;
  private readonly queue: TraceQueue;

  constructor(pool: PostgresPool, options: TraceWriterOptions = {}) {
    const retention = writerRetention(options.traceRetention, DEFAULT_TRACE_BYTES.disk);
    const tables = new PostgresTraceTables(pool, retention, options.traceSecrets ?? []);
    this.tables = tables;
    // Batches are written from a timer, after the responses went out; the database does the waiting.
    this.queue = new TraceQueue({ write: (batch) => tables.write(batch) }, options.traceQueue);
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

  /** Writes what the queue holds; the pool stays open. */
  async close(): Promise<void> {
    await this.queue.close();
  }
}
