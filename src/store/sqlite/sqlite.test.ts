import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { runAnswerContract } from "../answers/contract.suite.js";
import { expectBatchesIntact, runConversationContract } from "../conversations/contract.suite.js";
import { type Store, sqliteStore } from "../open-store.js";
import { DEFAULT_OWNER } from "../owner.js";
import { expectAnswersKept } from "../test-support/answers.js";
import { appendBatch, appendBatches } from "../test-support/batches.js";
import { startHelper } from "../test-support/run-child.js";
import { runTraceContract } from "../traces/contract.suite.js";
import type { TraceWriterOptions } from "../traces/trace-queue.js";
import { sqliteMigrations } from "./migrations.js";

const folder = mkdtempSync(join(tmpdir(), "parley-sqlite-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(folder, `store-${files++}.db`);

const fresh = (options?: TraceWriterOptions) => sqliteStore(new Database(freshPath()), options);
runConversationContract("sqlite", fresh);
runAnswerContract("sqlite", fresh);
runTraceContract("sqlite", fresh);

describe("sqlite store files", () => {
  test("migrations are versioned and applied once; data survives reopening", async () => {
    const path = freshPath();
    const store = await sqliteStore(new Database(path));
    const { id } = await store.conversations.create({ id: "kept" });
    await store.conversations.append(id, [{ role: "user", parts: [{ type: "text", text: "hello" }] }]);
    await store.close();

    const reopened = await sqliteStore(new Database(path));
    expect((await reopened.conversations.load("kept"))?.map((stored) => stored.message)).toEqual([
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

describe("sqlite store upgrades", () => {
  test("a database from before sources opens with its messages, which have none, and takes sources after", async () => {
    const path = freshPath();
    const old = new Database(path);
    old.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
    old.exec(sqliteMigrations[0]!.sql);
    old.prepare("INSERT INTO schema_migrations VALUES (1, '2026-01-01T00:00:00.000Z')").run();
    old.prepare("INSERT INTO conversations (id, created_at, metadata, next_seq) VALUES ('old', 'then', '{}', 2)").run();
    old
      .prepare(
        "INSERT INTO messages (id, conversation_id, seq, role, complete, created_at, extra) VALUES (7, 'old', 1, 'user', 1, 'then', ?)",
      )
      .run('{"role":"user","parts":[]}');
    old.prepare("INSERT INTO parts VALUES (7, 0, ?)").run('{"type":"text","text":"from before"}');
    old.close();

    const store = await sqliteStore(new Database(path));
    const source = { format: "anthropic" as const, json: '{"content":"after","role":"user"}' };
    await store.conversations.append("old", [{ role: "user", parts: [{ type: "text", text: "after" }] }], {
      sources: [source],
    });
    const loaded = (await store.conversations.load("old"))!;
    expect(loaded[0]).toEqual({
      seq: 1,
      message: { role: "user", parts: [{ type: "text", text: "from before" }] },
      complete: true,
      createdAt: "then",
    });
    expect(loaded[0]).not.toHaveProperty("source");
    expect(loaded[1]!.source).toEqual(source);
    await store.close();
  });
});

describe("sqlite store upgrades to owners", () => {
  test("a database at step 2 keeps its conversations, sources included, as the default owner's", async () => {
    const path = freshPath();
    const old = new Database(path);
    old.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
    for (const migration of sqliteMigrations.slice(0, 2)) {
      old.exec(migration.sql);
      old.prepare("INSERT INTO schema_migrations VALUES (?, '2026-01-01T00:00:00.000Z')").run(migration.version);
    }
    old.prepare("INSERT INTO conversations (id, created_at, metadata, next_seq) VALUES ('old', 'then', '{}', 2)").run();
    const source = '{"role":"user", "content":"from step 2"}';
    old
      .prepare(
        `INSERT INTO messages (id, conversation_id, seq, role, complete, created_at, extra, source_format, source)
         VALUES (7, 'old', 1, 'user', 1, 'then', ?, 'anthropic', ?)`,
      )
      .run('{"role":"user","parts":[]}', source);
    old.prepare("INSERT INTO parts VALUES (7, 0, ?)").run('{"type":"text","text":"from step 2"}');
    old.close();

    const store = await sqliteStore(new Database(path));
    const loaded = (await store.conversations.load("old"))!;
    expect(loaded.map((stored) => stored.source)).toEqual([{ format: "anthropic", json: source }]);
    expect(await store.conversations.load("old", { owner: "team-a" })).toBeUndefined();
    await store.conversations.append("old", [{ role: "user", parts: [{ type: "text", text: "after" }] }]);
    expect(await store.conversations.load("old", { owner: DEFAULT_OWNER })).toHaveLength(2);
    await store.close();
    const database = new Database(path, { readonly: true });
    expect(database.prepare("SELECT version FROM schema_migrations ORDER BY version").all()).toEqual(
      sqliteMigrations.map((migration) => ({ version: migration.version })),
    );
    database.close();
  });
});

describe("sqlite store upgrades to trace storage", () => {
  // A trace as every release before trace storage (step 4) wrote it: its whole record in one JSON column.
  const oldTrace = {
    id: "trace-old",
    requestId: "req-old",
    createdAt: "2026-01-01T00:00:00.000Z",
    route: "POST /v1/messages",
    provider: "nim",
    model: "deepseek-chat",
    status: 200,
    clientRequest: { model: "claude-sonnet-4-5", max_tokens: 5, messages: [{ role: "user", content: "hi" }] },
    upstreamRequest: { model: "deepseek-chat", messages: [{ role: "user", content: "hi" }] },
    upstreamResponse: '{"choices":[]}',
    clientResponse: '{"content":[]}',
    lossy: [],
    repair: [{ messageIndex: 0, code: "x" }],
    timings: { totalMs: 3 },
  };

  test.each([1, 2, 3])(
    "a database at step %i takes every later step, its conversations and traces kept",
    async (step) => {
      const path = freshPath();
      const old = new Database(path);
      old.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
      for (const migration of sqliteMigrations.filter(({ version }) => version <= step)) {
        old.exec(migration.sql);
        old.prepare("INSERT INTO schema_migrations VALUES (?, '2026-01-01T00:00:00.000Z')").run(migration.version);
      }
      old
        .prepare("INSERT INTO conversations (id, created_at, metadata, next_seq) VALUES ('old', 'then', '{}', 2)")
        .run();
      old
        .prepare(
          "INSERT INTO messages (id, conversation_id, seq, role, complete, created_at, extra) VALUES (7, 'old', 1, 'user', 1, 'then', ?)",
        )
        .run('{"role":"user","parts":[]}');
      old.prepare("INSERT INTO parts VALUES (7, 0, ?)").run('{"type":"text","text":"before"}');
      old
        .prepare(
          "INSERT INTO traces (id, request_id, created_at, route, provider, model, status, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .run(
          "trace-old",
          "req-old",
          oldTrace.createdAt,
          oldTrace.route,
          "nim",
          "deepseek-chat",
          200,
          JSON.stringify(oldTrace),
        );
      old.close();

      const store = await sqliteStore(new Database(path), { traceRetention: false });
      expect((await store.conversations.load("old"))?.map((stored) => stored.message)).toEqual([
        { role: "user", parts: [{ type: "text", text: "before" }] },
      ]);
      expect(await store.conversations.load("old", { owner: "team-a" })).toBeUndefined();
      expect((await store.traces.list()).traces).toEqual([
        {
          id: "trace-old",
          requestId: "req-old",
          createdAt: oldTrace.createdAt,
          route: "POST /v1/messages",
          provider: "nim",
          clientModel: "claude-sonnet-4-5",
          upstreamModel: "deepseek-chat",
          status: 200,
          durationMs: 3,
          lossyCount: 0,
          repairCount: 1,
        },
      ]);
      const shown = (await store.traces.get("req-old"))!;
      expect(JSON.parse(shown.clientRequest!)).toEqual(oldTrace.clientRequest);
      expect(shown.upstreamResponse).toBe(oldTrace.upstreamResponse);
      const { model: _model, clientRequest: _client, upstreamRequest: _upstream, ...fields } = oldTrace;
      await store.traces.record({ ...fields, id: "trace-new", requestId: "req-new", tenant: "t" });
      expect((await store.traces.list({ tenant: "t" })).traces.map((trace) => trace.id)).toEqual(["trace-new"]);
      await expectAnswersKept(store.answers);
      await store.close();
      const database = new Database(path, { readonly: true });
      expect(database.prepare("SELECT version FROM schema_migrations ORDER BY version").all()).toEqual(
        sqliteMigrations.map(({ version }) => ({ version })),
      );
      database.close();
    },
  );
});

describe("sqlite store shared by several processes", () => {
  test("appends from two connections and a child process to one conversation never interleave or collide", async () => {
    const path = freshPath();
    const first = await sqliteStore(new Database(path));
    const second = await sqliteStore(new Database(path));
    const { id } = await first.conversations.create();
    const appendAll = async (store: Store, label: string) => {
      for (let batch = 0; batch < 40; batch++) {
        await store.conversations.append(id, appendBatch(label, batch));
        // Yield to the event loop so the two connections alternate, as two requests would.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const child = startHelper("append-child", [`sqlite:${path}`, id, "40", "c"]);
    await child.ready;
    await Promise.all([appendAll(first, "a"), appendAll(second, "b"), child.done]);
    const loaded = (await first.conversations.load(id))!;
    expectBatchesIntact(loaded, [...appendBatches("a", 40), ...appendBatches("b", 40), ...appendBatches("c", 40)]);
    expect(loaded.map((stored) => stored.seq)).toEqual(loaded.map((_, index) => index + 1));
    await Promise.all([first.close(), second.close()]);
  });
});

describe("sqlite store upgrades to stored answers", () => {
  test("a database at step 4 takes step 5: its conversations are kept and answers are kept from then on", async () => {
    const path = freshPath();
    const old = new Database(path);
    old.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
    for (const migration of sqliteMigrations.filter(({ version }) => version <= 4)) {
      old.exec(migration.sql);
      old.prepare("INSERT INTO schema_migrations VALUES (?, '2026-01-01T00:00:00.000Z')").run(migration.version);
    }
    old
      .prepare(
        "INSERT INTO conversations (id, created_at, metadata, next_seq, owner) VALUES ('old', 'then', '{}', 1, 't')",
      )
      .run();
    old.close();

    const store = await sqliteStore(new Database(path), { traceRetention: false });
    expect(await store.conversations.load("old", { owner: "t" })).toEqual([]);
    await expectAnswersKept(store.answers);
    await store.close();
    const database = new Database(path, { readonly: true });
    expect(database.prepare("SELECT version FROM schema_migrations ORDER BY version").all()).toEqual(
      sqliteMigrations.map(({ version }) => ({ version })),
    );
    database.close();
  });
});
