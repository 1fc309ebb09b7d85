import fc from "fast-check";
import { afterEach, describe, expect, test } from "vitest";
import { InvalidRequestError, type Message, ParleyError, type Part } from "../core/index.js";
import { repair, validateFor } from "../repair/pipeline.js";
import { anthropicTarget } from "../repair/test-support/targets.js";
import { runFidelityContract } from "./contract-fidelity.suite.js";
import { NotFoundError } from "./errors.js";
import { DEFAULT_OWNER } from "./owner.js";
import { messageArbitrary } from "./test-support/arbitraries.js";
import { catalogueContract } from "./test-support/catalogue-contract.js";
import { ownerContract } from "./test-support/owner-contract.js";
import { answerEvents, regressionHistory } from "./test-support/regression-history.js";
import { traceContract } from "./trace-contract.suite.js";
import type { TraceWriterOptions } from "./trace-queue.js";
import type { ConversationStore, NewStoredAnswer, StoredAnswer } from "./types.js";

/**
 * The behaviour every backend must have. Each backend's test file calls this with a function that opens
 * a fresh, empty store.
 */
export function runStoreContract(
  name: string,
  open: (options?: TraceWriterOptions) => Promise<ConversationStore>,
): void {
  describe(`${name} store contract`, () => {
    const opened: ConversationStore[] = [];
    const fresh = async (options?: TraceWriterOptions) => {
      const store = await open(options);
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

    describe("stored answers", () => {
      const kept = (id: string, previousId?: string): NewStoredAnswer => ({
        id,
        createdAt: "2026-01-02T03:04:05.678Z",
        ...(previousId === undefined ? {} : { previousId }),
        messages: [
          { role: "user", parts: [{ type: "text", text: `question ${id}` }], textShorthand: true },
          {
            role: "assistant",
            parts: [
              { type: "thinking", thinking: "why", signature: "sig", origin: { format: "responses", sealed: "enc" } },
              { type: "text", text: `answer ${id}`, extra: { responses: { annotations: [] } } },
            ],
          },
        ],
        body: { id, object: "response", output: [{ type: "message", content: [{ text: "1.0e3 \u00e9" }] }] },
      });
      const read = (owner: string, id: string, previousId?: string): StoredAnswer => ({
        ...kept(id, previousId),
        owner,
      });

      test("are read back whole, by their owner only", async () => {
        const store = await fresh();
        await store.saveAnswer(kept("resp_1"), { owner: "tenant-a" });
        expect(await store.getAnswer("resp_1", { owner: "tenant-a" })).toEqual(read("tenant-a", "resp_1"));
        expect(await store.getAnswer("resp_1", { owner: "tenant-b" })).toBeUndefined();
        expect(await store.getAnswer("resp_1")).toBeUndefined();
        expect(await store.getAnswer("resp_2", { owner: "tenant-a" })).toBeUndefined();
        await expect(store.saveAnswer(kept("resp_1"), { owner: "tenant-b" })).rejects.toBeInstanceOf(
          InvalidRequestError,
        );
      });

      test("a call that names no owner acts for the default owner, as conversation calls do", async () => {
        const store = await fresh();
        await store.saveAnswer(kept("resp_1"));
        expect(await store.getAnswer("resp_1", { owner: DEFAULT_OWNER })).toEqual(read(DEFAULT_OWNER, "resp_1"));
        expect(await store.getAnswer("resp_1", { owner: "tenant-a" })).toBeUndefined();
        expect(await store.deleteAnswer("resp_1")).toBe(true);
      });

      test("a chain comes back oldest first, and is cut when a link is gone or another owner's", async () => {
        const store = await fresh();
        const a = { owner: "a" };
        const b = { owner: "b" };
        await store.saveAnswer(kept("resp_1"), a);
        await store.saveAnswer(kept("resp_2", "resp_1"), a);
        await store.saveAnswer(kept("resp_3", "resp_2"), a);
        await store.saveAnswer(kept("resp_x", "resp_2"), b);
        expect(await store.answerChain("resp_3", a)).toEqual([
          read("a", "resp_1"),
          read("a", "resp_2", "resp_1"),
          read("a", "resp_3", "resp_2"),
        ]);
        expect(await store.answerChain("resp_x", b)).toBeUndefined();
        expect(await store.answerChain("resp_3", b)).toBeUndefined();
        expect(await store.deleteAnswer("resp_2", b)).toBe(false);
        expect(await store.deleteAnswer("resp_2", a)).toBe(true);
        expect(await store.deleteAnswer("resp_2", a)).toBe(false);
        expect(await store.answerChain("resp_3", a)).toBeUndefined();
        expect((await store.answerChain("resp_1", a))?.length).toBe(1);
      });
    });

    runFidelityContract(fresh);

    traceContract(fresh);
  });
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
