import type { SqliteDatabase } from "./sqlite-store.js";

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
