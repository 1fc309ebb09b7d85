import { ageCutoff, BYTES_LOW_WATER, bound, clampLimit } from "../traces/retention.js";
import { TimeSlice } from "../traces/time-slice.js";
import { decodeChunk, decodeRefs, encodeChunk, encodeRefs } from "../traces/trace-chunks.js";
import {
  assembleTrace,
  CHUNK_OVERHEAD,
  legacyTrace,
  type PreparedTrace,
  rowBytes,
  summaryOf,
  TracePreparer,
  type TraceRow,
  traceRowValues,
} from "../traces/trace-prepare.js";
import { encodeCursor, traceFilterSql } from "../traces/trace-query.js";
import type { QueuedTrace } from "../traces/trace-queue.js";
import type { TracePage, TraceQuery, TraceRecord, TraceRetentionPolicy, TraceUsage } from "../traces/trace-store.js";
import type { PostgresClient, PostgresPool, PostgresQueryable } from "./driver.js";

/** Serializes trace writes across every gateway sharing the database (chunk reference counts stay exact). */
const TRACE_LOCK = 0x7061726c7472; // "parltr"

const ROW_COLUMNS = `seq, id, request_id, created_at, route, provider, client_model, upstream_model, status, duration_ms,
  input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, switched_from_provider, switched_from_model,
  conversation_id, tenant, stream, lossy_count, repair_count`;

interface SqlRow {
  seq: string;
  id: string;
  request_id: string;
  created_at: Date;
  route: string;
  provider: string | null;
  client_model: string | null;
  upstream_model: string | null;
  status: number | null;
  duration_ms: number | null;
  input_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  output_tokens: number | null;
  switched_from_provider: string | null;
  switched_from_model: string | null;
  conversation_id: string | null;
  tenant: string | null;
  stream: boolean | null;
  lossy_count: number;
  repair_count: number;
}

interface Doomed {
  seq: string;
  bodies: Buffer | null;
  bytes: string;
}

/**
 * The PostgreSQL store's traces: each batch one transaction (a few statements over `unnest` arrays, whatever
 * its size) under an advisory lock, written from a timer after the responses went out.
 */
export class PostgresTraceTables {
  private readonly preparer: TracePreparer;
  constructor(
    private readonly pool: PostgresPool,
    private readonly retention: TraceRetentionPolicy = {},
    secrets: readonly string[] = [],
  ) {
    this.preparer = new TracePreparer(secrets);
  }

  async write(traces: readonly QueuedTrace[]): Promise<Array<string | undefined>> {
    const outcomes: Array<string | undefined> = traces.map(() => undefined);
    // The last trace of an id wins, as if the batch were written one trace at a time.
    const lastOfId = new Map<string, number>();
    for (const [index, trace] of traces.entries()) lastOfId.set(trace.fields.id, index);
    const prepared: PreparedTrace[] = [];
    const slice = new TimeSlice();
    for (const [index, trace] of traces.entries()) {
      if (lastOfId.get(trace.fields.id) !== index) continue;
      try {
        prepared.push(this.preparer.prepare(trace));
      } catch (error) {
        outcomes[index] = (error as Error).message;
      }
      // Chunking runs in this thread: yield every slice of work, so that a batch of large bodies never holds it long.
      await slice.yieldIfDue();
    }
    if (prepared.length === 0) return outcomes;
    const counts = new Map<string, { hash: Buffer; bytes: Buffer; count: number }>();
    for (const trace of prepared) {
      for (const body of trace.bodies) {
        for (const chunk of body.chunks) {
          const key = chunk.hash.toString("latin1");
          const entry = counts.get(key);
          if (entry === undefined) counts.set(key, { hash: chunk.hash, bytes: chunk.bytes, count: 1 });
          else entry.count++;
        }
      }
    }
    const known = await this.pool.query("SELECT hash FROM trace_chunks WHERE hash = ANY($1::bytea[])", [
      [...counts.values()].map((entry) => entry.hash),
    ]);
    const stored = new Set((known.rows as Array<{ hash: Buffer }>).map((row) => row.hash.toString("latin1")));
    // Compressing is the slow part: done before the lock.
    const encoded = new Map<string, { encoding: number; data: Buffer }>();
    for (const [key, entry] of counts) if (!stored.has(key)) encoded.set(key, encodeChunk(entry.bytes));
    try {
      await this.locked(async (client) => {
        const ids = await this.reference(client, counts, encoded);
        await this.replace(
          client,
          prepared.map((trace) => trace.row.id),
        );
        await this.insert(client, prepared, ids);
        await this.pruneIn(client, this.retention, BYTES_LOW_WATER);
      });
    } catch (error) {
      for (const index of lastOfId.values()) outcomes[index] ??= (error as Error).message;
    }
    return outcomes;
  }

