import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { sqliteStore } from "../open-store.js";
import { DEFAULT_OWNER } from "../owner.js";
import { trace } from "../traces/contract.suite.js";
import { TraceNotRecordedError } from "../traces/trace-queue.js";
import type { TraceQuery } from "../traces/trace-store.js";
import { sqliteMigrations } from "./migrations.js";
import { listSql } from "./trace-tables.js";

const folder = mkdtempSync(join(tmpdir(), "parley-sqlite-traces-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(folder, `traces-${files++}.db`);
const MB = 1024 * 1024;

/** Bodies that do not compress and share nothing, so the file grows with every trace. */
const noise = (bytes: number) => randomBytes((bytes * 3) / 4).toString("base64");

describe("sqlite trace storage", () => {
  test("pruning gives the space back to the file system", async () => {
    const path = freshPath();
    const store = await sqliteStore(new Database(path), { traceRetention: false });
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(
        Array.from({ length: 30 }, (_, index) =>
          store.traces.record({
            ...trace(`t${batch}-${index}`, new Date(Date.UTC(2026, 0, 1, batch, index)).toISOString()),
            clientRequest: noise(64 * 1024),
          }),
        ),
      );
    }
    await store.close();
    const full = statSync(path).size;
    expect(full).toBeGreaterThan(15 * MB);
    const reopened = await sqliteStore(new Database(path), { traceRetention: false });
    expect(await reopened.traces.prune({ maxCount: 10 })).toBe(290);
    expect((await reopened.traces.list({ limit: 100 })).traces).toHaveLength(10);
    await reopened.close();
    expect(statSync(path).size).toBeLessThan(full / 10);
  });

  test("written past maxBytes, the file stays within it: the traces' pages, not only the bytes counted", async () => {
    const path = freshPath();
    const maxBytes = 4 * MB;
    // The file with every table and no trace: the pages that are not the traces'.
    await (await sqliteStore(new Database(path), { traceRetention: false })).close();
    const empty = statSync(path).size;
    const store = await sqliteStore(new Database(path), { traceRetention: { maxBytes, maxCount: 1_000_000 } });
    const words = "the quick brown fox jumps over the lazy dog while the gateway keeps the whole conversation ".split(
      " ",
    );
    const prose = (bytes: number) => {
      let text = "";
      while (text.length < bytes) text += `${words[Math.floor(Math.random() * words.length)]} `;
      return text.slice(0, bytes);
    };
    let count = 0;
    let history: string[] = [];
    // Three shapes: bodies that do not compress (their chunks' last overflow pages partly empty), small traces (rows
    // and index entries), and an agent's turns (each request the last with a turn added, the answers streamed).
    const next = (shape: number) => {
      const at = new Date(Date.UTC(2026, 0, 1) + count * 1000).toISOString();
      const one = { ...trace(`size-${String(count++).padStart(6, "0")}`, at), lossy: [], repair: [] };
      if (shape === 0) return { ...one, clientRequest: noise(48 * 1024), upstreamRequest: noise(6 * 1024) };
      if (shape === 1) {
        const answer = JSON.stringify({ content: prose(400) });
        return { ...one, clientRequest: prose(300), upstreamResponse: answer, clientResponse: answer };
      }
      if (history.length === 40) history = [];
      history.push(JSON.stringify({ role: "user", content: prose(2000 + Math.floor(Math.random() * 3000)) }));
      const stream = Array.from({ length: 100 }, () => `data: {"delta":"${prose(20)}"}\n\n`).join("");
      return {
        ...one,
        clientRequest: `{"system":"${prose(8000)}","messages":[${history.join(",")}]}`,
        upstreamRequest: `{"messages":[${history.join(",")}]}`,
        upstreamResponse: stream,
        clientResponse: stream,
      };
    };
    const reader = new Database(path, { readonly: true });
    const pages = () => Number(reader.pragma("page_count", { simple: true })) * 4096;
    let largest = 0;
    for (let round = 0; round < 12; round++) {
      for (let batch = 0; batch < 4; batch++) {
        await Promise.all(Array.from({ length: 40 }, () => store.traces.record(next(round % 3))));
        largest = Math.max(largest, pages());
      }
    }
    const usage = await store.traces.usage();
    reader.close();
    await store.close();
    const file = statSync(path).size;
    console.log(
      `maxBytes ${maxBytes / MB} MB: file ${(file / MB).toFixed(2)} MB, at most ${(largest / MB).toFixed(2)} MB while ` +
        `written; ${usage.traces} traces kept, ${(usage.bytes / MB).toFixed(2)} MB counted`,
    );
    // Once settled and after every batch, within the bound and the pages that are not the traces'.
    expect(file).toBeLessThanOrEqual(maxBytes + empty);
    expect(largest).toBeLessThanOrEqual(maxBytes + empty);
    // Traces the bound has room for are kept, not pruned away.
    expect(usage.bytes).toBeGreaterThan(maxBytes / 2);
  });

  test("a database from before (auto_vacuum off, traces stored whole) is converted on open, its traces kept", async () => {
    const path = freshPath();
    const old = new Database(path);
    old.pragma("journal_mode = WAL");
    old.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
    old.exec(sqliteMigrations[0]!.sql);
    old.prepare("INSERT INTO schema_migrations VALUES (1, ?)").run(new Date().toISOString());
    const insert = old.prepare(
      "INSERT INTO traces (id, request_id, created_at, route, provider, model, status, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    );
    for (let index = 0; index < 200; index++) {
      const createdAt = new Date(Date.UTC(2026, 0, 1, 0, index)).toISOString();
      const record = {
        id: `old-${index}`,
        requestId: `req-old-${index}`,
        createdAt,
        route: "POST /v1/messages",
        provider: "nim",
        model: "deepseek-chat",
        status: 200,
        clientRequest: { model: "claude-sonnet-4-5", messages: [{ role: "user", content: noise(64 * 1024) }] },
        upstreamRequest: { model: "deepseek-chat", messages: [] },
        upstreamResponse: "data: [DONE]\n\n",
        lossy: [{ code: "dropped", message: "x" }],
        repair: [],
        timings: { totalMs: 7 },
      };
      insert.run(
        record.id,
        record.requestId,
        createdAt,
        record.route,
        "nim",
        "deepseek-chat",
        200,
        JSON.stringify(record),
      );
    }
    old.close();
    const before = new Database(path);
    expect(before.pragma("auto_vacuum", { simple: true })).toBe(0);
    before.close();
    const full = statSync(path).size;

    const store = await sqliteStore(new Database(path), { traceRetention: false });
    const [newest] = (await store.traces.list({ limit: 1 })).traces;
    expect(newest).toEqual({
      id: "old-199",
      requestId: "req-old-199",
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 199)).toISOString(),
      route: "POST /v1/messages",
      provider: "nim",
      clientModel: "claude-sonnet-4-5",
      upstreamModel: "deepseek-chat",
      status: 200,
      durationMs: 7,
      lossyCount: 1,
      repairCount: 0,
    });
    const shown = (await store.traces.get("req-old-3"))!;
    expect(JSON.parse(shown.clientRequest!).model).toBe("claude-sonnet-4-5");
    expect(shown.upstreamRequest).toBe('{"model":"deepseek-chat","messages":[]}');
    expect(shown.lossy).toEqual([{ code: "dropped", message: "x" }]);
    expect((await store.traces.list({ hasLosses: true, limit: 500 })).traces).toHaveLength(200);
    // New traces go beside the old ones; pruning counts both and frees the old rows' pages.
    await store.traces.record(trace("new", new Date(Date.UTC(2026, 0, 2)).toISOString()));
    expect((await store.traces.usage()).traces).toBe(201);
    expect(await store.traces.prune({ maxCount: 10 })).toBe(191);
    await store.close();
    const database = new Database(path);
    expect(database.pragma("auto_vacuum", { simple: true })).toBe(2);
    database.close();
    expect(statSync(path).size).toBeLessThan(full / 5);
  });

  test("responses are kept in their trace's row, not as chunks, and come back exactly", async () => {
    const path = freshPath();
    const store = await sqliteStore(new Database(path));
    const stream = Array.from({ length: 80 }, (_, index) => `data: {"delta":"word ${index} é"}\n\n`).join("");
    const small = {
      ...trace("small", "2026-01-01T00:00:00.000Z"),
      upstreamResponse: '{"choices":[]}',
      clientResponse: '{"content":"ok"}',
    };
    const large = { ...trace("large", "2026-01-01T00:00:01.000Z"), upstreamResponse: stream, clientResponse: stream };
    await Promise.all([store.traces.record(small), store.traces.record(large)]);
    for (const written of [small, large]) {
      const shown = (await store.traces.get(written.id))!;
      expect(shown.clientResponse).toBe(written.clientResponse);
      expect(shown.upstreamResponse).toBe(written.upstreamResponse);
    }
    await store.close();
    const database = new Database(path, { readonly: true });
    const rows = database.prepare("SELECT id, length(inline_bodies) AS inline FROM traces ORDER BY id").all();
    // Two event streams of ~2.4 KB each are past the deflate threshold: stored in far fewer bytes than sent.
    expect(rows).toEqual([
      { id: "large", inline: expect.any(Number) },
      { id: "small", inline: expect.any(Number) },
    ]);
    const [largeRow] = rows as Array<{ inline: number }>;
    expect(largeRow!.inline).toBeLessThan(Buffer.byteLength(stream) / 2);
    // Only the request bodies' chunks are shared rows: a response has none.
    const chunks = database.prepare("SELECT count(*) AS n FROM trace_chunks").get() as { n: number };
    const requestChunks = new Set(
      [small, large].flatMap((written) => [written.clientRequest, written.upstreamRequest]).filter(Boolean),
    ).size;
    expect(chunks.n).toBe(requestChunks);
    database.close();
  });

  test("a batch larger than a write slice, its chunks shared across slices and an id recorded again, is stored as if trace by trace", async () => {
    const shared = noise(40 * 1024);
    const batch = Array.from({ length: 100 }, (_, index) => ({
      ...trace(index === 70 ? "again" : `slice-${index}`, new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString()),
      clientRequest: index % 3 === 0 ? noise(8 * 1024) : `${shared}${index}`,
    }));
    const first = { ...trace("again", "2026-01-01T00:00:00.000Z"), clientRequest: noise(30 * 1024) };
    const batched = await sqliteStore(new Database(freshPath()), { traceRetention: false });
    await batched.traces.record(first);
    // Queued together, they go to the writer as one batch; the id already stored fails it and it is written again
    // a trace at a time.
    await Promise.all(batch.map((one) => batched.traces.record(one)));
    const single = await sqliteStore(new Database(freshPath()), { traceRetention: false, traceQueue: { delayMs: 0 } });
    await single.traces.record(first);
    for (const one of batch) await single.traces.record(one);
    for (const store of [batched, single]) {
      expect((await store.traces.list({ limit: 200 })).traces).toHaveLength(100);
      for (const one of [batch[0]!, batch[1]!, batch[70]!, batch[99]!]) {
        expect((await store.traces.get(one.id))?.clientRequest).toBe(one.clientRequest);
      }
    }
    expect(await batched.traces.usage()).toEqual(await single.traces.usage());
    expect(batched.traces.stats()).toMatchObject({ recorded: 101, failed: 0, dropped: 0 });
    await Promise.all([batched.close(), single.close()]);
  });

  test("a trace waits ~10 ms for others before going to the writer's thread, not the queue's 100", async () => {
    const store = await sqliteStore(new Database(freshPath()));
    // The thread started and its statements prepared.
    await store.traces.record(trace("warm", "2026-01-01T00:00:00.000Z"));
    const took: number[] = [];
    for (let index = 0; index < 3; index++) {
      const started = performance.now();
      await store.traces.record(trace(`lone-${index}`, "2026-01-01T00:00:01.000Z"));
      took.push(performance.now() - started);
    }
    // A batch held 100 ms could never take less; the least of three spares a loaded machine's pauses.
    expect(Math.min(...took)).toBeLessThan(90);
    await store.close();
  });

  test("a writer that falls behind drops traces and counts them instead of queueing without bound", async () => {
    const path = freshPath();
    const store = await sqliteStore(new Database(path), { traceQueue: { maxTraces: 3 } });
    await store.traces.record(trace("first", "2026-01-01T00:00:00.000Z"));
    // Another process holds the write lock: the writer waits on it.
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        store.traces.record(trace(`behind-${index}`, "2026-01-01T00:00:01.000Z")).then(
          () => "stored",
          (error: unknown) => (error instanceof TraceNotRecordedError ? error.reason : "other"),
        ),
      ).map(async (result, index) => {
        // The first three are queued; let the rest find the queue full, then release the lock.
        if (index === 9) setTimeout(() => other.exec("COMMIT"), 200);
        return result;
      }),
    );
    expect(results.filter((result) => result === "queue_full")).toHaveLength(7);
    expect(results.filter((result) => result === "stored")).toHaveLength(3);
    expect(store.traces.stats()).toEqual({ recorded: 4, dropped: 7, failed: 0, queued: 0 });
    expect((await store.traces.usage()).traces).toBe(4);
    other.close();
    await store.close();
  });

  test("every filter of a trace list reads an index newest first, never sorting what it found", async () => {
    const store = await sqliteStore(new Database(freshPath()));
    const database = new Database(join(folder, `traces-${files - 1}.db`));
    const queries: TraceQuery[] = [
      {},
      { status: 502 },
      { status: { from: 500, to: 599 } },
      { model: "m" },
      { conversationId: "c" },
      { hasLosses: true },
      { tenant: "t" },
      { tenant: DEFAULT_OWNER },
      { conversationId: "c", status: 200, hasLosses: false },
      { cursor: Buffer.from("2026-01-01T00:00:00.000Z|5").toString("base64url") },
    ];
    for (const query of queries) {
      const { sql, values } = listSql(query);
      const plan = (database.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...values, 51) as Array<{ detail: string }>)
        .map((step) => step.detail)
        .join("; ");
      expect(plan, JSON.stringify(query)).toMatch(/USING INDEX/);
      expect(plan, JSON.stringify(query)).not.toMatch(/SCAN traces(?! USING)/);
      // A filter without an index of its own walks the newest-first one and stops at its page.
      expect(plan, JSON.stringify(query)).not.toMatch(/TEMP B-TREE/);
    }
    database.close();
    await store.close();
  });
});
