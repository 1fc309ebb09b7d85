import { describe, expect, test } from "vitest";
import { ConversationExistsError, NotFoundError } from "../errors.js";
import { DEFAULT_OWNER } from "../owner.js";
import type { ConversationStore } from "../types.js";
import { answerEvents, regressionHistory } from "./regression-history.js";

/** Part of every backend's contract (`contract.suite.ts`): a conversation is its owner's alone. */
export function ownerContract(fresh: () => Promise<ConversationStore>): void {
  describe("owners", () => {
    test("another owner's conversation is unknown to every call: has, load, append, start", async () => {
      const store = await fresh();
      const { id } = await store.createConversation({ owner: "team-a" });
      const [first] = regressionHistory();
      await store.appendMessages(id, [first!], { owner: "team-a" });
      for (const other of ["team-b", DEFAULT_OWNER]) {
        expect(await store.hasConversation(id, { owner: other })).toBe(false);
        expect(await store.loadConversation(id, { owner: other })).toBeUndefined();
        await expect(store.appendMessages(id, [first!], { owner: other })).rejects.toBeInstanceOf(NotFoundError);
        await expect(store.startMessage(id, "assistant", { owner: other })).rejects.toMatchObject({
          type: "not_found_error",
        });
      }
      expect(await store.loadConversation(id)).toBeUndefined();
      const loaded = await store.loadConversation(id, { owner: "team-a" });
      expect(loaded?.map((stored) => stored.message)).toEqual([first]);
    });

    test("an append names its owner beside its sources; the sources come back to the owner only", async () => {
      const store = await fresh();
      const { id } = await store.createConversation({ owner: "team-a" });
      const [first] = regressionHistory();
      const source = { format: "anthropic" as const, json: '{"role":"user", "content":"hi"}' };
      await expect(store.appendMessages(id, [first!], { sources: [source], owner: "team-b" })).rejects.toBeInstanceOf(
        NotFoundError,
      );
      const appended = await store.appendMessages(id, [first!], { sources: [source], owner: "team-a" });
      expect(appended.map((stored) => stored.source)).toEqual([source]);
      expect((await store.loadConversation(id, { owner: "team-a" }))?.map((stored) => stored.source)).toEqual([source]);
      expect(await store.loadConversation(id, { owner: "team-b" })).toBeUndefined();
    });

    test("the owner streams into its conversation as before", async () => {
      const store = await fresh();
      const { id } = await store.createConversation({ owner: "team-a" });
      const writer = await store.startMessage(id, "assistant", { owner: "team-a" });
      for (const event of answerEvents()) writer.push(event);
      await writer.complete();
      expect(await store.loadConversation(id, { owner: "team-a" })).toHaveLength(1);
      expect(await store.loadConversation(id, { owner: "team-b" })).toBeUndefined();
    });

    test("an empty conversation is [] for its owner and undefined for another", async () => {
      const store = await fresh();
      const { id } = await store.createConversation({ owner: "team-a" });
      expect(await store.loadConversation(id, { owner: "team-a" })).toEqual([]);
      expect(await store.loadConversation(id, { owner: "team-b" })).toBeUndefined();
    });

    test("calls that name no owner act for DEFAULT_OWNER", async () => {
      const store = await fresh();
      const { id } = await store.createConversation();
      expect(await store.hasConversation(id, { owner: DEFAULT_OWNER })).toBe(true);
      expect(await store.hasConversation(id, { owner: "team-a" })).toBe(false);
      expect(await store.hasConversation(id)).toBe(true);
      expect(await store.hasConversation(id, {})).toBe(true);
    });

    test("ids are unique across owners: taking another owner's id is a conflict", async () => {
      const store = await fresh();
      await store.createConversation({ id: "shared-id", owner: "team-a" });
      await expect(store.createConversation({ id: "shared-id", owner: "team-b" })).rejects.toBeInstanceOf(
        ConversationExistsError,
      );
      expect(await store.loadConversation("shared-id", { owner: "team-a" })).toEqual([]);
    });
  });
}