  async list(query: TraceQuery): Promise<TracePage> {
    const limit = clampLimit(query.limit);
    const values: unknown[] = [];
    const where = traceFilterSql(query, (value, cast) => {
      values.push(value);
      return cast === undefined ? `$${values.length}` : `$${values.length}::${cast}`;
    });
    values.push(limit + 1);
    const result = await this.pool.query(
      `SELECT ${ROW_COLUMNS} FROM traces ${where} ORDER BY created_at DESC, seq DESC LIMIT $${values.length}`,
      values,
    );
    const rows = result.rows as SqlRow[];
    const page: TracePage = { traces: rows.slice(0, limit).map((row) => summaryOf(traceRow(row))) };
    if (rows.length > limit && limit > 0) {
      const last = rows[limit - 1]!;
      page.nextCursor = encodeCursor({ instant: last.created_at.toISOString(), order: Number(last.seq) });
    }
    return page;
  }

  async get(idOrRequestId: string): Promise<TraceRecord | undefined> {
    type Found = SqlRow & { record: string; bodies: Buffer | null };
    const select = `SELECT ${ROW_COLUMNS}, record, bodies FROM traces`;
    let found = (await this.pool.query(`${select} WHERE id = $1`, [idOrRequestId])).rows[0] as Found | undefined;
    found ??= (
      await this.pool.query(`${select} WHERE request_id = $1 ORDER BY created_at DESC, seq DESC LIMIT 1`, [
        idOrRequestId,
      ])
    ).rows[0] as Found | undefined;
    if (found === undefined) return undefined;
    const row = traceRow(found);
    if (found.bodies === null) return legacyTrace(row, found.record);
    const refs = decodeRefs(found.bodies);
    const ids = [...new Set(refs.flatMap((body) => body.ids))];
    const result = await this.pool.query(
      "SELECT id, encoding, data FROM trace_chunk_data WHERE id = ANY($1::bigint[])",
      [ids],
    );
    const chunks = new Map<number, Buffer>();
    for (const chunk of result.rows as Array<{ id: string; encoding: number; data: Buffer }>) {
      chunks.set(Number(chunk.id), decodeChunk(chunk.encoding, chunk.data));
    }
    const bodies = refs.map((body) => {
      const parts = body.ids.map((id) => {
        const bytes = chunks.get(id);
        if (bytes === undefined) throw new Error(`trace ${row.id}: body chunk ${id} is missing`);
        return bytes;
      });
      return { slot: body.slot, form: body.form, bytes: Buffer.concat(parts, body.byteLength) };
    });
    return assembleTrace(row, found.record, bodies);
  }

  async usage(client: PostgresQueryable = this.pool): Promise<TraceUsage> {
    const row = (await client.query("SELECT traces, bytes FROM trace_totals")).rows[0] as
      | { traces: string; bytes: string }
      | undefined;
    return { traces: Number(row?.traces ?? 0), bytes: Number(row?.bytes ?? 0) };
  }

  async prune(policy: TraceRetentionPolicy): Promise<number> {
    return this.locked((client) => this.pruneIn(client, policy, 1));
  }

