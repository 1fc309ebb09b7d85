import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { afterEach, describe, expect, test } from "vitest";
import { claudeCodeSession } from "../test-support/claude-code-session.js";
import { REDACTED } from "./redact.js";
import type { TraceWriterOptions } from "./trace-queue.js";
import type { TraceRecord, TraceStore, TraceSummary } from "./trace-store.js";

/** A trace store as a backend opens it, and what closes it (writing what its writer holds first). */
export interface OpenedTraces {
  traces: TraceStore;
  close(): Promise<void>;
}

/**
 * The behaviour every backend's trace store must have. Each backend's test file calls this with a function that
 * opens a fresh, empty store with the writer's options.
 */
export function runTraceContract(name: string, open: (options?: TraceWriterOptions) => Promise<OpenedTraces>): void {
  describe(`${name} trace store contract`, () => {
    const opened: OpenedTraces[] = [];
    const fresh = async (options?: TraceWriterOptions) => {
      const store = await open(options);
      opened.push(store);
      return store.traces;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });

    test("are recorded with keys redacted, listed newest first with their summary, and shown whole", async () => {
      const store = await fresh({ traceSecrets: ["configured-upstream-key-42"] });
      const older = trace("trace-1", "2026-01-01T10:00:00.000Z");
      const newer = trace("trace-2", "2026-01-01T10:00:05.000Z");
      await Promise.all([store.record(newer), store.record(older)]);
      const page = await store.list();
      expect(page.nextCursor).toBeUndefined();
      expect(page.traces).toEqual([summary(newer), summary(older)]);
      expect((await store.list({ limit: 1 })).traces).toHaveLength(1);
      const shown = (await store.get("trace-1"))!;
      expect(shown.clientRequest).toBe(
        `{"model":"claude-x","x-api-key":"${REDACTED}","messages":[{"role":"user","content":"my key is ${REDACTED}"}]}`,
      );
      expect(shown.upstreamRequest).toBe(`{"headers":[["Authorization","Bearer ${REDACTED}"]],"model":"m"}`);
      expect(shown.upstreamResponse).toBe(`data: {"error":"key sk-${REDACTED} is invalid"}\n\n`);
      expect(shown.clientResponse).toBe(older.clientResponse);
      expect(shown.lossy).toEqual(older.lossy);
      expect(shown.repair).toEqual([{ messageIndex: 1, code: "thinking-to-text", note: `saw ${REDACTED}` }]);
      expect(shown.timings).toEqual(older.timings);
      const { lossyCount: _lossy, repairCount: _repair, ...listed } = summary(older);
      expect(shown).toMatchObject(listed);
      const text = JSON.stringify(shown);
      for (const secret of ["sk-live-0123456789", "abcdefghijklmnop", "configured-upstream-key-42", "sk-ant-secret"]) {
        expect(text).not.toContain(secret);
      }
      expect(await store.get("missing")).toBeUndefined();
      expect(store.stats()).toMatchObject({ recorded: 2, dropped: 0, failed: 0, queued: 0 });
    });

    test("keep their reports whole, with a key-shaped text or a credential member in them redacted", async () => {
      const store = await fresh();
      const reported: TraceRecord = {
        ...trace("reports", "2026-01-01T10:00:00.000Z"),
        lossy: [
          { code: "field-dropped", message: "dropped Bearer abcdefghijklmnop", path: "metadata" },
          { code: "field-dropped", message: "kept", path: "messages[0]", detail: { "X-Api-Key": "k-123456789" } },
        ] as TraceRecord["lossy"],
        repair: [],
        arrivals: { upstreamResponse: [0, 1.5, 20, 3.25] },
        storedMessages: 4,
        lossyStages: { clientRequest: 1, upstreamRequest: 1 },
      };
      const plain: TraceRecord = { ...trace("plain", "2026-01-01T10:00:01.000Z"), repair: [] };
      await Promise.all([store.record(reported), store.record(plain)]);
      const shown = (await store.get("reports"))!;
      expect(shown.lossy).toEqual([
        { code: "field-dropped", message: `dropped Bearer ${REDACTED}`, path: "metadata" },
        { code: "field-dropped", message: "kept", path: "messages[0]", detail: { "X-Api-Key": REDACTED } },
      ]);
      expect(shown.arrivals).toEqual(reported.arrivals);
      expect(shown.storedMessages).toBe(4);
      expect(shown.lossyStages).toEqual(reported.lossyStages);
      const { lossy, repair, timings } = (await store.get("plain"))!;
      expect({ lossy, repair, timings }).toEqual({ lossy: plain.lossy, repair: [], timings: plain.timings });
    });

    test("keep the prompt cache's figures and a switch of route, listed and whole; a trace without them has none", async () => {
      const store = await fresh();
      const cached: TraceRecord = {
        ...trace("cached", "2026-01-01T10:00:00.000Z"),
        inputTokens: 20,
        cacheReadTokens: 900,
        cacheWriteTokens: 80,
        switchedFrom: { provider: "claude", model: "claude-sonnet-4-5" },
      };
      const plain = trace("plain", "2026-01-01T10:00:01.000Z");
      await Promise.all([store.record(cached), store.record(plain)]);
      const listed = (await store.list()).traces;
      expect(listed.map((entry) => entry.id)).toEqual(["plain", "cached"]);
      expect(listed[1]).toEqual(summary(cached));
      expect(listed[0]).not.toHaveProperty("cacheReadTokens");
      expect(listed[0]).not.toHaveProperty("switchedFrom");
      expect(await store.get("cached")).toMatchObject({
        inputTokens: 20,
        cacheReadTokens: 900,
        cacheWriteTokens: 80,
        outputTokens: 4,
        switchedFrom: { provider: "claude", model: "claude-sonnet-4-5" },
      });
      const whole = (await store.get("plain"))!;
      expect(whole.cacheReadTokens).toBeUndefined();
      expect(whole.switchedFrom).toBeUndefined();
    });

    test("are found by the request id the logs and headers print, the newest first", async () => {
      const store = await fresh();
      await store.record({ ...trace("first", "2026-01-01T10:00:00.000Z"), requestId: "req_shared" });
      await store.record({ ...trace("second", "2026-01-01T10:00:01.000Z"), requestId: "req_shared" });
      expect((await store.get("req_shared"))?.id).toBe("second");
      expect((await store.get("first"))?.requestId).toBe("req_shared");
    });

    test("keep when each piece of a stream arrived, and how much stored history went in front", async () => {
      const store = await fresh();
      const arrivals = { upstreamResponse: [0, 12.5, 40, 30.25], clientResponse: [0, 13] };
      await store.record({
        ...trace("timed", "2026-01-01T10:00:00.000Z"),
        arrivals,
        storedMessages: 4,
        lossyStages: { clientRequest: 1, upstreamRequest: 2 },
      });
      const shown = (await store.get("timed"))!;
      expect(shown.arrivals).toEqual(arrivals);
      expect(shown.storedMessages).toBe(4);
      expect(shown.lossyStages).toEqual({ clientRequest: 1, upstreamRequest: 2 });
      expect((await store.list()).traces[0]).not.toHaveProperty("arrivals");
      await store.record(trace("untimed", "2026-01-01T10:00:01.000Z"));
      expect(await store.get("untimed")).not.toHaveProperty("arrivals");
    });

    test("recording an id again replaces the trace and what it held", async () => {
      const store = await fresh();
      await store.record({ ...trace("same", "2026-01-01T10:00:00.000Z"), clientRequest: "a".repeat(50_000) });
      await store.record({ ...trace("same", "2026-01-01T10:00:00.000Z"), status: 502 });
      expect((await store.list()).traces.map((listed) => listed.status)).toEqual([502]);
      const single = await fresh();
      await single.record({ ...trace("same", "2026-01-01T10:00:00.000Z"), status: 502 });
      expect(await store.get("same")).toEqual(await single.get("same"));
      expect(await store.usage()).toEqual(await single.usage());
    });

    test("every body comes back exactly as it was recorded", async () => {
      const store = await fresh();
      const big = Array.from({ length: 3_000 }, (_, index) => `line ${index} ${"é😀".repeat(index % 7)}\r\n`).join("");
      const bodies = ["", "\u0000\u001b[31m\r\n", "lone \ud800 surrogate", big, `{"a": 1.0, "b":[ ]}`];
      for (const [index, body] of bodies.entries()) {
        await store.record({ ...trace(`exact-${index}`, "2026-01-01T10:00:00.000Z"), upstreamResponse: body });
        expect((await store.get(`exact-${index}`))?.upstreamResponse).toBe(body);
      }
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: "binary", maxLength: 3_000 }), async (body) => {
          await store.record({ ...trace("any", "2026-01-01T10:00:00.000Z"), clientResponse: body });
          expect((await store.get("any"))?.clientResponse).toBe(body);
        }),
        { numRuns: 25 },
      );
    });

    test("are pruned by count, by age and by bytes, the oldest first", async () => {
      const store = await fresh();
      const now = Date.now();
      for (let index = 0; index < 6; index++) {
        await store.record(trace(`t${index}`, new Date(now - index * 60_000).toISOString()));
      }
      const ids = async () => (await store.list()).traces.map((listed) => listed.id);
      expect(await store.prune({ maxCount: 4 })).toBe(2);
      expect(await ids()).toEqual(["t0", "t1", "t2", "t3"]);
      expect(await store.prune({ maxAgeMs: 90_000 })).toBe(2);
      expect(await ids()).toEqual(["t0", "t1"]);
      expect(await store.prune({})).toBe(0);
      const usage = await store.usage();
      expect(usage.traces).toBe(2);
      expect(await store.prune({ maxBytes: usage.bytes - 1 })).toBe(1);
      expect(await ids()).toEqual(["t0"]);
      expect(await store.prune({ maxCount: 0 })).toBe(1);
      expect(await store.usage()).toEqual({ traces: 0, bytes: 0 });
    });

    test("the writer keeps maxBytes and maxCount as it writes, evicting the oldest", async () => {
      const store = await fresh({ traceRetention: { maxBytes: 400_000, maxCount: 1_000 } });
      // Distinct bodies that barely compress: nothing shared, so the bytes bound is what binds.
      const noise = (length: number) => randomBytes((length * 3) / 4).toString("base64");
      for (let index = 0; index < 40; index++) {
        await store.record({
          ...trace(`b${index}`, new Date(Date.UTC(2026, 0, 1, 10, 0, index)).toISOString()),
          clientRequest: noise(20_000),
        });
        expect((await store.usage()).bytes).toBeLessThanOrEqual(400_000);
      }
      const kept = (await store.list({ limit: 100 })).traces.map((listed) => listed.id);
      expect(kept.length).toBeGreaterThan(5);
      expect(kept.length).toBeLessThan(40);
      expect(kept[0]).toBe("b39");
      expect(kept).toEqual(kept.map((_, index) => `b${39 - index}`));

      const counted = await fresh({ traceRetention: { maxCount: 3 } });
      for (let index = 0; index < 5; index++) await counted.record(trace(`c${index}`, `2026-01-01T10:00:0${index}Z`));
      expect((await counted.list()).traces.map((listed) => listed.id)).toEqual(["c4", "c3", "c2"]);
    });

    test("are filtered by status, model, conversation, losses and tenant, and paged by cursor", async () => {
      const store = await fresh();
      const recorded: TraceRecord[] = [];
      for (let index = 0; index < 30; index++) {
        const entry: TraceRecord = {
          ...trace(
            `f${String(index).padStart(2, "0")}`,
            new Date(Date.UTC(2026, 0, 1, 0, 0, index % 10)).toISOString(),
          ),
          status: [200, 400, 502][index % 3]!,
          clientModel: index % 2 === 0 ? "claude-even" : "claude-odd",
          upstreamModel: index % 5 === 0 ? "deepseek-five" : "m",
          conversationId: `conv-${index % 4}`,
          tenant: index % 6 === 0 ? "acme" : "other",
          lossy: index % 7 === 0 ? [] : trace("", "").lossy,
        };
        recorded.push(entry);
      }
      await Promise.all(recorded.map((entry) => store.record(entry)));
      // Newest first; same instant: the later recorded first.
      const order = [...recorded]
        .reverse()
        .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
      const all = async (query: Parameters<TraceStore["list"]>[0], pageSize: number) => {
        const seen: TraceSummary[] = [];
        let cursor: string | undefined;
        do {
          const page = await store.list({ ...query, limit: pageSize, ...(cursor ? { cursor } : {}) });
          expect(page.traces.length).toBeLessThanOrEqual(pageSize);
          seen.push(...page.traces);
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        return seen.map((listed) => listed.id);
      };
      const expectIds = (keep: (entry: TraceRecord) => boolean) => order.filter(keep).map((entry) => entry.id);
      expect(await all({}, 7)).toEqual(expectIds(() => true));
      expect(await all({}, 30)).toEqual(expectIds(() => true));
      expect(await all({ status: 502 }, 4)).toEqual(expectIds((entry) => entry.status === 502));
      expect(await all({ status: { from: 400, to: 599 } }, 4)).toEqual(expectIds((entry) => entry.status! >= 400));
      expect(await all({ model: "claude-odd" }, 5)).toEqual(expectIds((entry) => entry.clientModel === "claude-odd"));
      expect(await all({ model: "deepseek-five" }, 5)).toEqual(
        expectIds((entry) => entry.upstreamModel === "deepseek-five"),
      );
      expect(await all({ conversationId: "conv-3" }, 2)).toEqual(
        expectIds((entry) => entry.conversationId === "conv-3"),
      );
      expect(await all({ hasLosses: false }, 3)).toEqual(expectIds((entry) => entry.lossy.length === 0));
      expect(await all({ hasLosses: true, tenant: "acme", status: 200 }, 1)).toEqual(
        expectIds((entry) => entry.lossy.length > 0 && entry.tenant === "acme" && entry.status === 200),
      );
      await expect(store.list({ cursor: "not-a-cursor" })).rejects.toThrow("cursor");
    });

    test("a 200-turn agent session stores at most 3x its last request and answers, not the square", async () => {
      const store = await fresh({ traceRetention: { maxCount: 10_000, maxBytes: 1024 ** 3 } });
      let whole = 0;
      let answers = 0;
      let last = 0;
      let turn = 0;
      let pending: Array<Promise<void>> = [];
      let check:
        | { id: string; bodies: ReturnType<typeof claudeCodeSession> extends Generator<infer T> ? T : never }
        | undefined;
      for (const bodies of claudeCodeSession(200)) {
        const id = `turn-${turn}`;
        pending.push(
          store.record({ ...trace(id, new Date(Date.UTC(2026, 0, 1, 0, 0, turn)).toISOString()), ...bodies }),
        );
        if (turn === 150) check = { id, bodies };
        // A gateway records one trace per turn; ten at a time keeps the queue within its bound.
        if (pending.length === 10) {
          await Promise.all(pending);
          pending = [];
        }
        whole += Object.values(bodies).reduce((sum, body) => sum + Buffer.byteLength(body), 0);
        answers += Buffer.byteLength(bodies.clientResponse);
        last = Buffer.byteLength(bodies.clientRequest);
        turn++;
      }
      await Promise.all(pending);
      const { bytes, traces } = await store.usage();
      expect(traces).toBe(200);
      expect(bytes).toBeLessThanOrEqual(3 * (last + answers));
      // Storing the bodies whole would take the square: about a hundred times as much.
      expect(whole).toBeGreaterThan(50 * (last + answers));
      const shown = (await store.get(check!.id))!;
      for (const [name, body] of Object.entries(check!.bodies)) expect(shown[name as keyof TraceRecord]).toBe(body);
      expect(await store.prune({ maxCount: 0 })).toBe(200);
      expect(await store.usage()).toEqual({ traces: 0, bytes: 0 });
    });
  });
}

