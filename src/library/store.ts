/**
 * `parley/store`: `openStore(url)` gives three stores on one database (SQLite, PostgreSQL or memory): conversations
 * kept one message at a time, listed, read back and deleted by their owner; the answers a Responses client asked
 * to keep; and gateway traces. The SQLite and PostgreSQL drivers are optional packages (`better-sqlite3`, `pg`):
 * opening a store that needs one that is not installed throws a `MissingPackageError` naming it.
 */
export { MissingPackageError } from "../core/errors.js";
export type * from "../store/answers/answer-store.js";
export type * from "../store/conversations/conversation-store.js";
export { DEFAULT_FLUSH_POLICY, type FlushPolicy } from "../store/conversations/streaming-writer.js";
export { ConversationExistsError, NotFoundError } from "../store/errors.js";
export { type OpenStoreOptions, openStore, STORE_URL_FORMS, type Store } from "../store/open-store.js";
export { DEFAULT_OWNER, type OwnerOptions } from "../store/owner.js";
export { DEFAULT_TRACE_RETENTION, type TraceRetention } from "../store/traces/retention.js";
export type * from "../store/traces/trace-store.js";
