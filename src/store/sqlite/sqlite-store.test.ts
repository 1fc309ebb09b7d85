import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { expectBatchesIntact, runStoreContract } from "../contract.suite.js";
import { appendBatch, appendBatches } from "../test-support/batches.js";
import { startHelper } from "../test-support/run-child.js";
import { sqliteMigrations } from "./migrations.js";
import { SqliteStore } from "./sqlite-store.js";

const folder = mkdtempSync(join(tmpdir(), "parley-sqlite-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(folder, `store-${files++}.db`);

runStoreContract("sqlite", async (options) => new SqliteStore(new Database(freshPath()), options));

describe("sqlite store files", () => {
  test("migrations are versioned and applied once; data survives reopening", async () => {
    const path = freshPath();
    const store = new SqliteStore(new Database(path));
    const { id } = await store.createConversation({ id: "kept" });
    await store.appendMessages(id, [{ role: "user", parts: [{ type: "text", text: "hello" }] }]);
    await store.close();

    const reopened = new SqliteStore(new Database(path));
    expect((await reopened.loadConversation("kept"))?.map((stored) => stored.message)).toEqual([
      { role: "user", parts: [{ type: "text", text: "hello" }] },
    ]);
    await reopened.close();

    const database = new Database(path, { readonly: true });
    expect(database.prepare("SELECT version FROM schema_migrations ORDER BY version").all()).toEqual(
      sqliteMigrations.map(({ version }) => ({ version })),
    );
    expect(database.pragma("journal_mode", { simple: true })).toBe("wal");
    database.close();
  });
});

describe("sqlite store shared by several processes", () => {
  test("appends from two connections and a child process to one conversation never interleave or collide", async () => {
    const path = freshPath();
    const first = new SqliteStore(new Database(path));
    const second = new SqliteStore(new Database(path));
    const { id } = await first.createConversation();
    const appendAll = async (store: SqliteStore, label: string) => {
      for (let batch = 0; batch < 40; batch++) {
        await store.appendMessages(id, appendBatch(label, batch));
        // Yield to the event loop so the two connections alternate, as two requests would.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const child = startHelper("append-child", [`sqlite:${path}`, id, "40", "c"]);
    await child.ready;
    await Promise.all([appendAll(first, "a"), appendAll(second, "b"), child.done]);
    const loaded = (await first.loadConversation(id))!;
    expectBatchesIntact(loaded, [...appendBatches("a", 40), ...appendBatches("b", 40), ...appendBatches("c", 40)]);
    expect(loaded.map((stored) => stored.seq)).toEqual(loaded.map((_, index) => index + 1));
    await Promise.all([first.close(), second.close()]);
  });
});
