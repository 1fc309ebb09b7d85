import { afterEach, describe, expect, test } from "vitest";
import { InvalidRequestError } from "../../core/index.js";
import { DEFAULT_OWNER } from "../owner.js";
import type { AnswerStore, NewStoredAnswer, StoredAnswer } from "./answer-store.js";

/** An answer store as a backend opens it, and what closes it (with whatever else it opened). */
export interface OpenedAnswers {
  answers: AnswerStore;
  close(): Promise<void>;
}

/**
 * The behaviour every backend's store of answers must have. Each backend's test file calls this with a function that
 * opens a fresh, empty store.
 */
export function runAnswerContract(name: string, open: () => Promise<OpenedAnswers>): void {
  describe(`${name} answer store contract`, () => {
    const opened: OpenedAnswers[] = [];
    const fresh = async () => {
      const store = await open();
      opened.push(store);
      return store.answers;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
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
        await store.save(kept("resp_1"), { owner: "tenant-a" });
        expect(await store.get("resp_1", { owner: "tenant-a" })).toEqual(read("tenant-a", "resp_1"));
        expect(await store.get("resp_1", { owner: "tenant-b" })).toBeUndefined();
        expect(await store.get("resp_1")).toBeUndefined();
        expect(await store.get("resp_2", { owner: "tenant-a" })).toBeUndefined();
        await expect(store.save(kept("resp_1"), { owner: "tenant-b" })).rejects.toBeInstanceOf(InvalidRequestError);
      });

      test("a call that names no owner acts for the default owner, as conversation calls do", async () => {
        const store = await fresh();
        await store.save(kept("resp_1"));
        expect(await store.get("resp_1", { owner: DEFAULT_OWNER })).toEqual(read(DEFAULT_OWNER, "resp_1"));
        expect(await store.get("resp_1", { owner: "tenant-a" })).toBeUndefined();
        expect(await store.delete("resp_1")).toBe(true);
      });

      test("a chain comes back oldest first, and is cut when a link is gone or another owner's", async () => {
        const store = await fresh();
        const a = { owner: "a" };
        const b = { owner: "b" };
        await store.save(kept("resp_1"), a);
        await store.save(kept("resp_2", "resp_1"), a);
        await store.save(kept("resp_3", "resp_2"), a);
        await store.save(kept("resp_x", "resp_2"), b);
        expect(await store.chain("resp_3", a)).toEqual([
          read("a", "resp_1"),
          read("a", "resp_2", "resp_1"),
          read("a", "resp_3", "resp_2"),
        ]);
        expect(await store.chain("resp_x", b)).toBeUndefined();
        expect(await store.chain("resp_3", b)).toBeUndefined();
        expect(await store.delete("resp_2", b)).toBe(false);
        expect(await store.delete("resp_2", a)).toBe(true);
        expect(await store.delete("resp_2", a)).toBe(false);
        expect(await store.chain("resp_3", a)).toBeUndefined();
        expect((await store.chain("resp_1", a))?.length).toBe(1);
      });
    });
  });
}
