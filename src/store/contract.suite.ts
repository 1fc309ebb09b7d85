import fc from "fast-check";
import { afterEach, describe, expect, test } from "vitest";
import { InvalidRequestError, type Message, ParleyError, type Part } from "../core/index.js";
import { repair, validateFor } from "../repair/pipeline.js";
import { anthropicTarget } from "../repair/test-support/targets.js";
import { runFidelityContract } from "./contract-fidelity.suite.js";
import { NotFoundError } from "./errors.js";
import { REDACTED } from "./redact.js";
import { messageArbitrary } from "./test-support/arbitraries.js";
import { catalogueContract } from "./test-support/catalogue-contract.js";
import { ownerContract } from "./test-support/owner-contract.js";
import { answerEvents, regressionHistory } from "./test-support/regression-history.js";
import type { ConversationStore, TraceRecord } from "./types.js";

/**
 * The behaviour every backend must have. Each backend's test file calls this with a function that opens
 * a fresh, empty store.
 */
export function runStoreContract(name: string, open: () => Promise<ConversationStore>): void {
  describe(`${name} store contract`, () => {
    const opened: ConversationStore[] = [];
    const fresh = async () => {
      const store = await open();
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });

    describe("conversations", () => {
      test("are created with a generated or given id and known afterwards", async () => {
        const store = await fresh();
        const generated = await store.createConversation();
        const given = await store.createConversation({ id: "conv-given", metadata: { client: "test" } });
        expect(generated.id).toMatch(/\S/);
        expect(given.id).toBe("conv-given");
        expect(await store.hasConversation(generated.id)).toBe(true);
        expect(await store.hasConversation("conv-given")).toBe(true);
        expect(await store.hasConversation("conv-missing")).toBe(false);
        expect(await store.loadConversation("conv-given")).toEqual([]);
      });

      test("an id is never reused", async () => {
        const store = await fresh();
        await store.createConversation({ id: "twice" });
        await expect(store.createConversation({ id: "twice" })).rejects.toBeInstanceOf(InvalidRequestError);
      });

      test("an unknown id is not found, never created on the fly", async () => {
        const store = await fresh();
        expect(await store.loadConversation("nope")).toBeUndefined();
        const appending = store.appendMessages("nope", regressionHistory().slice(0, 1));
        await expect(appending).rejects.toBeInstanceOf(NotFoundError);
        await expect(store.appendMessages("nope", [])).rejects.toMatchObject({ type: "not_found_error", status: 404 });
        await expect(store.startMessage("nope", "assistant")).rejects.toBeInstanceOf(ParleyError);
        expect(await store.hasConversation("nope")).toBe(false);
      });
    });

    ownerContract(fresh);
    catalogueContract(fresh);

    describe("identity by construction", () => {
      test("the regression history loads the same appended one per call or all in one call", async () => {
        const store = await fresh();
        const history = regressionHistory();
        const one = await store.createConversation();
        for (const message of history) await store.appendMessages(one.id, [message]);
        const all = await store.createConversation();
        await store.appendMessages(all.id, history);

        const loadedOne = (await store.loadConversation(one.id))!;
        const loadedAll = (await store.loadConversation(all.id))!;
        const messagesOne = loadedOne.map((stored) => stored.message);
        const messagesAll = loadedAll.map((stored) => stored.message);
        expect(messagesOne).toEqual(history);
        expect(messagesAll).toEqual(history);
        expect(JSON.stringify(messagesOne)).toBe(JSON.stringify(history));
        expect(JSON.stringify(messagesAll)).toBe(JSON.stringify(history));
        expect(messagesOne.map((message) => message.role)).toEqual([
          "user",
          "assistant",
          "user",
          "assistant",
          "user",
          "assistant",
        ]);
        expect(messagesOne[3]!.parts.filter((part) => part.type === "tool_call")).toHaveLength(2);
        expect(loadedOne.every((stored) => stored.complete)).toBe(true);
        expect(loadedOne.map((stored) => stored.seq)).toEqual(loadedAll.map((stored) => stored.seq));
        expectIncreasing(loadedOne.map((stored) => stored.seq));
      });

      test("appendMessages returns what it stored, seqs continuing after earlier calls", async () => {
        const store = await fresh();
        const { id } = await store.createConversation();
        const history = regressionHistory();
        const first = await store.appendMessages(id, history.slice(0, 2));
        const second = await store.appendMessages(id, history.slice(2));
        expect([...first, ...second].map((stored) => stored.message)).toEqual(history);
        expectIncreasing([...first, ...second].map((stored) => stored.seq));
        expect(await store.loadConversation(id)).toEqual([...first, ...second]);
      });

      test("message-level fields and key order round-trip byte for byte", async () => {
        const store = await fresh();
        const { id } = await store.createConversation();
        const odd: Message[] = [
          { parts: [{ text: "keys in another order", type: "text" }], role: "user", textShorthand: true },
          { role: "system", parts: [{ type: "text", text: "lone \ud800 surrogate, \u0000 nul, \u2028 separator" }] },
          { role: "user", parts: [], extra: { openai: { name: "alice", nested: { b: 1, a: [null, true, 1.5e300] } } } },
          {
            role: "assistant",
            parts: [
              { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix" },
              { type: "opaque", format: "anthropic", block: { type: "server_tool_use", id: "srvtoolu_1", input: {} } },
              { type: "tool_call", id: "call_1", name: "f", input: {}, rawInput: "{not json" },
            ],
          },
        ];
        await store.appendMessages(id, odd);
        const loaded = (await store.loadConversation(id))!.map((stored) => stored.message);
        expect(JSON.stringify(loaded)).toBe(JSON.stringify(odd));
        expect(loaded).toEqual(odd);
      });

      test("any history split into any batches loads as the history", async () => {
        const store = await fresh();
        await fc.assert(
          fc.asyncProperty(
            fc.array(messageArbitrary, { maxLength: 8 }),
            fc.array(fc.nat(3), { maxLength: 8 }),
            async (history, cuts) => {
              const { id } = await store.createConversation();
              let start = 0;
              for (const cut of [...cuts, history.length]) {
                const end = Math.min(history.length, start + cut);
                await store.appendMessages(id, history.slice(start, end));
                start = end;
              }
              const loaded = (await store.loadConversation(id))!;
              const expected = JSON.parse(JSON.stringify(history)) as Message[];
              expect(JSON.stringify(loaded.map((stored) => stored.message))).toBe(JSON.stringify(history));
              expect(loaded.map((stored) => stored.message)).toEqual(expected);
              expectIncreasing(loaded.map((stored) => stored.seq));
            },
          ),
          { numRuns: 30 },
        );
      });

      test("a bad message appends nothing and names where it is wrong", async () => {
        const store = await fresh();
        const { id } = await store.createConversation();
        const bad = [regressionHistory()[0]!, { role: "robot", parts: [] } as unknown as Message];
        await expect(store.appendMessages(id, bad)).rejects.toThrow("messages[1].role");
        expect(await store.loadConversation(id)).toEqual([]);
      });

      test("concurrent appends to one conversation never interleave or collide", async () => {
        const store = await fresh();
        const { id } = await store.createConversation();
        const batches = Array.from({ length: 12 }, (_, batch) =>
          Array.from(
            { length: 3 },
            (_, index): Message => ({ role: "user", parts: [{ type: "text", text: `${batch}:${index}` }] }),
          ),
        );
        await Promise.all(batches.map((batch) => store.appendMessages(id, batch)));
        expectBatchesIntact((await store.loadConversation(id))!, batches);
      });
    });

    describe("streaming persistence", () => {
      test("a completed answer loads as the parts it streamed, after the prompt", async () => {
        const store = await fresh();
        const { id } = await store.createConversation();
        const [prompt] = await store.appendMessages(id, regressionHistory().slice(0, 1));
        const writer = await store.startMessage(id, "assistant");
        expect(writer.seq).toBeGreaterThan(prompt!.seq);
        for (const event of answerEvents()) writer.push(event);
        const stored = await writer.complete();
        const expected: Part[] = [
          { type: "thinking", thinking: "Let me check.", signature: "EqQBCgIYAh" },
          { type: "text", text: "Reading it now." },
          { type: "tool_call", id: "toolu_09", name: "read_file", input: { path: "a.txt" } },
        ];
        expect(stored).toMatchObject({
          seq: writer.seq,
          complete: true,
          message: { role: "assistant", parts: expected },
        });
        const loaded = (await store.loadConversation(id))!;
        expect(loaded).toHaveLength(2);
        expect(loaded[1]).toEqual(stored);
        const [next] = await store.appendMessages(id, [{ role: "user", parts: [{ type: "text", text: "thanks" }] }]);
        expect(next!.seq).toBeGreaterThan(writer.seq);
      });

      test("a flushed, unfinished answer is there, marked incomplete, and repairs into a valid history", async () => {
        const store = await fresh();
        const { id } = await store.createConversation();
        await store.appendMessages(id, regressionHistory().slice(0, 1));
        const writer = await store.startMessage(id, "assistant");
        // Cut before the signature: the thinking is unsigned.
        for (const event of answerEvents().slice(0, 4)) writer.push(event);
        await writer.flush();
        let loaded = (await store.loadConversation(id))!;
        expect(loaded[1]).toMatchObject({ seq: writer.seq, complete: false });
        expect(loaded[1]!.message.parts).toEqual([{ type: "thinking", thinking: "Let me check." }]);

        for (const event of answerEvents().slice(4, 12)) writer.push(event);
        await writer.abort();
        loaded = (await store.loadConversation(id))!;
        expect(loaded[1]!.complete).toBe(false);
        expect(loaded[1]!.message.parts).toEqual([
          { type: "thinking", thinking: "Let me check.", signature: "EqQBCgIYAh" },
          { type: "text", text: "Reading it now." },
          // Cut arguments read as the whole answer's conversion reads them: repaired, the text kept.
          { type: "tool_call", id: "toolu_09", name: "read_file", input: { path: null }, rawInput: '{"path":' },
        ]);
        const history = loaded.map((stored) => stored.message);
        expect(validateFor(history, anthropicTarget)).not.toEqual([]);
        const repaired = repair(history, anthropicTarget);
        expect(validateFor(repaired.messages, anthropicTarget)).toEqual([]);
      });

      test("an answer started but never flushed is an empty incomplete message", async () => {
        const store = await fresh();
        const { id } = await store.createConversation();
        const writer = await store.startMessage(id, "assistant");
        expect(await store.loadConversation(id)).toEqual([
          {
            seq: writer.seq,
            message: { role: "assistant", parts: [] },
            complete: false,
            createdAt: expect.any(String),
          },
        ]);
        await writer.abort();
      });

      test("answers streaming side by side keep their own seqs and parts", async () => {
        const store = await fresh();
        const { id } = await store.createConversation();
        const writers = await Promise.all([1, 2, 3].map(() => store.startMessage(id, "assistant")));
        expect(new Set(writers.map((writer) => writer.seq)).size).toBe(3);
        writers.forEach((writer, number) => {
          writer.push({ type: "block-start", index: 0, part: { type: "text", text: "" } });
          for (let token = 0; token < 200; token++) writer.push({ type: "text-delta", index: 0, text: `${number}` });
        });
        await Promise.all(writers.map((writer) => writer.complete()));
        const loaded = (await store.loadConversation(id))!;
        const textBySeq = new Map(loaded.map((stored) => [stored.seq, stored.message.parts]));
        writers.forEach((writer, number) => {
          expect(textBySeq.get(writer.seq)).toEqual([{ type: "text", text: `${number}`.repeat(200) }]);
        });
      });
    });

    runFidelityContract(fresh);

    describe("traces", () => {
      test("are recorded with keys redacted, listed newest first, and shown whole", async () => {
        const store = await fresh();
        const older = trace("trace-1", "2026-01-01T10:00:00.000Z");
        const newer = trace("trace-2", "2026-01-01T10:00:05.000Z");
        await store.recordTrace(newer);
        await store.recordTrace(older);
        expect(await store.listTraces()).toEqual([
          {
            id: "trace-2",
            requestId: "req-trace-2",
            createdAt: newer.createdAt,
            route: "/v1/messages",
            provider: "local",
            model: "m",
            status: 200,
          },
          {
            id: "trace-1",
            requestId: "req-trace-1",
            createdAt: older.createdAt,
            route: "/v1/messages",
            provider: "local",
            model: "m",
            status: 200,
          },
        ]);
        expect(await store.listTraces({ limit: 1 })).toHaveLength(1);
        const shown = (await store.getTrace("trace-1"))!;
        expect(shown.clientRequest).toEqual({
          headers: { "x-api-key": REDACTED, "content-type": "application/json" },
          body: { model: "m", messages: [{ role: "user", content: "hi" }] },
        });
        expect(shown.upstreamRequest).toEqual({
          headers: [["Authorization", REDACTED]],
          url: "http://127.0.0.1:1/v1/chat/completions",
        });
        expect(shown.upstreamResponse).toBe(`data: {"error":"key sk-${REDACTED} is invalid"}\n\n`);
        expect(shown.lossy).toEqual(older.lossy);
        expect(shown.timings).toEqual(older.timings);
        expect(JSON.stringify(shown)).not.toContain("sk-live-0123456789");
        expect(await store.getTrace("missing")).toBeUndefined();
      });

      test("recording an id again replaces the trace", async () => {
        const store = await fresh();
        await store.recordTrace(trace("same", "2026-01-01T10:00:00.000Z"));
        await store.recordTrace({ ...trace("same", "2026-01-01T10:00:00.000Z"), status: 502 });
        expect((await store.listTraces()).map((summary) => summary.status)).toEqual([502]);
      });

      test("are pruned by count and by age", async () => {
        const store = await fresh();
        const now = Date.now();
        for (let index = 0; index < 6; index++) {
          await store.recordTrace(trace(`t${index}`, new Date(now - index * 60_000).toISOString()));
        }
        expect(await store.pruneTraces({ maxCount: 4 })).toBe(2);
        expect((await store.listTraces()).map((summary) => summary.id)).toEqual(["t0", "t1", "t2", "t3"]);
        expect(await store.pruneTraces({ maxAgeMs: 90_000 })).toBe(2);
        expect((await store.listTraces()).map((summary) => summary.id)).toEqual(["t0", "t1"]);
        expect(await store.pruneTraces({})).toBe(0);
      });
    });
  });
}

