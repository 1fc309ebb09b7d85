import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, inject, test } from "vitest";
import { runAnswerContract } from "../answers/contract.suite.js";
import { expectBatchesIntact, runConversationContract } from "../conversations/contract.suite.js";
import { openStore, postgresStore } from "../open-store.js";
import { DEFAULT_OWNER } from "../owner.js";
import { expectAnswersKept } from "../test-support/answers.js";
import { appendBatch, appendBatches } from "../test-support/batches.js";
import { startHelper } from "../test-support/run-child.js";
import { runTraceContract } from "../traces/contract.suite.js";
import type { TraceWriterOptions } from "../traces/trace-queue.js";
import { postgresMigrations } from "./migrations.js";

const serverUrl = inject("postgresUrl");
const admin = new pg.Pool({ connectionString: serverUrl, max: 2 });
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});

/** A store URL on an empty schema of its own, so tests and files never see each other's rows. */
async function freshSchemaUrl(): Promise<string> {
  const schema = `parley_test_${randomBytes(6).toString("hex")}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  schemas.push(schema);
  const url = new URL(serverUrl);
  url.searchParams.set("options", `-c search_path=${schema}`);
  return url.toString();
}

const fresh = async (options?: TraceWriterOptions) =>
  postgresStore(new pg.Pool({ connectionString: await freshSchemaUrl() }), options);
runConversationContract("postgres", fresh);
runAnswerContract("postgres", fresh);
runTraceContract("postgres", fresh);

describe("postgres store shared by several gateways", () => {
  test("two pools starting at once migrate once, and record the version", async () => {
    const url = await freshSchemaUrl();
    const stores = await Promise.all([openStore(url), openStore(url), openStore(url)]);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const versions = await pool.query("SELECT version FROM schema_migrations ORDER BY version");
    await pool.end();
    expect(versions.rows).toEqual(postgresMigrations.map(({ version }) => ({ version })));
    await Promise.all(stores.map((store) => store.close()));
  });

  test("appends from two pools and a child process to one conversation never interleave or collide", async () => {
    const url = await freshSchemaUrl();
    const [first, second] = await Promise.all([openStore(url), openStore(url)]);
    const { id } = await first!.conversations.create();
    const appendAll = async (store: typeof first, label: string) => {
      for (let batch = 0; batch < 40; batch++) await store!.conversations.append(id, appendBatch(label, batch));
    };
    // The child signals once its store is open, so all three writers run at the same time.
    const child = startHelper("append-child", [url, id, "40", "c"]);
    await child.ready;
    await Promise.all([appendAll(first, "a"), appendAll(second, "b"), child.done]);
    const loaded = (await second!.conversations.load(id))!;
    expectBatchesIntact(loaded, [...appendBatches("a", 40), ...appendBatches("b", 40), ...appendBatches("c", 40)]);
    expect(loaded.map((stored) => stored.seq)).toEqual(loaded.map((_, index) => index + 1));
    await Promise.all([first!.close(), second!.close()]);
  });
});

describe("postgres store upgrades", () => {
  /** A schema as a release that stopped at `step` left it, with one conversation holding one message. */
  async function schemaAtStep(step: number): Promise<string> {
    const url = await freshSchemaUrl();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    await pool.query("CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL)");
    for (const migration of postgresMigrations.filter(({ version }) => version <= step)) {
      await pool.query(migration.sql);
      await pool.query("INSERT INTO schema_migrations VALUES ($1, now())", [migration.version]);
    }
    await pool.query("INSERT INTO conversations (id, created_at, metadata, next_seq) VALUES ('old', now(), '{}', 2)");
    const message = await pool.query(
      `INSERT INTO messages (conversation_id, seq, role, complete, created_at, extra)
       VALUES ('old', 1, 'user', true, now(), '{"role":"user","parts":[]}') RETURNING id`,
    );
    await pool.query("INSERT INTO parts VALUES ($1, 0, $2)", [message.rows[0].id, '{"type":"text","text":"before"}']);
    await pool.query(
      `INSERT INTO traces (id, request_id, created_at, route, provider, model, status, record)
       VALUES ('trace-old', 'req-old', $1, 'POST /v1/messages', 'nim', 'deepseek-chat', 200, $2)`,
      [oldTrace.createdAt, JSON.stringify(oldTrace)],
    );
    await pool.end();
    return url;
  }

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
    lossy: [],
    repair: [{ messageIndex: 0, code: "x" }],
    timings: { totalMs: 3 },
  };

  test.each([1, 2, 3])(
    "a database at step %i takes every later step; its conversations are the default owner's, its traces kept",
    async (step) => {
      const url = await schemaAtStep(step);
      // Without retention: the old trace is older than the default age limit.
      const store = await openStore(url, { traceRetention: false });
      const before = { role: "user", parts: [{ type: "text", text: "before" }] };
      expect((await store.conversations.load("old"))?.map((stored) => stored.message)).toEqual([before]);
      expect(await store.conversations.load("old", { owner: "team-a" })).toBeUndefined();
      const source = { format: "anthropic" as const, json: '{"role":"user", "content":"after"}' };
      await store.conversations.append("old", [{ role: "user", parts: [{ type: "text", text: "after" }] }], {
        sources: [source],
        owner: DEFAULT_OWNER,
      });
      expect((await store.conversations.load("old"))?.map((stored) => stored.source)).toEqual([undefined, source]);
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
      await expectAnswersKept(store.answers);
      await store.close();
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      const versions = await pool.query("SELECT version FROM schema_migrations ORDER BY version");
      await pool.end();
      expect(versions.rows).toEqual(postgresMigrations.map((migration) => ({ version: migration.version })));
    },
  );
});

describe("postgres store upgrades to stored answers", () => {
  test("a schema at step 4 takes step 5: its conversations are kept and answers are kept from then on", async () => {
    const url = await freshSchemaUrl();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    await pool.query("CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL)");
    for (const migration of postgresMigrations.filter(({ version }) => version <= 4)) {
      await pool.query(migration.sql);
      await pool.query("INSERT INTO schema_migrations VALUES ($1, now())", [migration.version]);
    }
    await pool.query(
      "INSERT INTO conversations (id, created_at, metadata, next_seq, owner) VALUES ('old', now(), '{}', 1, 't')",
    );
    await pool.end();

    const store = await openStore(url, { traceRetention: false });
    expect(await store.conversations.load("old", { owner: "t" })).toEqual([]);
    await expectAnswersKept(store.answers);
    await store.close();
    const check = new pg.Pool({ connectionString: url, max: 1 });
    const versions = await check.query("SELECT version FROM schema_migrations ORDER BY version");
    await check.end();
    expect(versions.rows).toEqual(postgresMigrations.map(({ version }) => ({ version })));
  });
});
