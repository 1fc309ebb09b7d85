import { describe, expect, test } from "vitest";
import { InvalidRequestError } from "../../core/index.js";
import { answerEvents, regressionHistory } from "../test-support/regression-history.js";
import type { ConversationStore } from "./conversation-store.js";

const tick = () => new Promise((resolve) => setTimeout(resolve, 3));

/**
 * Part of every backend's contract (`contract.suite.ts`): an agent lists its conversations to resume one, reads one
 * back whole, and deletes one, each call for the owner it names, as the other conversation calls are.
 */
export function catalogueContract(fresh: () => Promise<ConversationStore>): void {
  describe("list, get and delete", () => {
    test("list gives the owner's conversations newest first, with their metadata, up to the limit", async () => {
      const store = await fresh();
      for (const id of ["first", "second", "third"]) {
        await store.create({ id, owner: "team-a", metadata: { agent: "coder", order: id } });
        await tick();
      }
      await store.create({ id: "theirs", owner: "team-b" });
      const listed = await store.list({ owner: "team-a" });
      expect(listed.map((summary) => summary.id)).toEqual(["third", "second", "first"]);
      expect(listed[0]).toEqual({
        id: "third",
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        metadata: { agent: "coder", order: "third" },
      });
      expect((await store.list({ owner: "team-a", limit: 2 })).map((summary) => summary.id)).toEqual([
        "third",
        "second",
      ]);
      expect((await store.list({ owner: "team-b" })).map((summary) => summary.id)).toEqual(["theirs"]);
      expect(await store.list()).toEqual([]);
    });

    test("a metadata filter matches every key it names, with its value's type", async () => {
      const store = await fresh();
      const made = [
        { id: "a", metadata: { agent: "coder", session: 1, resumable: true, parent: null } },
        { id: "b", metadata: { agent: "coder", session: "1", resumable: false } },
        { id: "c", metadata: { agent: "reviewer", session: 1, nested: { agent: "coder" } } },
        { id: "d", metadata: {} },
      ];
      for (const conversation of made) await store.create(conversation);
      const ids = async (metadata: Record<string, string | number | boolean | null>) =>
        (await store.list({ metadata })).map((summary) => summary.id).sort();
      expect(await ids({ agent: "coder" })).toEqual(["a", "b"]);
      expect(await ids({ session: 1 })).toEqual(["a", "c"]);
      expect(await ids({ session: "1" })).toEqual(["b"]);
      expect(await ids({ resumable: true })).toEqual(["a"]);
      expect(await ids({ resumable: false })).toEqual(["b"]);
      expect(await ids({ parent: null })).toEqual(["a"]);
      expect(await ids({ agent: "coder", session: 1 })).toEqual(["a"]);
      expect(await ids({ agent: "nobody" })).toEqual([]);
      expect(await ids({})).toEqual(["a", "b", "c", "d"]);
    });

    test("get gives a conversation back whole: its metadata and its messages, streamed ones included", async () => {
      const store = await fresh();
      const history = regressionHistory();
      const { id } = await store.create({ owner: "team-a", metadata: { title: "regression" } });
      await store.append(id, history, { owner: "team-a" });
      const writer = await store.startMessage(id, "assistant", { owner: "team-a" });
      for (const event of answerEvents()) writer.push(event);
      await writer.complete();
      const got = await store.get(id, { owner: "team-a" });
      expect(got?.metadata).toEqual({ title: "regression" });
      expect(got?.messages.map((stored) => stored.message).slice(0, history.length)).toEqual(history);
      expect(got?.messages).toEqual(await store.load(id, { owner: "team-a" }));
      expect(got?.createdAt).toBe((await store.list({ owner: "team-a" }))[0]?.createdAt);
      expect(await store.get(id, { owner: "team-b" })).toBeUndefined();
      expect(await store.get("missing")).toBeUndefined();
    });

    test("delete removes a conversation and its messages for its owner alone", async () => {
      const store = await fresh();
      const { id } = await store.create({ owner: "team-a" });
      await store.append(id, regressionHistory(), { owner: "team-a" });
      const kept = await store.create({ owner: "team-a" });
      expect(await store.delete(id, { owner: "team-b" })).toBe(false);
      expect(await store.delete(id)).toBe(false);
      expect(await store.has(id, { owner: "team-a" })).toBe(true);
      expect(await store.delete(id, { owner: "team-a" })).toBe(true);
      expect(await store.delete(id, { owner: "team-a" })).toBe(false);
      expect(await store.load(id, { owner: "team-a" })).toBeUndefined();
      expect((await store.list({ owner: "team-a" })).map((summary) => summary.id)).toEqual([kept.id]);
      // The id is free again, and a new conversation under it starts empty.
      await store.create({ id, owner: "team-b" });
      expect(await store.load(id, { owner: "team-b" })).toEqual([]);
    });

    test("bad options and metadata are an InvalidRequestError naming the field", async () => {
      const store = await fresh();
      await expect(store.list({ limit: 0 })).rejects.toMatchObject({ path: "limit" });
      await expect(store.list({ limit: 5000 })).rejects.toBeInstanceOf(InvalidRequestError);
      await expect(store.list({ metadata: { deep: { a: 1 } } as never })).rejects.toMatchObject({
        path: "metadata.deep",
      });
      await expect(store.create({ metadata: "x" as never })).rejects.toMatchObject({ path: "metadata" });
      const { id } = await store.create();
      await expect(store.append(id, [{ role: "user", content: "hi" } as never])).rejects.toMatchObject({
        type: "invalid_request_error",
        path: "messages[0].parts",
      });
      expect(await store.load(id)).toEqual([]);
    });
  });
}
