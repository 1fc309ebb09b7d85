import { InvalidRequestError } from "../core/index.js";
import type { AnswerStore } from "./answers/answer-store.js";
import type { ConversationStore } from "./conversations/conversation-store.js";
import type { FlushPolicy } from "./conversations/streaming-writer.js";
import { DEFAULT_STORE_DEADLINE_MS, withDeadline } from "./deadline.js";
import type { PostgresPool } from "./postgres/driver.js";
import type { SqliteDatabase } from "./sqlite/driver.js";
import { DEFAULT_TRACE_BYTES, DEFAULT_TRACE_RETENTION, type TraceRetention } from "./traces/retention.js";
import type { TraceQueueLimits, TraceWriterOptions } from "./traces/trace-queue.js";
import type { TraceStore } from "./traces/trace-store.js";

/** What a store URL opens: three stores on one database, and what closes it. */
export interface Store {
  conversations: ConversationStore;
  /** Answers kept for later turns (the Responses API's `store`). */
  answers: AnswerStore;
  traces: TraceStore;
  /**
   * Resolves once the store could take a write now: SQLite's write lock taken and let go at once, a round trip to
   * PostgreSQL. Past the store's deadline it rejects with a `StoreUnavailableError` naming the store (the gateway's
   * `GET /ready`).
   */
  ready(): Promise<void>;
  /** Writes what the trace writer holds first, then closes the database (or pool). */
  close(): Promise<void>;
}

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
  /**
   * The longest any conversation or answer call waits for the database (default 5000 ms): past it the call fails
   * with a `StoreUnavailableError` (503). PostgreSQL's connect, statement and idle-in-transaction timeouts follow it.
   */
  deadlineMs?: number;
}

/** What a backend's stores are built with, on a database or pool already open. */
export type BackendOptions = { flushPolicy?: FlushPolicy; deadlineMs?: number } & TraceWriterOptions;

export const STORE_URL_FORMS = "sqlite:PATH, postgres://USER:PASSWORD@HOST:PORT/DATABASE or memory:";

/**
 * Opens the store a URL names: `sqlite:PATH` (the embedded default; the folder is created), `postgres://...`
 * or `postgresql://...` (a pool shared by several gateways), `memory:`. Migrations run on open.
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const given = options.traceRetention ?? DEFAULT_TRACE_RETENTION;
  const retention =
    given === false
      ? false
      : { maxBytes: isMemory(url) ? DEFAULT_TRACE_BYTES.memory : DEFAULT_TRACE_BYTES.disk, ...given };
  const store = await openBackend(url, options, retention);
  if (retention !== false) {
    try {
      await store.traces.prune(retention);
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
async function openBackend(url: string, options: OpenStoreOptions, retention: TraceRetention | false): Promise<Store> {
  const storeOptions: BackendOptions = {
    ...(options.flushPolicy ? { flushPolicy: options.flushPolicy } : {}),
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
    traceRetention: retention,
    ...(options.traceSecrets ? { traceSecrets: options.traceSecrets } : {}),
    ...(options.traceQueue ? { traceQueue: options.traceQueue } : {}),
  };
  if (isMemory(url)) return memoryStore(storeOptions);
  if (url.startsWith("sqlite:")) {
    const path = url.slice("sqlite:".length).replace(/^\/\/(?=\/|\.)/, "");
    if (path === "") throw badUrl(url, "sqlite: needs a file path, e.g. sqlite:./.parley/parley.db");
    const { openDatabase } = await import("./sqlite/driver.js");
    const database = await openDatabase(path);
    try {
      return await sqliteStore(database, storeOptions);
    } catch (error) {
      database.close();
      throw error;
    }
  }
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
    const { openPool } = await import("./postgres/driver.js");
    const pool = await openPool(url, options.maxConnections ?? 10, options.deadlineMs ?? DEFAULT_STORE_DEADLINE_MS);
    try {
      return await postgresStore(pool, storeOptions);
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
  }
  throw badUrl(url, `expected ${STORE_URL_FORMS}`);
}

/** `memory:` — for tests and throwaway gateways; everything is gone when the process ends. */
export async function memoryStore(options: BackendOptions = {}): Promise<Store> {
  const [{ MemoryConversations }, { MemoryAnswers }, { MemoryTraces }] = await Promise.all([
    import("./memory/conversations.js"),
    import("./memory/answers.js"),
    import("./memory/traces.js"),
  ]);
  const traces = new MemoryTraces(options);
  return {
    conversations: new MemoryConversations(options.flushPolicy),
    answers: new MemoryAnswers(),
    traces,
    ready: async () => undefined,
    close: () => traces.close(),
  };
}