function summary(recorded: TraceRecord): TraceSummary {
  const { clientRequest, upstreamRequest, upstreamResponse, clientResponse, lossy, repair, timings, ...fields } =
    recorded;
  return { ...fields, lossyCount: lossy.length, repairCount: repair.length };
}

export function trace(id: string, createdAt: string): TraceRecord {
  return {
    id,
    requestId: `req-${id}`,
    createdAt,
    route: "POST /v1/messages",
    provider: "local",
    clientModel: "claude-x",
    upstreamModel: "m",
    status: 200,
    durationMs: 12.5,
    inputTokens: 30,
    outputTokens: 4,
    conversationId: "conv-1",
    tenant: "acme",
    stream: true,
    clientRequest: `{"model":"claude-x","x-api-key":"sk-ant-secret-value","messages":[{"role":"user","content":"my key is configured-upstream-key-42"}]}`,
    upstreamRequest: `{"headers":[["Authorization","Bearer abcdefghijklmnop"]],"model":"m"}`,
    upstreamResponse: 'data: {"error":"key sk-live-0123456789 is invalid"}\n\n',
    clientResponse: "event: message_start\ndata: {}\n\n",
    lossy: [{ code: "reasoning-interleaving-flattened", message: "flattened", path: "messages[1]" }],
    repair: [{ messageIndex: 1, code: "thinking-to-text", note: "saw configured-upstream-key-42" }],
    timings: { totalMs: 12.5, upstreamMs: 10 },
  };
}
