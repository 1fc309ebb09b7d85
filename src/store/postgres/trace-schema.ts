import type { Migration } from "../migration.js";
import { ROW_OVERHEAD } from "../trace-prepare.js";

/**
 * Traces as listed rows plus shared, content-addressed body chunks (see docs/store.md), as the SQLite step of
 * the same name. A trace recorded before it keeps its whole record in `record` (and `bodies` NULL).
 * Self-contained, so that its number can change when steps are merged.
 */
export function traceSchemaStep(version: number): Migration {
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
        bytes = ${ROW_OVERHEAD} + octet_length(record);
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
