import { describe, expect, test } from "vitest";
import { ConversationExistsError, NotFoundError } from "../errors.js";
import { DEFAULT_OWNER } from "../owner.js";
import { answerEvents, regressionHistory } from "../test-support/regression-history.js";
import type { ConversationStore } from "./conversation-store.js";

/** Part of every backend's contract (`contract.suite.ts`): a conversation is its owner's alone. */
export function ownerContract(fresh: () => Promise<ConversationStore>): void {
  describe("owners", () => {
    test("another owner's conversation is unknown to every call: has, load, append, start", async () => {
      const store = await fresh();
      const { id } = await store.create({ owner: "team-a" });
      const [first] = regressionHistory();
      await store.append(id, [first!], { owner: "team-a" });
      for (const other of ["team-b", DEFAULT_OWNER]) {
        expect(await store.has(id, { owner: other })).toBe(false);
        expect(await store.load(id, { owner: other })).toBeUndefined();
        await expect(store.append(id, [first!], { owner: other })).rejects.toBeInstanceOf(NotFoundError);
        await expect(store.startMessage(id, "assistant", { owner: other })).rejects.toMatchObject({
          type: "not_found_error",
        });
      }
      expect(await store.load(id)).toBeUndefined();
      const loaded = await store.load(id, { owner: "team-a" });
      expect(loaded?.map((stored) => stored.message)).toEqual([first]);
    });

    test("an append names its owner beside its sources; the sources come back to the owner only", async () => {
      const store = await fresh();
      const { id } = await store.create({ owner: "team-a" });
      const [first] = regressionHistory();
      const source = { format: "anthropic" as const, json: '{"role":"user", "content":"hi"}' };
      await expect(store.append(id, [first!], { sources: [source], owner: "team-b" })).rejects.toBeInstanceOf(
        NotFoundError,
      );
      const appended = await store.append(id, [first!], { sources: [source], owner: "team-a" });
      expect(appended.map((stored) => stored.source)).toEqual([source]);
      expect((await store.load(id, { owner: "team-a" }))?.map((stored) => stored.source)).toEqual([source]);
      expect(await store.load(id, { owner: "team-b" })).toBeUndefined();
    });

    test("the owner streams into its conversation as before", async () => {
      const store = await fresh();
      const { id } = await store.create({ owner: "team-a" });
      const writer = await store.startMessage(id, "assistant", { owner: "team-a" });
      for (const event of answerEvents()) writer.push(event);
      await writer.complete();
      expect(await store.load(id, { owner: "team-a" })).toHaveLength(1);
      expect(await store.load(id, { owner: "team-b" })).toBeUndefined();
    });

    test("an empty conversation is [] for its owner and undefined for another", async () => {
      const store = await fresh();
      const { id } = await store.create({ owner: "team-a" });
      expect(await store.load(id, { owner: "team-a" })).toEqual([]);
      expect(await store.load(id, { owner: "team-b" })).toBeUndefined();
    });

    test("calls that name no owner act for DEFAULT_OWNER", async () => {
      const store = await fresh();
      const { id } = await store.create();
      expect(await store.has(id, { owner: DEFAULT_OWNER })).toBe(true);
      expect(await store.has(id, { owner: "team-a" })).toBe(false);
      expect(await store.has(id)).toBe(true);
      expect(await store.has(id, {})).toBe(true);
    });

    test("ids are unique across owners: taking another owner's id is a conflict", async () => {
      const store = await fresh();
      await store.create({ id: "shared-id", owner: "team-a" });
      await expect(store.create({ id: "shared-id", owner: "team-b" })).rejects.toBeInstanceOf(ConversationExistsError);
      expect(await store.load("shared-id", { owner: "team-a" })).toEqual([]);
    });
  });
}
