import { DEFAULT_STORE_DEADLINE_MS } from "../deadline.js";
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
import { isOnDisk, type SqliteDatabase, whenUnlocked } from "./driver.js";
import { SqliteTraceTables } from "./trace-tables.js";
import { SqliteTraceWorker } from "./trace-writer.js";

/**
 * How long a trace waits for others before the writer's thread gets its batch. A batch's bodies cross in one
 * buffer that comes back for the next, and queued traces are heap on the event loop until they go: at 100 ms
 * (the queue's default, for writers on the event loop) the bench's c=16 loads kept batches of ~250 traces and
 * two buffers of up to 9 MB; at 10 ms the gateway's RSS peaked ~50 MB lower (219 -> 161 MB json, 211 -> 161
 * stream, side by side), its CPU within the noise (a transaction a batch costs the writer little).
 */
const WORKER_BATCH_DELAY_MS = 10;

/**
 * The traces of `sqlite:PATH`: written by a worker thread on a connection of its own (for a database only this
 * connection can reach, from a timer on it), read on the store's connection.
 */
export class SqliteTraces implements TraceStore {
  /** Reads, and (for a database only this connection can reach) writes, of traces on this connection. */
  private readonly tables: SqliteTraceTables;
  private readonly worker: SqliteTraceWorker | undefined;
  private readonly queue: TraceQueue;

  private readonly deadlineMs: number;

  constructor(database: SqliteDatabase, options: TraceWriterOptions & { deadlineMs?: number | undefined } = {}) {
    this.deadlineMs = options.deadlineMs ?? DEFAULT_STORE_DEADLINE_MS;
    const retention = writerRetention(options.traceRetention, DEFAULT_TRACE_BYTES.disk);
    const secrets = options.traceSecrets ?? [];
    const tables = new SqliteTraceTables(database, retention, secrets);
    this.tables = tables;
    this.worker = isOnDisk(database) ? new SqliteTraceWorker({ path: database.name, retention, secrets }) : undefined;
    this.queue = new TraceQueue(this.worker ?? { write: async (batch) => tables.write(batch) }, {
      ...(this.worker === undefined ? {} : { delayMs: WORKER_BATCH_DELAY_MS }),
      ...options.traceQueue,
    });
  }

  record(trace: TraceRecord): Promise<void> {
    return this.queue.enqueue(trace);
  }

  async list(query: TraceQuery = {}): Promise<TracePage> {
    return whenUnlocked(() => this.tables.list(query), this.deadlineMs);
  }

  async get(idOrRequestId: string): Promise<TraceRecord | undefined> {
    return whenUnlocked(() => this.tables.get(idOrRequestId), this.deadlineMs);
  }

  /** In the writer's thread once it runs (a large prune takes a while), else on this connection. */
  async prune(policy: TraceRetentionPolicy): Promise<number> {
    if (this.worker?.running) return this.worker.prune(policy);
    return whenUnlocked(() => this.tables.prune(policy), this.deadlineMs);
  }

  async usage(): Promise<TraceUsage> {
    return whenUnlocked(() => this.tables.usage(), this.deadlineMs);
  }

  stats(): TraceWriterStats {
    return this.queue.stats();
  }

  /** Writes what the queue holds, then stops the writer's thread; the database stays open. */
  async close(): Promise<void> {
    await this.queue.close();
    await this.worker?.close();
  }
}
