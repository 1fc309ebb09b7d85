import { importOptional } from "../../core/errors.js";
import { withDeadline } from "../deadline.js";
import { StoreUnavailableError, storeTooSlow } from "../errors.js";
import { postgresMigrations } from "./migrations.js";

/** The part of a PostgreSQL driver the stores call (`pg.Pool` fits it). */
export interface PostgresQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

export interface PostgresClient extends PostgresQueryable {
  release(error?: Error | boolean): void;
}

export interface PostgresPool extends PostgresQueryable {
  connect(): Promise<PostgresClient>;
  end(): Promise<void>;
}

/** Any constant works; it only has to be the same in every Parley process sharing the database. */
const MIGRATION_LOCK = 0x7061726c6579; // "parley"

/**
 * The server's own limits on a statement and on a transaction left idle: a safety net for work whose client is gone
 * (a call cut at its deadline, a gateway stopped mid-transaction), so that it does not hold its locks for ever. Above
 * the store's deadline, since the traces' batches and prunings share the pool and may take longer than a turn's call.
 */
const SERVER_TIMEOUT_MS = 30_000;

/**
 * A pool on the URL's database, of at most `maxConnections`, through pg, an optional package: a connection not made
 * (or a pooled one not free) within `deadlineMs` fails the call, and TCP keep-alive finds a server that went away.
 */
export async function openPool(url: string, maxConnections: number, deadlineMs: number): Promise<PostgresPool> {
  const { default: pg } = await importOptional("pg", "the PostgreSQL store (postgres:)", () => import("pg"));
  const serverTimeout = Math.max(SERVER_TIMEOUT_MS, deadlineMs);
  const pool = new pg.Pool({
    connectionString: url,
    max: maxConnections,
    connectionTimeoutMillis: deadlineMs,
    statement_timeout: serverTimeout,
    idle_in_transaction_session_timeout: serverTimeout,
    keepAlive: true,
  });
  // An idle connection the server dropped is discarded by the pool; the next query opens a new one.
  pool.on("error", () => {});
  return pool;
}

/**
 * The pool as the conversation and answer stores use it: every round trip is cut at `deadlineMs` (its connection
 * is then closed and leaves the pool, rather than staying stuck on a server that stopped answering), and a failure to
 * reach the server or a connection lost mid-call is a `StoreUnavailableError`, not an error of the call itself.
 */
export function poolWithDeadline(pool: PostgresPool, deadlineMs: number): PostgresPool {
  const connect = async (): Promise<PostgresClient> => {
    try {
      return clientWithDeadline(await pool.connect(), deadlineMs);
    } catch (error) {
      throw unavailable(error, deadlineMs);
    }
  };
  return {
    connect,
    async query(text, values) {
      const client = await connect();
      try {
        const result = await client.query(text, values);
        client.release();
        return result;
      } catch (error) {
        client.release(error instanceof StoreUnavailableError);
        throw error;
      }
    },
    end: () => pool.end(),
  };
}

function clientWithDeadline(client: PostgresClient, deadlineMs: number): PostgresClient {
  let released = false;
  const release = (error?: Error | boolean) => {
    if (released) return;
    released = true;
    client.release(error);
  };
  return {
    async query(text, values) {
      if (released) throw new StoreUnavailableError("postgres", "lost its connection");
      try {
        return await withDeadline(client.query(text, values), deadlineMs, "postgres");
      } catch (error) {
        const mapped = unavailable(error, deadlineMs);
        // A connection cut at its deadline may still be running the statement: it is closed, never reused.
        if (mapped instanceof StoreUnavailableError) release(mapped);
        throw mapped;
      }
    },
    release,
  };
}

/**
 * A failure that says nothing about the call (no connection, a connection lost or cut, the server shutting down or
 * cancelling on its timeout) as a `StoreUnavailableError`; an error of the statement itself as it is.
 */
function unavailable(error: unknown, deadlineMs: number): unknown {
  if (error instanceof StoreUnavailableError) return error;
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : "";
  if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) {
    // A SQLSTATE: connection exceptions (08) and operator intervention (57: shutdown, cancelled on timeout) only.
    return /^(08|57)/.test(code)
      ? new StoreUnavailableError("postgres", `could not answer (${code})`, { cause: error })
      : error;
  }
  // pg's own words for a pool that had no connection in time, and for a connection that closed under a call.
  if (/timeout exceeded when trying to connect|connection timeout/i.test(text))
    return storeTooSlow("postgres", deadlineMs, error);
  if (typeof code === "string" || /connection terminated|not queryable|connection closed/i.test(text))
    return new StoreUnavailableError(
      "postgres",
      `could not be reached (${typeof code === "string" ? code : "connection lost"})`,
      {
        cause: error,
      },
    );
  return error;
}

/** Applies missing steps under an advisory lock, so gateways starting together never race on the schema. */
export async function migrate(pool: PostgresPool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    // Waiting for another gateway's migration, or running a long step, is not bound by the statement timeout.
    await client.query("SET LOCAL statement_timeout = 0");
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL)",
    );
    const applied = await client.query("SELECT version FROM schema_migrations");
    const versions = new Set((applied.rows as Array<{ version: number }>).map((row) => row.version));
    for (const migration of postgresMigrations) {
      if (versions.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())", [migration.version]);
    }
    await client.query("COMMIT");
    client.release();
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    client.release(true);
    throw error;
  }
}
