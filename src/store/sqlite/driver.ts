import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { importOptional } from "../../core/errors.js";
import { storeTooSlow } from "../errors.js";
import { sqliteMigrations } from "./migrations.js";

/** The part of a SQLite driver the stores call (better-sqlite3 fits it). */
export interface SqliteStatement {
  run(...parameters: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  get(...parameters: unknown[]): unknown;
  all(...parameters: unknown[]): unknown[];
}

export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): unknown;
  /** The file's path (better-sqlite3's `name`); with `memory` false, the trace writer opens it too. */
  readonly name?: string;
  readonly memory?: boolean;
}

/**
 * Opens the file (its folder created; `:memory:` for a database of this connection only) through better-sqlite3,
 * an optional package.
 */
export async function openDatabase(path: string): Promise<SqliteDatabase> {
  const { default: Database } = await importOptional(
    "better-sqlite3",
    "the SQLite store (sqlite:)",
    () => import("better-sqlite3"),
  );
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  return new Database(path);
}

/**
 * Makes a database ready for the stores: the connection's settings, the schema steps it lacks, and (once, for a
 * file made before it) incremental vacuum.
 */
export function prepareDatabase(database: SqliteDatabase): void {
  configureConnection(database);
  migrate(database);
  convertToIncrementalVacuum(database);
}

/** Whether the database is a file another connection (the trace writer's) can open. */
export function isOnDisk(database: SqliteDatabase): database is SqliteDatabase & { name: string } {
  return database.memory === false && database.name !== undefined && database.name !== "";
}

/**
 * Runs `work` in a `BEGIN IMMEDIATE` transaction: the write lock is taken up front, so two processes on one file
 * serialize (waiting up to `busy_timeout`) instead of failing at commit.
 */
export function transactions(database: SqliteDatabase): <T>(work: () => T) => T {
  const begin = database.prepare("BEGIN IMMEDIATE");
  const commit = database.prepare("COMMIT");
  const rollback = database.prepare("ROLLBACK");
  return (work) => {
    begin.run();
    try {
      const result = work();
      commit.run();
      return result;
    } catch (error) {
      rollback.run();
      throw error;
    }
  };
}

/**
 * The store's own connection never waits for a lock inside SQLite: better-sqlite3 is synchronous, and a
 * `busy_timeout` wait happens on the event loop (another process holding the write lock for 15 s froze `/health`
 * and every stream for 15 s). Its calls go through `whenUnlocked` instead, which waits between tries off the event
 * loop. Set once the store is open: opening (the schema steps, the first pruning) still waits in SQLite, before the
 * gateway listens.
 */
export function neverWaitInside(database: SqliteDatabase): void {
  database.pragma("busy_timeout = 0");
}

/**
 * Longest pause between two tries for a lock. SQLite's own busy handler pauses 1, 2, 5, 10, 15, 20, 25 ms...; the
 * same short steps here keep a turn's wait behind another process's write (a transaction takes well under a
 * millisecond) short, and a try costs a few microseconds.
 */
const BUSY_PAUSE_MAX_MS = 20;

/**
 * Runs `work` (synchronous, one statement or one transaction), trying again while another connection holds the lock
 * it needs (`SQLITE_BUSY`), with pauses in between that leave the event loop free, until `deadlineMs` have passed:
 * then a `StoreUnavailableError`. A try that failed wrote nothing (its transaction was rolled back), so past the
 * deadline nothing of the call is written later.
 */
export async function whenUnlocked<T>(work: () => T, deadlineMs: number): Promise<T> {
  const until = performance.now() + deadlineMs;
  for (let pause = 1; ; pause = Math.min(BUSY_PAUSE_MAX_MS, pause * 2)) {
    try {
      return work();
    } catch (error) {
      if (!isBusy(error)) throw error;
      const left = until - performance.now();
      if (left <= 0) throw storeTooSlow("sqlite", deadlineMs, error);
      await sleep(Math.min(pause, left));
    }
  }
}

/** SQLite's `SQLITE_BUSY` and its extended codes (better-sqlite3 puts the code on the error). */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}

/** The settings every connection to a store's file uses: the store's own and the trace writer's. */
export function configureConnection(database: SqliteDatabase): void {
  // Only a new, empty file takes it here; an existing one is converted once by `convertToIncrementalVacuum`.
  database.pragma("auto_vacuum = INCREMENTAL");
  database.pragma("journal_mode = WAL");
  // In WAL mode NORMAL loses no committed transaction to a process crash, only to a power cut.
  database.pragma("synchronous = NORMAL");
  database.pragma("busy_timeout = 10000");
  database.pragma("foreign_keys = ON");
  // After a checkpoint the log is cut back to this, rather than keeping the size a large batch gave it.
  database.pragma(`journal_size_limit = ${16 * 1024 * 1024}`);
}

/**
 * A database made before the store freed pages (`auto_vacuum` off) keeps every page it ever had: a file of
 * traces pruned to ten stayed its size. `VACUUM` once switches it to incremental vacuum, after which pruning
 * gives pages back. Busy (another process is using the file) is left for the next open.
 */
export function convertToIncrementalVacuum(database: SqliteDatabase): void {
  if (Number(database.pragma("auto_vacuum", { simple: true })) === 2) return;
  try {
    database.pragma("auto_vacuum = INCREMENTAL");
    database.exec("VACUUM");
  } catch {
    // SQLITE_BUSY: another connection holds the file; the next open tries again.
  }
}

/** Applies the steps this database lacks, each in its own write transaction, so two processes never race. */
export function migrate(database: SqliteDatabase): void {
  database.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
  for (const migration of sqliteMigrations) {
    database.exec("BEGIN IMMEDIATE");
    try {
      const applied = database.prepare("SELECT 1 FROM schema_migrations WHERE version = ?").get(migration.version);
      if (applied === undefined) {
        database.exec(migration.sql);
        database
          .prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)")
          .run(migration.version, new Date().toISOString());
      }
      database.exec("COMMIT");
    } catch (error) {
      database.exec("ROLLBACK");
      throw error;
    }
  }
}
