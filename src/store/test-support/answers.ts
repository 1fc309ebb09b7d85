import { expect } from "vitest";
import type { AnswerStore, NewStoredAnswer } from "../answers/answer-store.js";

/** An upgraded store keeps answers (migration step 5): saved for an owner, read back by that owner only. */
export async function expectAnswersKept(store: AnswerStore): Promise<void> {
  const answer: NewStoredAnswer = {
    id: "resp_after_upgrade",
    createdAt: "2026-02-03T04:05:06.789Z",
    messages: [{ role: "user", parts: [{ type: "text", text: "kept" }] }],
    body: { id: "resp_after_upgrade", object: "response" },
  };
  await store.save(answer, { owner: "t" });
  expect(await store.get(answer.id, { owner: "t" })).toEqual({ ...answer, owner: "t" });
  expect(await store.get(answer.id)).toBeUndefined();
}
