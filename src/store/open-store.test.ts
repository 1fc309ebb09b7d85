import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { InvalidRequestError } from "../core/index.js";
import { MemoryConversations } from "./memory/conversations.js";
import { MemoryTraces } from "./memory/traces.js";
import { openStore } from "./open-store.js";
import { SqliteConversations } from "./sqlite/conversations.js";
import { SqliteTraces } from "./sqlite/traces.js";

const folder = mkdtempSync(join(tmpdir(), "parley-open-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe("openStore", () => {
  test("opens each backend its URL names, creating the SQLite folder", async () => {
    const memory = await openStore("memory:");
    expect(memory.conversations).toBeInstanceOf(MemoryConversations);
    expect(memory.traces).toBeInstanceOf(MemoryTraces);
    const path = join(folder, "nested", "deeper", "parley.db");
    const sqlite = await openStore(`sqlite:${path}`);
    expect(sqlite.conversations).toBeInstanceOf(SqliteConversations);
    expect(sqlite.traces).toBeInstanceOf(SqliteTraces);
    expect(existsSync(path)).toBe(true);
    await Promise.all([memory.close(), sqlite.close()]);
  });

  test("a bad URL is a clear invalid request that does not echo credentials", async () => {
    await expect(openStore("mysql://root:hunter2@db/parley")).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(openStore("mysql://root:hunter2@db/parley")).rejects.toThrow(
      /store: unsupported store URL \(mysql:\).*sqlite:PATH/,
    );
    await expect(openStore("mysql://root:hunter2@db/parley")).rejects.not.toThrow("hunter2");
    await expect(openStore("sqlite:")).rejects.toThrow("needs a file path");
  });

  test("prunes traces past the retention on open, and keeps them when told to", async () => {
    const path = join(folder, "retention.db");
    // Written without retention: the writer keeps it after every batch and would drop "old" at once.
    const store = await openStore(`sqlite:${path}`, { traceRetention: false });
    const old = new Date(Date.now() - 30 * 24 * 60 * 60 * 1000).toISOString();
    const trace = { requestId: "r", route: "/v1/messages", lossy: [], repair: [], timings: {} };
    await store.traces.record({ ...trace, id: "old", createdAt: old });
    await store.traces.record({ ...trace, id: "new", createdAt: new Date().toISOString() });
    await store.close();
    const kept = await openStore(`sqlite:${path}`, { traceRetention: false });
    expect((await kept.traces.list()).traces.map((summary) => summary.id)).toEqual(["new", "old"]);
    await kept.close();
    const pruned = await openStore(`sqlite:${path}`);
    expect((await pruned.traces.list()).traces.map((summary) => summary.id)).toEqual(["new"]);
    await pruned.close();
  });
});