  /** Adds the batch's references to the chunks it holds, inserting the new ones; returns every chunk's id. */
  private async reference(
    client: PostgresClient,
    counts: Map<string, { hash: Buffer; bytes: Buffer; count: number }>,
    encoded: Map<string, { encoding: number; data: Buffer }>,
  ): Promise<Map<string, number>> {
    const entries = [...counts.values()];
    const updated = await client.query(
      `UPDATE trace_chunks c SET refs = c.refs + u.n FROM unnest($1::bytea[], $2::integer[]) AS u (hash, n)
       WHERE c.hash = u.hash RETURNING c.hash, c.id`,
      [entries.map((entry) => entry.hash), entries.map((entry) => entry.count)],
    );
    const ids = new Map<string, number>();
    for (const row of updated.rows as Array<{ hash: Buffer; id: string }>)
      ids.set(row.hash.toString("latin1"), Number(row.id));
    // New, or pruned since the batch began (the lock keeps anyone else from inserting them meanwhile).
    const missing = [...counts].filter(([key]) => !ids.has(key));
    if (missing.length === 0) return ids;
    const stored = missing.map(([key, entry]) => {
      const chunk = encoded.get(key) ?? encodeChunk(entry.bytes);
      return { ...chunk, hash: entry.hash, count: entry.count };
    });
    const inserted = await client.query(
      `INSERT INTO trace_chunks (hash, refs, bytes)
       SELECT * FROM unnest($1::bytea[], $2::integer[], $3::integer[]) RETURNING hash, id, bytes`,
      [
        stored.map((chunk) => chunk.hash),
        stored.map((chunk) => chunk.count),
        stored.map((chunk) => chunk.data.length + CHUNK_OVERHEAD),
      ],
    );
    const idOf = new Map(
      (inserted.rows as Array<{ hash: Buffer; id: string }>).map((row) => [row.hash.toString("latin1"), row.id]),
    );
    await client.query(
      "INSERT INTO trace_chunk_data (id, encoding, data) SELECT * FROM unnest($1::bigint[], $2::smallint[], $3::bytea[])",
      [
        stored.map((chunk) => idOf.get(chunk.hash.toString("latin1"))),
        stored.map((chunk) => chunk.encoding),
        stored.map((chunk) => chunk.data),
      ],
    );
    let bytes = 0;
    for (const row of inserted.rows as Array<{ hash: Buffer; id: string; bytes: number }>) {
      ids.set(row.hash.toString("latin1"), Number(row.id));
      bytes += row.bytes;
    }
    await client.query("UPDATE trace_totals SET bytes = bytes + $1", [bytes]);
    return ids;
  }

  /** Traces recorded again under the same id go first (after the new references are counted). */
  private async replace(client: PostgresClient, traceIds: string[]): Promise<void> {
    const result = await client.query("SELECT seq, bodies, bytes FROM traces WHERE id = ANY($1::text[])", [traceIds]);
    if (result.rows.length > 0) await this.remove(client, result.rows as Doomed[]);
  }

  private async insert(client: PostgresClient, traces: PreparedTrace[], ids: Map<string, number>): Promise<void> {
    const columns: unknown[][] = Array.from({ length: 23 }, () => []);
    let bytes = 0;
    for (const trace of traces) {
      const refs = encodeRefs(
        trace.bodies.map((body) => ({
          slot: body.slot,
          form: body.form,
          byteLength: body.byteLength,
          ids: body.chunks.map((chunk) => ids.get(chunk.hash.toString("latin1"))!),
        })),
      );
      const row = trace.row;
      const rowSize = rowBytes(row, trace.meta, refs.length);
      bytes += rowSize;
      const values = [...traceRowValues(row, (stream) => stream), trace.meta, refs, rowSize];
      for (const [column, value] of values.entries()) columns[column]!.push(value);
    }
    await client.query(
      `INSERT INTO traces (id, request_id, created_at, route, provider, client_model, upstream_model, status,
         duration_ms, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, switched_from_provider,
         switched_from_model, conversation_id, tenant, stream, lossy_count, repair_count, record, bodies, bytes)
       SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[],
         $8::integer[], $9::double precision[], $10::integer[], $11::integer[], $12::integer[], $13::integer[],
         $14::text[], $15::text[], $16::text[], $17::text[], $18::boolean[], $19::integer[], $20::integer[],
         $21::text[], $22::bytea[], $23::bigint[])`,
      columns,
    );
    await client.query("UPDATE trace_totals SET traces = traces + $1, bytes = bytes + $2", [traces.length, bytes]);
  }