/**
 * `sqlite:PATH` on a database already open (better-sqlite3's, or a stand-in): its settings and the schema steps
 * it lacks are applied here. Closing the store closes the database.
 */
export async function sqliteStore(database: SqliteDatabase, options: BackendOptions = {}): Promise<Store> {
  const [
    { prepareDatabase, neverWaitInside, whenUnlocked },
    { SqliteConversations },
    { SqliteAnswers },
    { SqliteTraces },
  ] = await Promise.all([
    import("./sqlite/driver.js"),
    import("./sqlite/conversations.js"),
    import("./sqlite/answers.js"),
    import("./sqlite/traces.js"),
  ]);
  prepareDatabase(database);
  neverWaitInside(database);
  const traces = new SqliteTraces(database, options);
  return {
    conversations: new SqliteConversations(database, options),
    answers: new SqliteAnswers(database, options.deadlineMs),
    traces,
    // The write lock, tried as every call tries it (off the event loop between tries), and let go at once.
    ready: () =>
      whenUnlocked(() => {
        database.exec("BEGIN IMMEDIATE");
        database.exec("ROLLBACK");
      }, options.deadlineMs ?? DEFAULT_STORE_DEADLINE_MS),
    async close() {
      await traces.close();
      database.close();
    },
  };
}

/** `postgres://...` on a pool already open: the schema steps it lacks are applied here. Closing the store ends the pool. */
export async function postgresStore(pool: PostgresPool, options: BackendOptions = {}): Promise<Store> {
  const [
    { migrate, poolWithDeadline },
    { PostgresConversations },
    { PostgresAnswers },
    { PostgresTraces },
    { conversationsWithDeadline },
    { answersWithDeadline },
  ] = await Promise.all([
    import("./postgres/driver.js"),
    import("./postgres/conversations.js"),
    import("./postgres/answers.js"),
    import("./postgres/traces.js"),
    import("./conversations/with-deadline.js"),
    import("./answers/with-deadline.js"),
  ]);
  await migrate(pool);
  const traces = new PostgresTraces(pool, options);
  // Each round trip of a call is cut at the deadline (its connection closed, so the pool does not keep one stuck on
  // a hung server), and the whole call too (one call is up to five round trips).
  const deadlineMs = options.deadlineMs ?? DEFAULT_STORE_DEADLINE_MS;
  const bounded = poolWithDeadline(pool, deadlineMs);
  return {
    conversations: conversationsWithDeadline(
      new PostgresConversations(bounded, options.flushPolicy),
      deadlineMs,
      "postgres",
    ),
    answers: answersWithDeadline(new PostgresAnswers(bounded), deadlineMs, "postgres"),
    traces,
    ready: () =>
      withDeadline(
        bounded.query("SELECT 1").then(() => undefined),
        deadlineMs,
        "postgres",
      ),
    async close() {
      await traces.close();
      await pool.end();
    },
  };
}

function isMemory(url: string): boolean {
  return url === "memory:" || url === "memory://";
}

function badUrl(url: string, expected: string): InvalidRequestError {
  // A URL may carry a password; show only the scheme.
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? JSON.stringify(url.slice(0, 20));
  return new InvalidRequestError(`unsupported store URL (${scheme}): ${expected}`, "store");
}
