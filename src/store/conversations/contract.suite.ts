import fc from "fast-check";
import { afterEach, describe, expect, test } from "vitest";
import { InvalidRequestError, type Message, ParleyError, type Part } from "../../core/index.js";
import { repair, validateFor } from "../../repair/pipeline.js";
import { anthropicTarget } from "../../repair/test-support/targets.js";
import { NotFoundError } from "../errors.js";
import { messageArbitrary } from "../test-support/arbitraries.js";
import { answerEvents, regressionHistory } from "../test-support/regression-history.js";
import { catalogueContract } from "./contract-catalogue.suite.js";
import { runFidelityContract } from "./contract-fidelity.suite.js";
import { ownerContract } from "./contract-owner.suite.js";
import type { ConversationStore } from "./conversation-store.js";

/** A conversation store as a backend opens it, and what closes it (with whatever else it opened). */
export interface OpenedConversations {
  conversations: ConversationStore;
  close(): Promise<void>;
}

/**
 * The behaviour every backend's conversation store must have. Each backend's test file calls this with a function
 * that opens a fresh, empty store.
 */
export function runConversationContract(name: string, open: () => Promise<OpenedConversations>): void {
  describe(`${name} conversation store contract`, () => {
    const opened: OpenedConversations[] = [];
    const fresh = async () => {
      const store = await open();
      opened.push(store);
      return store.conversations;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });

    describe("conversations", () => {
      test("are created with a generated or given id and known afterwards", async () => {
        const store = await fresh();
        const generated = await store.create();
        const given = await store.create({ id: "conv-given", metadata: { client: "test" } });
        expect(generated.id).toMatch(/\S/);
        expect(given.id).toBe("conv-given");
        expect(await store.has(generated.id)).toBe(true);
        expect(await store.has("conv-given")).toBe(true);
        expect(await store.has("conv-missing")).toBe(false);
        expect(await store.load("conv-given")).toEqual([]);
      });

      test("an id is never reused", async () => {
        const store = await fresh();
        await store.create({ id: "twice" });
        await expect(store.create({ id: "twice" })).rejects.toBeInstanceOf(InvalidRequestError);
      });

      test("an unknown id is not found, never created on the fly", async () => {
        const store = await fresh();
        expect(await store.load("nope")).toBeUndefined();
        const appending = store.append("nope", regressionHistory().slice(0, 1));
        await expect(appending).rejects.toBeInstanceOf(NotFoundError);
        await expect(store.append("nope", [])).rejects.toMatchObject({ type: "not_found_error", status: 404 });
        await expect(store.startMessage("nope", "assistant")).rejects.toBeInstanceOf(ParleyError);
        expect(await store.has("nope")).toBe(false);
      });
    });

    ownerContract(fresh);
    catalogueContract(fresh);

    describe("identity by construction", () => {
      test("the regression history loads the same appended one per call or all in one call", async () => {
        const store = await fresh();
        const history = regressionHistory();
        const one = await store.create();
        for (const message of history) await store.append(one.id, [message]);
        const all = await store.create();
        await store.append(all.id, history);

        const loadedOne = (await store.load(one.id))!;
        const loadedAll = (await store.load(all.id))!;
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

      test("append returns what it stored, seqs continuing after earlier calls", async () => {
        const store = await fresh();
        const { id } = await store.create();
        const history = regressionHistory();
        const first = await store.append(id, history.slice(0, 2));
        const second = await store.append(id, history.slice(2));
        expect([...first, ...second].map((stored) => stored.message)).toEqual(history);
        expectIncreasing([...first, ...second].map((stored) => stored.seq));
        expect(await store.load(id)).toEqual([...first, ...second]);
      });

      test("message-level fields and key order round-trip byte for byte", async () => {
        const store = await fresh();
        const { id } = await store.create();
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
        await store.append(id, odd);
        const loaded = (await store.load(id))!.map((stored) => stored.message);
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
              const { id } = await store.create();
              let start = 0;
              for (const cut of [...cuts, history.length]) {
                const end = Math.min(history.length, start + cut);
                await store.append(id, history.slice(start, end));
                start = end;
              }
              const loaded = (await store.load(id))!;
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
        const { id } = await store.create();
        const bad = [regressionHistory()[0]!, { role: "robot", parts: [] } as unknown as Message];
        await expect(store.append(id, bad)).rejects.toThrow("messages[1].role");
        expect(await store.load(id)).toEqual([]);
      });

      test("concurrent appends to one conversation never interleave or collide", async () => {
        const store = await fresh();
        const { id } = await store.create();
        const batches = Array.from({ length: 12 }, (_, batch) =>
          Array.from(
            { length: 3 },
            (_, index): Message => ({ role: "user", parts: [{ type: "text", text: `${batch}:${index}` }] }),
          ),
        );
        await Promise.all(batches.map((batch) => store.append(id, batch)));
        expectBatchesIntact((await store.load(id))!, batches);
      });
    });

    describe("streaming persistence", () => {
      test("a completed answer loads as the parts it streamed, after the prompt", async () => {
        const store = await fresh();
        const { id } = await store.create();
        const [prompt] = await store.append(id, regressionHistory().slice(0, 1));
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
        const loaded = (await store.load(id))!;
        expect(loaded).toHaveLength(2);
        expect(loaded[1]).toEqual(stored);
        const [next] = await store.append(id, [{ role: "user", parts: [{ type: "text", text: "thanks" }] }]);
        expect(next!.seq).toBeGreaterThan(writer.seq);
      });

      test("a flushed, unfinished answer is there, marked incomplete, and repairs into a valid history", async () => {
        const store = await fresh();
        const { id } = await store.create();
        await store.append(id, regressionHistory().slice(0, 1));
        const writer = await store.startMessage(id, "assistant");
        // Cut before the signature: the thinking is unsigned.
        for (const event of answerEvents().slice(0, 4)) writer.push(event);
        await writer.flush();
        let loaded = (await store.load(id))!;
        expect(loaded[1]).toMatchObject({ seq: writer.seq, complete: false });
        expect(loaded[1]!.message.parts).toEqual([{ type: "thinking", thinking: "Let me check." }]);

        for (const event of answerEvents().slice(4, 12)) writer.push(event);
        await writer.abort();
        loaded = (await store.load(id))!;
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
        const { id } = await store.create();
        const writer = await store.startMessage(id, "assistant");
        expect(await store.load(id)).toEqual([
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
        const { id } = await store.create();
        const writers = await Promise.all([1, 2, 3].map(() => store.startMessage(id, "assistant")));
        expect(new Set(writers.map((writer) => writer.seq)).size).toBe(3);
        writers.forEach((writer, number) => {
          writer.push({ type: "block-start", index: 0, part: { type: "text", text: "" } });
          for (let token = 0; token < 200; token++) writer.push({ type: "text-delta", index: 0, text: `${number}` });
        });
        await Promise.all(writers.map((writer) => writer.complete()));
        const loaded = (await store.load(id))!;
        const textBySeq = new Map(loaded.map((stored) => [stored.seq, stored.message.parts]));
        writers.forEach((writer, number) => {
          expect(textBySeq.get(writer.seq)).toEqual([{ type: "text", text: `${number}`.repeat(200) }]);
        });
      });

      test("an answer started with its question comes right after it, with the question's sources", async () => {
        const store = await fresh();
        const { id } = await store.create();
        await store.append(id, [{ role: "user", parts: [{ type: "text", text: "before" }] }]);
        const question: Message[] = [
          { role: "user", parts: [{ type: "text", text: "first" }] },
          { role: "user", parts: [{ type: "text", text: "second" }] },
        ];
        const source = { format: "anthropic" as const, json: '{"role":"user","content":"first"}' };
        const writer = await store.startMessage(id, "assistant", { question, sources: [source, undefined] });
        writer.push({ type: "block-start", index: 0, part: { type: "text", text: "" } });
        writer.push({ type: "text-delta", index: 0, text: "answer" });
        await writer.complete();
        const loaded = (await store.load(id))!;
        expect(loaded.map((stored) => stored.seq)).toEqual([1, 2, 3, 4]);
        expect(writer.seq).toBe(4);
        expect(loaded.slice(1).map((stored) => stored.message)).toEqual([
          ...question,
          { role: "assistant", parts: [{ type: "text", text: "answer" }] },
        ]);
        expect(loaded[1]!.source).toEqual(source);
        expect(loaded[2]!.source).toBeUndefined();
        expect(loaded.map((stored) => stored.complete)).toEqual([true, true, true, true]);
      });

      test("turns started side by side on one conversation keep each question next to its answer", async () => {
        const store = await fresh();
        const { id } = await store.create();
        const turns = Array.from({ length: 12 }, (_, number) => number);
        const writers = await Promise.all(
          turns.map((number) =>
            store.startMessage(id, "assistant", {
              question: [{ role: "user", parts: [{ type: "text", text: `q${number}` }] }],
            }),
          ),
        );
        writers.forEach((writer, number) => {
          writer.push({ type: "block-start", index: 0, part: { type: "text", text: "" } });
          writer.push({ type: "text-delta", index: 0, text: `a${number}` });
        });
        await Promise.all(writers.map((writer) => writer.complete()));
        expectTurnsPaired((await store.load(id))!, turns.length);
      });

      test("a question for an unknown conversation stores nothing", async () => {
        const store = await fresh();
        await expect(
          store.startMessage("nope", "assistant", {
            question: [{ role: "user", parts: [{ type: "text", text: "q" }] }],
          }),
        ).rejects.toBeInstanceOf(NotFoundError);
      });
    });

    runFidelityContract(fresh);
  });
}

/**
 * Every question (`q<n>`) is followed at once by its own answer (`a<n>`), and the conversation holds nothing else:
 * what several writers storing turns on one conversation at the same time must leave.
 */
export function expectTurnsPaired(loaded: Array<{ seq: number; message: Message }>, turns: number): void {
  expectIncreasing(loaded.map((stored) => stored.seq));
  expect(loaded).toHaveLength(turns * 2);
  const texts = loaded.map((stored) => {
    const part = stored.message.parts[0];
    return part?.type === "text" ? part.text : JSON.stringify(stored.message);
  });
  for (let index = 0; index < texts.length; index += 2) {
    expect(texts[index], `message ${index}`).toMatch(/^q\d+$/);
    expect(texts[index + 1], `message ${index + 1}`).toBe(`a${texts[index]!.slice(1)}`);
  }
  expect(new Set(texts).size).toBe(texts.length);
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
