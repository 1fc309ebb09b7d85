import type { Migration } from "../migration.js";

/**
 * The bytes a trace row was counted beyond its text when step 4 was released (`ROW_OVERHEAD` of
 * traces/trace-prepare.ts then): a released step never changes, whatever the writer counts later.
 */
const ROW_OVERHEAD_AT_STEP_4 = 256;

/**
 * The PostgreSQL schema, one numbered step at a time (never edit a released step). Parts and envelopes are
 * `text`, not `jsonb`: jsonb reorders keys and drops duplicates, and the store promises the bytes back.
 */
export const postgresMigrations: readonly Migration[] = [
  {
    version: 1,
    name: "conversations, messages, parts, traces",
    sql: `
      CREATE TABLE conversations (
        id text PRIMARY KEY,
        created_at timestamptz NOT NULL,
        metadata text NOT NULL,
        next_seq integer NOT NULL DEFAULT 1
      );
      CREATE TABLE messages (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        conversation_id text NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        role text NOT NULL,
        complete boolean NOT NULL,
        created_at timestamptz NOT NULL,
        extra text NOT NULL,
        UNIQUE (conversation_id, seq)
      );
      CREATE TABLE parts (
        message_id bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
        position integer NOT NULL,
        part text NOT NULL,
        PRIMARY KEY (message_id, position)
      );
      CREATE TABLE traces (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text NOT NULL UNIQUE,
        request_id text NOT NULL,
        created_at timestamptz NOT NULL,
        route text NOT NULL,
        provider text,
        model text,
        status integer,
        record text NOT NULL
      );
      CREATE INDEX traces_created_at ON traces (created_at, seq);
    `,
  },
  {
    version: 2,
    name: "messages keep the client's own JSON beside their parts",
    sql: `
      ALTER TABLE messages ADD COLUMN source_format text;
      ALTER TABLE messages ADD COLUMN source text;
    `,
  },
  {
    version: 3,
    name: "conversation owners",
    sql: `ALTER TABLE conversations ADD COLUMN owner text NOT NULL DEFAULT 'default';`,
  },
  traceSchemaStep(4),
  {
    version: 5,
    name: "answers kept for later turns",
    sql: `
      CREATE TABLE answers (
        id text PRIMARY KEY,
        owner text NOT NULL,
        created_at timestamptz NOT NULL,
        previous_id text,
        messages text NOT NULL,
        body text NOT NULL
      );
    `,
  },
  {
    version: 6,
    name: "traces: the prompt cache's figures and a switch of route within a conversation",
    // As SQLite's step 9: listed fields, NULL in a trace recorded before.
    sql: `
      ALTER TABLE traces
        ADD COLUMN cache_read_tokens integer,
        ADD COLUMN cache_write_tokens integer,
        ADD COLUMN switched_from_provider text,
        ADD COLUMN switched_from_model text;
    `,
  },
];

/**
 * Traces as listed rows plus shared, content-addressed body chunks (see docs/store.md), as the SQLite step of
 * the same name. A trace recorded before it keeps its whole record in `record` (and `bodies` NULL).
 * Self-contained, so that its number can change when steps are merged.
 */
function traceSchemaStep(version: number): Migration {
  const member = (path: string) => `record::json #> '{${path}}'`;
  return {
    version,
    name: "traces: listed fields, shared body chunks, byte totals",
    sql: `
      ALTER TABLE traces RENAME COLUMN model TO upstream_model;
      ALTER TABLE traces
        ADD COLUMN client_model text,
        ADD COLUMN duration_ms double precision,
        ADD COLUMN input_tokens integer,
        ADD COLUMN output_tokens integer,
        ADD COLUMN conversation_id text,
        ADD COLUMN tenant text,
        ADD COLUMN stream boolean,
        ADD COLUMN lossy_count integer NOT NULL DEFAULT 0,
        ADD COLUMN repair_count integer NOT NULL DEFAULT 0,
        ADD COLUMN bodies bytea,
        ADD COLUMN bytes bigint NOT NULL DEFAULT 0;
      UPDATE traces SET
        client_model = CASE
          WHEN json_typeof(${member("clientRequest,body,model")}) = 'string' THEN ${member("clientRequest,body,model")} #>> '{}'
          WHEN json_typeof(${member("clientRequest,model")}) = 'string' THEN ${member("clientRequest,model")} #>> '{}' END,
        duration_ms = CASE WHEN json_typeof(${member("timings,totalMs")}) = 'number'
          THEN (${member("timings,totalMs")} #>> '{}')::double precision END,
        lossy_count = CASE WHEN json_typeof(${member("lossy")}) = 'array' THEN json_array_length(${member("lossy")}) ELSE 0 END,
        repair_count = CASE WHEN json_typeof(${member("repair")}) = 'array' THEN json_array_length(${member("repair")}) ELSE 0 END,
        bytes = ${ROW_OVERHEAD_AT_STEP_4} + octet_length(record);
      -- The counts apart from the data: an update writes a new row version, and counts change on every trace.
      CREATE TABLE trace_chunks (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        hash bytea NOT NULL UNIQUE,
        refs integer NOT NULL,
        bytes integer NOT NULL
      );
      CREATE TABLE trace_chunk_data (
        id bigint PRIMARY KEY,
        encoding smallint NOT NULL,
        data bytea NOT NULL
      );
      -- Chunks come compressed already: no second compression attempt when they are stored.
      ALTER TABLE trace_chunk_data ALTER COLUMN data SET STORAGE EXTERNAL;
      CREATE TABLE trace_totals (
        singleton integer PRIMARY KEY CHECK (singleton = 1),
        traces bigint NOT NULL,
        bytes bigint NOT NULL
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