  private async remove(client: PostgresClient, rows: readonly Doomed[]): Promise<void> {
    const releases = new Map<number, number>();
    let bytes = 0;
    for (const row of rows) {
      bytes += Number(row.bytes);
      if (row.bodies === null) continue;
      for (const body of decodeRefs(row.bodies))
        for (const id of body.ids) releases.set(id, (releases.get(id) ?? 0) + 1);
    }
    await client.query("DELETE FROM traces WHERE seq = ANY($1::bigint[])", [rows.map((row) => row.seq)]);
    if (releases.size > 0) {
      const released = await client.query(
        `UPDATE trace_chunks c SET refs = c.refs - u.n FROM unnest($1::bigint[], $2::integer[]) AS u (id, n)
         WHERE c.id = u.id RETURNING c.id, c.refs, c.bytes`,
        [[...releases.keys()], [...releases.values()]],
      );
      const gone = (released.rows as Array<{ id: string; refs: number; bytes: number }>).filter((row) => row.refs <= 0);
      if (gone.length > 0) {
        const ids = gone.map((row) => row.id);
        await client.query("DELETE FROM trace_chunks WHERE id = ANY($1::bigint[])", [ids]);
        await client.query("DELETE FROM trace_chunk_data WHERE id = ANY($1::bigint[])", [ids]);
        for (const row of gone) bytes += row.bytes;
      }
    }
    await client.query("UPDATE trace_totals SET traces = traces - $1, bytes = bytes - $2", [rows.length, bytes]);
  }

  private async pruneIn(client: PostgresClient, policy: TraceRetentionPolicy, lowWater: number): Promise<number> {
    let removed = 0;
    const removeOldest = async (count: number, before?: string) => {
      const result = await client.query(
        `SELECT seq, bodies, bytes FROM traces ${before === undefined ? "" : "WHERE created_at < $2"}
         ORDER BY created_at, seq LIMIT $1`,
        before === undefined ? [count] : [count, before],
      );
      if (result.rows.length > 0) await this.remove(client, result.rows as Doomed[]);
      removed += result.rows.length;
      return result.rows.length > 0;
    };
    if (policy.maxAgeMs !== undefined) {
      const cutoff = ageCutoff(policy.maxAgeMs);
      while (await removeOldest(500, cutoff));
    }
    const maxCount = bound(policy.maxCount);
    if (maxCount !== undefined) {
      for (let excess = (await this.usage(client)).traces - maxCount; excess > 0; ) {
        await removeOldest(Math.min(excess, 500));
        excess = (await this.usage(client)).traces - maxCount;
      }
    }
    const maxBytes = bound(policy.maxBytes);
    if (maxBytes !== undefined) {
      const target = maxBytes * lowWater;
      let usage = await this.usage(client);
      if (usage.bytes > maxBytes) {
        while (usage.bytes > target && usage.traces > 0) {
          const share = Math.ceil((usage.traces * (usage.bytes - target)) / usage.bytes);
          await removeOldest(Math.min(Math.max(1, share), 500));
          usage = await this.usage(client);
        }
      }
    }
    return removed;
  }

  private async locked<T>(work: (client: PostgresClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock($1)", [TRACE_LOCK]);
      const result = await work(client);
      await client.query("COMMIT");
      client.release();
      return result;
    } catch (error) {
      await client.query("ROLLBACK").then(
        () => client.release(),
        (rollbackError: unknown) => client.release(rollbackError instanceof Error ? rollbackError : true),
      );
      throw error;
    }
  }
}

function traceRow(row: SqlRow): TraceRow {
  return {
    id: row.id,
    requestId: row.request_id,
    instant: row.created_at.toISOString(),
    route: row.route,
    provider: row.provider,
    clientModel: row.client_model,
    upstreamModel: row.upstream_model,
    status: row.status,
    durationMs: row.duration_ms,
    inputTokens: row.input_tokens,
    cacheReadTokens: row.cache_read_tokens,
    cacheWriteTokens: row.cache_write_tokens,
    outputTokens: row.output_tokens,
    switchedFromProvider: row.switched_from_provider,
    switchedFromModel: row.switched_from_model,
    conversationId: row.conversation_id,
    tenant: row.tenant,
    stream: row.stream,
    lossyCount: row.lossy_count,
    repairCount: row.repair_count,
  };
}
