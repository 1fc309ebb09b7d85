import Database from "better-sqlite3";

/**
 * Another process on the store's file, holding its write lock (`BEGIN IMMEDIATE`) for `holdMs` and then letting go:
 * what a second gateway's long write, a backup tool or a `sqlite3` shell left open does to the gateway.
 * Usage: hold-write-lock.ts PATH HOLD_MS. Prints "locked" once it holds the lock.
 */
const [path, holdMs] = process.argv.slice(2);
const database = new Database(path!);
database.exec("BEGIN IMMEDIATE");
process.stdout.write("locked\n");
// Asleep with the lock held, as a process busy elsewhere would be.
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(holdMs));
database.exec("COMMIT");
database.close();
