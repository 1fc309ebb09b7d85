import { withDeadline } from "../deadline.js";
import type { AnswerStore } from "./answer-store.js";

/** A backend's stored answers with a deadline on every call, as the conversations' (`conversations/with-deadline.ts`). */
export function answersWithDeadline(store: AnswerStore, deadlineMs: number, backend: string): AnswerStore {
  const bounded = <T>(work: Promise<T>) => withDeadline(work, deadlineMs, backend);
  return {
    save: (answer, options) => bounded(store.save(answer, options)),
    get: (id, options) => bounded(store.get(id, options)),
    chain: (id, options) => bounded(store.chain(id, options)),
    delete: (id, options) => bounded(store.delete(id, options)),
  };
}
