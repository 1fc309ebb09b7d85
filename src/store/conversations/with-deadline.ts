import { withDeadline } from "../deadline.js";
import type { ConversationStore, StreamingMessageWriter } from "./conversation-store.js";

/**
 * A backend's conversations with a deadline on every call (the streaming writer's writes included), for a backend
 * whose calls wait on a server: the caller is answered at the deadline, whatever the server does.
 */
export function conversationsWithDeadline(
  store: ConversationStore,
  deadlineMs: number,
  backend: string,
): ConversationStore {
  const bounded = <T>(work: Promise<T>) => withDeadline(work, deadlineMs, backend);
  const writer = (inner: StreamingMessageWriter): StreamingMessageWriter => ({
    seq: inner.seq,
    push: (event) => inner.push(event),
    flush: () => bounded(inner.flush()),
    complete: () => bounded(inner.complete()),
    abort: () => bounded(inner.abort()),
  });
  return {
    create: (options) => bounded(store.create(options)),
    has: (id, options) => bounded(store.has(id, options)),
    append: (id, messages, options) => bounded(store.append(id, messages, options)),
    load: (id, options) => bounded(store.load(id, options)),
    startMessage: async (id, role, options) => writer(await bounded(store.startMessage(id, role, options))),
    list: (options) => bounded(store.list(options)),
    get: (id, options) => bounded(store.get(id, options)),
    delete: (id, options) => bounded(store.delete(id, options)),
  };
}
