import { expect } from "vitest";
import type { ConversationStore, NewStoredAnswer } from "../types.js";

/** An upgraded store keeps answers (migration step 5): saved for an owner, read back by that owner only. */
export async function expectAnswersKept(store: ConversationStore): Promise<void> {
  const answer: NewStoredAnswer = {
    id: "resp_after_upgrade",
    createdAt: "2026-02-03T04:05:06.789Z",
    messages: [{ role: "user", parts: [{ type: "text", text: "kept" }] }],
    body: { id: "resp_after_upgrade", object: "response" },
  };
  await store.saveAnswer(answer, { owner: "t" });
  expect(await store.getAnswer(answer.id, { owner: "t" })).toEqual({ ...answer, owner: "t" });
  expect(await store.getAnswer(answer.id)).toBeUndefined();
}
