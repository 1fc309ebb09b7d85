import type { Migration } from "../migration.js";
import { ROW_OVERHEAD } from "../trace-prepare.js";

/**
 * Traces as listed rows plus shared, content-addressed body chunks (see docs/store.md). A trace recorded
 * before this step keeps its whole record in `record` (and `bodies` NULL); its listed fields are filled from
 * it here. Self-contained, so that its number can change when steps are merged.
 */
export function traceSchemaStep(version: number): Migration {
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
        bytes = ${ROW_OVERHEAD} + length(CAST(record AS BLOB))
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