function trace(id: string, createdAt: string): TraceRecord {
  return {
    id,
    requestId: `req-${id}`,
    createdAt,
    route: "/v1/messages",
    provider: "local",
    model: "m",
    status: 200,
    clientRequest: {
      headers: { "x-api-key": "sk-ant-secret-value", "content-type": "application/json" },
      body: { model: "m", messages: [{ role: "user", content: "hi" }] },
    },
    upstreamRequest: {
      headers: [["Authorization", "Bearer abcdefghijklmnop"]],
      url: "http://127.0.0.1:1/v1/chat/completions",
    },
    upstreamResponse: 'data: {"error":"key sk-live-0123456789 is invalid"}\n\n',
    clientResponse: "event: message_start\n\n",
    lossy: [{ code: "reasoning-interleaving-flattened", message: "flattened", path: "messages[1]" }],
    repair: [{ messageIndex: 1, code: "thinking-to-text" }],
    timings: { totalMs: 12.5, upstreamMs: 10 },
  };
}

function expectIncreasing(seqs: number[]): void {
  seqs.forEach((seq, index) => {
    if (index > 0) expect(seq).toBeGreaterThan(seqs[index - 1]!);
  });
}

/** Every batch's messages are present once, contiguous and in their order; seqs are unique and increasing. */
export function expectBatchesIntact(loaded: Array<{ seq: number; message: Message }>, batches: Message[][]): void {
  expectIncreasing(loaded.map((stored) => stored.seq));
  expect(loaded).toHaveLength(batches.flat().length);
  const texts = loaded.map((stored) => JSON.stringify(stored.message));
  for (const batch of batches) {
    const start = texts.indexOf(JSON.stringify(batch[0]));
    expect(start).toBeGreaterThanOrEqual(0);
    expect(texts.slice(start, start + batch.length)).toEqual(batch.map((message) => JSON.stringify(message)));
  }
}
