import type { Migration } from "../migration.js";
import { DEFAULT_OWNER } from "../owner.js";

/**
 * The bytes a trace row was counted beyond its text when step 4 was released (`ROW_OVERHEAD` of
 * traces/trace-prepare.ts then): a released step never changes, whatever the writer counts later.
 */
const ROW_OVERHEAD_AT_STEP_4 = 256;

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
  {
    version: 9,
    name: "traces: the prompt cache's figures and a switch of route within a conversation",
    // Listed fields, so that a conversation's page shows them turn by turn from its list alone. NULL in a trace
    // recorded before: its figures were not kept apart.
    sql: `
      ALTER TABLE traces ADD COLUMN cache_read_tokens INTEGER;
      ALTER TABLE traces ADD COLUMN cache_write_tokens INTEGER;
      ALTER TABLE traces ADD COLUMN switched_from_provider TEXT;
      ALTER TABLE traces ADD COLUMN switched_from_model TEXT;
    `,
  },
];

/**
 * Traces as listed rows plus shared, content-addressed body chunks (see docs/store.md). A trace recorded
 * before this step keeps its whole record in `record` (and `bodies` NULL); its listed fields are filled from
 * it here. Self-contained, so that its number can change when steps are merged.
 */
function traceSchemaStep(version: number): Migration {
  return {
    version,
    name: "traces: listed fields, shared body chunks, byte totals",
    sql: `
      ALTER TABLE traces RENAME COLUMN model TO upstream_model;
      ALTER TABLE traces ADD COLUMN client_model TEXT;
      ALTER TABLE traces ADD COLUMN duration_ms REAL;
      ALTER TABLE traces ADD COLUMN input_tokens INTEGER;
      ALTER TABLE traces ADD COLUMN output_tokens INTEGER;
      ALTER TABLE traces ADD COLUMN conversation_id TEXT;
      ALTER TABLE traces ADD COLUMN tenant TEXT;
      ALTER TABLE traces ADD COLUMN stream INTEGER;
      ALTER TABLE traces ADD COLUMN lossy_count INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE traces ADD COLUMN repair_count INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE traces ADD COLUMN bodies BLOB;
      ALTER TABLE traces ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
      UPDATE traces SET
        client_model = CASE WHEN json_type(record, '$.clientRequest.body.model') = 'text'
          THEN json_extract(record, '$.clientRequest.body.model')
          WHEN json_type(record, '$.clientRequest.model') = 'text' THEN json_extract(record, '$.clientRequest.model') END,
        duration_ms = json_extract(record, '$.timings.totalMs'),
        lossy_count = coalesce(json_array_length(record, '$.lossy'), 0),
        repair_count = coalesce(json_array_length(record, '$.repair'), 0),
        bytes = ${ROW_OVERHEAD_AT_STEP_4} + length(CAST(record AS BLOB))
      WHERE json_valid(record);
      -- The counts apart from the data: SQLite rewrites a whole row on update, and counts change on every trace.
      CREATE TABLE trace_chunks (
        id INTEGER PRIMARY KEY,
        hash BLOB NOT NULL UNIQUE,
        refs INTEGER NOT NULL,
        bytes INTEGER NOT NULL
      );
      CREATE TABLE trace_chunk_data (
        id INTEGER PRIMARY KEY,
        encoding INTEGER NOT NULL,
        data BLOB NOT NULL
      );
      CREATE TABLE trace_totals (
        singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
        traces INTEGER NOT NULL,
        bytes INTEGER NOT NULL
      );
      INSERT INTO trace_totals (singleton, traces, bytes) SELECT 1, count(*), coalesce(sum(bytes), 0) FROM traces;
      CREATE INDEX traces_request_id ON traces (request_id);
      CREATE INDEX traces_status ON traces (status, created_at, seq);
      CREATE INDEX traces_client_model ON traces (client_model, created_at, seq);
      CREATE INDEX traces_upstream_model ON traces (upstream_model, created_at, seq);
      CREATE INDEX traces_conversation ON traces (conversation_id, created_at, seq) WHERE conversation_id IS NOT NULL;
      CREATE INDEX traces_tenant ON traces (tenant, created_at, seq) WHERE tenant IS NOT NULL;
      CREATE INDEX traces_with_losses ON traces (created_at, seq) WHERE lossy_count > 0;
    `,
  };
}
