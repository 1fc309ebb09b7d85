import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { InvalidRequestError, importOptional } from "../core/index.js";
import { DEFAULT_TRACE_BYTES, DEFAULT_TRACE_RETENTION, type TraceRetention } from "./retention.js";
import type { FlushPolicy } from "./streaming-writer.js";
import type { TraceQueueLimits } from "./trace-queue.js";
import type { ConversationStore } from "./types.js";

export interface OpenStoreOptions {
  /**
   * Traces older or beyond this are pruned when the store opens, and the trace writer keeps to it after every
   * batch; `maxBytes` defaults to 256 MB on disk and 32 MB for `memory:`. `false` keeps everything.
   */
  traceRetention?: TraceRetention | false;
  /** Replaced by `[redacted]` wherever they appear in a trace (a gateway's client and upstream keys). */
  traceSecrets?: readonly string[];
  /** The trace writer's queue: past these bounds a trace is dropped and counted. */
  traceQueue?: Partial<TraceQueueLimits>;
  /** When a streamed answer is written; the default is every 50 ms or 64 events. */
  flushPolicy?: FlushPolicy;
  /** PostgreSQL pool size (default 10). */
  maxConnections?: number;
}

export const STORE_URL_FORMS = "sqlite:PATH, postgres://USER:PASSWORD@HOST:PORT/DATABASE or memory:";

/**
 * Opens the store a URL names: `sqlite:PATH` (the embedded default; the folder is created), `postgres://...`
 * or `postgresql://...` (a pool shared by several gateways), `memory:`. Migrations run on open.
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<ConversationStore> {
  const given = options.traceRetention ?? DEFAULT_TRACE_RETENTION;
  const retention =
    given === false
      ? false
      : { maxBytes: isMemory(url) ? DEFAULT_TRACE_BYTES.memory : DEFAULT_TRACE_BYTES.disk, ...given };
  const store = await openBackend(url, options, retention);
  if (retention !== false) {
    try {
      await store.pruneTraces(retention);
    } catch (error) {
      await store.close();
      throw error;
    }
  }
  return store;
}

/**
 * Each backend and its driver load only when a URL names it: the gateway starts faster and lighter, and a library
 * user installs only the driver of the store it opens (a missing one is a `MissingPackageError` naming it).
 */
async function openBackend(
  url: string,
  options: OpenStoreOptions,
  retention: TraceRetention | false,
): Promise<ConversationStore> {
  const storeOptions = {
    ...(options.flushPolicy ? { flushPolicy: options.flushPolicy } : {}),
    traceRetention: retention,
    ...(options.traceSecrets ? { traceSecrets: options.traceSecrets } : {}),
    ...(options.traceQueue ? { traceQueue: options.traceQueue } : {}),
  };
  if (isMemory(url)) {
    const { MemoryStore } = await import("./memory/memory-store.js");
    return new MemoryStore(storeOptions);
  }
  if (url.startsWith("sqlite:")) {
    const [{ default: Database }, { SqliteStore }] = await Promise.all([
      importOptional("better-sqlite3", "the SQLite store (sqlite:)", () => import("better-sqlite3")),
      import("./sqlite/sqlite-store.js"),
    ]);
    const path = url.slice("sqlite:".length).replace(/^\/\/(?=\/|\.)/, "");
    if (path === "") throw badUrl(url, "sqlite: needs a file path, e.g. sqlite:./.parley/parley.db");
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    const database = new Database(path);
    try {
      return new SqliteStore(database, storeOptions);
    } catch (error) {
      database.close();
      throw error;
    }
  }
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
    const [{ default: pg }, { PostgresStore }] = await Promise.all([
      importOptional("pg", "the PostgreSQL store (postgres:)", () => import("pg")),
      import("./postgres/postgres-store.js"),
    ]);
    const pool = new pg.Pool({ connectionString: url, max: options.maxConnections ?? 10 });
    // An idle connection the server dropped is discarded by the pool; the next query opens a new one.
    pool.on("error", () => {});
    try {
      return await PostgresStore.open(pool, storeOptions);
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
  }
  throw badUrl(url, `expected ${STORE_URL_FORMS}`);
}

function isMemory(url: string): boolean {
  return url === "memory:" || url === "memory://";
}

function badUrl(url: string, expected: string): InvalidRequestError {
  // A URL may carry a password; show only the scheme.
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? JSON.stringify(url.slice(0, 20));
  return new InvalidRequestError(`unsupported store URL (${scheme}): ${expected}`, "store");
}
