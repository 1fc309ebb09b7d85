/**
 * `parley/store`: conversations kept one message at a time (SQLite, PostgreSQL or memory), listed, read back and
 * deleted by their owner. The SQLite and PostgreSQL drivers are optional packages (`better-sqlite3`, `pg`): opening
 * a store that needs one that is not installed throws a `MissingPackageError` naming it.
 */
export { MissingPackageError } from "../core/errors.js";
export { ConversationExistsError, NotFoundError } from "../store/errors.js";
export { MemoryStore } from "../store/memory/memory-store.js";
export { type OpenStoreOptions, openStore, STORE_URL_FORMS } from "../store/open-store.js";
export { DEFAULT_OWNER } from "../store/owner.js";
export { DEFAULT_TRACE_RETENTION, type TraceRetention } from "../store/retention.js";
export { DEFAULT_FLUSH_POLICY, type FlushPolicy } from "../store/streaming-writer.js";
export type * from "../store/types.js";
