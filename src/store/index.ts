export { conversationNotFound, NotFoundError } from "./errors.js";
export { MemoryStore } from "./memory/memory-store.js";
export { type OpenStoreOptions, openStore, STORE_URL_FORMS } from "./open-store.js";
export { PostgresStore } from "./postgres/postgres-store.js";
export { redactSecrets, redactTrace, redactValue } from "./redact.js";
export { DEFAULT_TRACE_RETENTION, type TraceRetention } from "./retention.js";
export { SqliteStore } from "./sqlite/sqlite-store.js";
export { DEFAULT_FLUSH_POLICY, type FlushPolicy } from "./streaming-writer.js";
export type * from "./types.js";
