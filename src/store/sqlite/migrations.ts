import type { Migration } from "../migration.js";
import { DEFAULT_OWNER } from "../owner.js";
import { traceSchemaStep } from "./trace-schema.js";

/** The SQLite schema, one numbered step at a time. */
export const sqliteMigrations: readonly Migration[] = [
  {
    version: 1,
    name: "conversations, messages, parts, traces",
    sql: `
      CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        metadata TEXT NOT NULL,
        next_seq INTEGER NOT NULL DEFAULT 1
      );
      CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        complete INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        extra TEXT NOT NULL,
        UNIQUE (conversation_id, seq)
      );
      CREATE TABLE parts (
        message_id INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        part TEXT NOT NULL,
        PRIMARY KEY (message_id, position)
      ) WITHOUT ROWID;
      CREATE TABLE traces (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        request_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        route TEXT NOT NULL,
        provider TEXT,
        model TEXT,
        status INTEGER,
        record TEXT NOT NULL
      );
      CREATE INDEX traces_created_at ON traces (created_at, seq);
    `,
  },
  {
    version: 2,
    name: "messages keep the client's own JSON beside their parts",
    sql: `
      ALTER TABLE messages ADD COLUMN source_format TEXT;
      ALTER TABLE messages ADD COLUMN source TEXT;
    `,
  },
  {
    version: 3,
    name: "conversation owners",
    sql: `ALTER TABLE conversations ADD COLUMN owner TEXT NOT NULL DEFAULT 'default';`,
  },
  traceSchemaStep(4),
  {
    version: 5,
    name: "answers kept for later turns",
    sql: `
      CREATE TABLE answers (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        created_at TEXT NOT NULL,
        previous_id TEXT,
        messages TEXT NOT NULL,
        body TEXT NOT NULL
      );
    `,
  },
  {
    version: 6,
    name: "traces: fewer indexes to keep on every write",
    // Each index is a B-tree insert per trace on the writer's thread. A status or model filter reads the
    // newest-first index and stops at its page (common values are met soon); the tenant and conversation
    // ones stay, since a small tenant's or one conversation's traces are rare among many.
    sql: `
      DROP INDEX traces_status;
      DROP INDEX traces_client_model;
      DROP INDEX traces_upstream_model;
    `,
  },
  {
    version: 7,
    name: "traces: responses kept in their row",
    // A response is never sent again: as a chunk it was hashed and indexed for sharing that never came.
    sql: "ALTER TABLE traces ADD COLUMN inline_bodies BLOB;",
  },
  {
    version: 8,
    name: "traces: the tenant index leaves the default tenant out",
    // A gateway without keys records every trace under the default tenant, and its inspector filters by none: an
    // index entry a trace for nothing. A list of the default tenant's traces walks the newest-first index instead.
    sql: `
      DROP INDEX traces_tenant;
      CREATE INDEX traces_tenant ON traces (tenant, created_at, seq) WHERE tenant IS NOT NULL AND tenant <> '${DEFAULT_OWNER}';
    `,
  },
];
