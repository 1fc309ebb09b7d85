import { ageCutoff, BYTES_LOW_WATER, bound, clampLimit } from "../traces/retention.js";
import {
  decodeChunk,
  decodeInline,
  decodeRefs,
  encodeChunk,
  encodeInline,
  encodeRefs,
} from "../traces/trace-chunks.js";
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
import { type SqliteDatabase, type SqliteStatement, transactions } from "./driver.js";

const ROW_COLUMNS =
  "seq, id, request_id, created_at, route, provider, client_model, upstream_model, status, duration_ms, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, switched_from_provider, switched_from_model, conversation_id, tenant, stream, lossy_count, repair_count";

interface SqlRow {
  seq: number;
  id: string;
  request_id: string;
  created_at: string;
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
  stream: number | null;
  lossy_count: number;
  repair_count: number;
}

interface Doomed {
  seq: number;
  bodies: Uint8Array | null;
  bytes: number;
}

/** A chunk of the batch being written: its bytes, how many references the batch holds, and once encoded (it was new), what is stored. */
interface PendingChunk {
  hash: Buffer;
  bytes: Buffer;
  count: number;
  stored?: { encoding: number; data: Buffer };
}

/**
 * The SQLite store's traces on one connection, synchronous: the writer's worker thread writes through one,
 * readers (the CLI, the gateway's own reads) through another. Each batch is one `BEGIN IMMEDIATE`
 * transaction; a chunk's `refs` counts the references of the traces that hold it, and a chunk goes with the
 * last trace that held it.
 */
export class SqliteTraceTables {
  private readonly preparer: TracePreparer;
  private readonly statements;
  private readonly listStatements = new Map<string, SqliteStatement>();
  private readonly transaction: <T>(work: () => T) => T;
  /** The pages of the database besides the traces', as last measured (`keepPagesWithin`). */
  private otherBytes = 0;
  private pageBytes: number | undefined;
  /** What the trace tables' pages take (`dbstat`); null where SQLite was built without it. */
  private traceBytesStatement: SqliteStatement | null | undefined;

  constructor(
    private readonly database: SqliteDatabase,
    private readonly retention: TraceRetentionPolicy = {},
    secrets: readonly string[] = [],
  ) {
    this.preparer = new TracePreparer(secrets, { inlineResponses: true });
    this.transaction = transactions(database);
    const prepare = (sql: string) => database.prepare(sql);
    this.statements = {
      savepoint: prepare("SAVEPOINT one_trace"),
      release: prepare("RELEASE one_trace"),
      rollbackTo: prepare("ROLLBACK TO one_trace"),
      addRefs: prepare("UPDATE trace_chunks SET refs = refs + ? WHERE hash = ? RETURNING id"),
      insertChunk: prepare("INSERT INTO trace_chunks (hash, refs, bytes) VALUES (?, ?, ?) RETURNING id"),
      insertChunkData: prepare("INSERT INTO trace_chunk_data (id, encoding, data) VALUES (?, ?, ?)"),
      releaseRefs: prepare("UPDATE trace_chunks SET refs = refs - ? WHERE id = ? RETURNING refs, bytes"),
      deleteChunk: prepare("DELETE FROM trace_chunks WHERE id = ?"),
      deleteChunkData: prepare("DELETE FROM trace_chunk_data WHERE id = ?"),
      chunks: prepare("SELECT id, encoding, data FROM trace_chunk_data WHERE id IN (SELECT value FROM json_each(?))"),
      sameId: prepare("SELECT seq, bodies, bytes FROM traces WHERE id = ?"),
      insertTrace: prepare(
        `INSERT INTO traces (id, request_id, created_at, route, provider, client_model, upstream_model, status,
           duration_ms, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, switched_from_provider,
           switched_from_model, conversation_id, tenant, stream, lossy_count, repair_count, record, bodies,
           inline_bodies, bytes)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      deleteTrace: prepare("DELETE FROM traces WHERE seq = ?"),
      totals: prepare("SELECT traces, bytes FROM trace_totals"),
      freelistCount: prepare("PRAGMA freelist_count"),
      pageCount: prepare("PRAGMA page_count"),
      pageSize: prepare("PRAGMA page_size"),
      addTotals: prepare("UPDATE trace_totals SET traces = traces + ?, bytes = bytes + ?"),
      oldest: prepare("SELECT seq, bodies, bytes FROM traces ORDER BY created_at, seq LIMIT ?"),
      olderThan: prepare("SELECT seq, bodies, bytes FROM traces WHERE created_at < ? ORDER BY created_at, seq LIMIT ?"),
      byId: prepare(`SELECT ${ROW_COLUMNS}, record, bodies, inline_bodies FROM traces WHERE id = ?`),
      byRequestId: prepare(
        `SELECT ${ROW_COLUMNS}, record, bodies, inline_bodies FROM traces WHERE request_id = ? ORDER BY created_at DESC, seq DESC LIMIT 1`,
      ),
    };
  }

  /** Stores a batch in one transaction, then keeps the retention bounds. Per trace: undefined, or why not. */
  write(traces: readonly QueuedTrace[]): Array<string | undefined> {
    const outcomes: Array<string | undefined> = [];
    try {
      this.transaction(() => {
        let written = 0;
        let bytes = 0;
        // A slice at a time, prepared and inserted: what one slice prepared is garbage before the next is made, so
        // that a scavenge in the middle of a batch copies one slice's traces, not all of them.
        for (let start = 0; start < traces.length; start += WRITE_SLICE) {
          const prepared = this.prepareSlice(traces, start, outcomes);
          bytes += this.insertAll(prepared, pendingChunks(prepared));
          for (const trace of prepared) if (trace !== undefined) written++;
        }
        this.statements.addTotals.run(written, bytes);
        this.keepRetention();
      });
    } catch {
      // One of them failed (an id recorded again, as a retry does): trace by trace, each in a savepoint of its own.
      outcomes.length = 0;
      this.transaction(() => {
        let written = 0;
        let bytes = 0;
        for (let start = 0; start < traces.length; start += WRITE_SLICE) {
          const prepared = this.prepareSlice(traces, start, outcomes);
          const pending = pendingChunks(prepared);
          prepared.forEach((trace, offset) => {
            if (trace === undefined) return;
            this.statements.savepoint.run();
            try {
              bytes += this.insert(trace, pending);
              written++;
              this.statements.release.run();
            } catch (error) {
              this.statements.rollbackTo.run();
              this.statements.release.run();
              outcomes[start + offset] = (error as Error).message;
            }
          });
        }
        this.statements.addTotals.run(written, bytes);
        this.keepRetention();
      });
    }
    this.vacuumIfWorthIt(false);
    return traces.map((_, index) => outcomes[index]);
  }

  /** The traces of one slice, prepared; a trace that cannot be has its reason in `outcomes` and no entry. */
  private prepareSlice(
    traces: readonly QueuedTrace[],
    start: number,
    outcomes: Array<string | undefined>,
  ): Array<PreparedTrace | undefined> {
    return traces.slice(start, start + WRITE_SLICE).map((trace, offset) => {
      try {
        return this.preparer.prepare(trace);
      } catch (error) {
        outcomes[start + offset] = (error as Error).message;
        return undefined;
      }
    });
  }

  list(query: TraceQuery): TracePage {
    const limit = clampLimit(query.limit);
    const { sql, values } = listSql(query);
    let statement = this.listStatements.get(sql);
    if (statement === undefined) {
      statement = this.database.prepare(sql);
      this.listStatements.set(sql, statement);
    }
    const rows = statement.all(...values, limit + 1) as SqlRow[];
    const page: TracePage = { traces: rows.slice(0, limit).map((row) => summaryOf(traceRow(row))) };
    if (rows.length > limit && limit > 0) {
      const last = rows[limit - 1]!;
      page.nextCursor = encodeCursor({ instant: last.created_at, order: last.seq });
    }
    return page;
  }

  get(idOrRequestId: string): TraceRecord | undefined {
    type Found = SqlRow & { record: string; bodies: Uint8Array | null; inline_bodies: Uint8Array | null };
    const found = (this.statements.byId.get(idOrRequestId) ?? this.statements.byRequestId.get(idOrRequestId)) as
      | Found
      | undefined;
    if (found === undefined) return undefined;
    const row = traceRow(found);
    if (found.bodies === null) return legacyTrace(row, found.record);
    const refs = decodeRefs(found.bodies);
    const ids = [...new Set(refs.flatMap((body) => body.ids))];
    const chunks = new Map<number, Buffer>();
    for (const chunk of this.statements.chunks.all(JSON.stringify(ids)) as Array<{
      id: number;
      encoding: number;
      data: Uint8Array;
    }>) {
      chunks.set(chunk.id, decodeChunk(chunk.encoding, chunk.data));
    }
    // Inline bodies (no chunks, yet bytes) follow one another in the row's own blob, in the references' order.
    const inline = found.inline_bodies === null ? undefined : decodeInline(found.inline_bodies);
    let inlineAt = 0;
    const bodies = refs.map((body) => {
      if (body.ids.length === 0 && body.byteLength > 0) {
        if (inline === undefined || inlineAt + body.byteLength > inline.length) {
          throw new Error(`trace ${row.id}: an inline body is missing`);
        }
        inlineAt += body.byteLength;
        return { slot: body.slot, form: body.form, bytes: inline.subarray(inlineAt - body.byteLength, inlineAt) };
      }
      const parts = body.ids.map((id) => {
        const bytes = chunks.get(id);
        if (bytes === undefined) throw new Error(`trace ${row.id}: body chunk ${id} is missing`);
        return bytes;
      });
      return { slot: body.slot, form: body.form, bytes: Buffer.concat(parts, body.byteLength) };
    });
    return assembleTrace(row, found.record, bodies);
  }

  usage(): TraceUsage {
    const totals = this.statements.totals.get() as { traces: number; bytes: number };
    return { traces: totals.traces, bytes: totals.bytes };
  }

  /** Removes what the policy says must go, in one transaction, and gives the freed pages back to the file system. */
  prune(policy: TraceRetentionPolicy): number {
    const removed = this.transaction(() => this.pruneInTransaction(policy, 1));
    this.vacuumIfWorthIt(removed > 0);
    return removed;
  }

  /**
   * Inserts a batch's traces, each chunk's references counted once for all of them; returns the bytes they add.
   * Throws on the first failure (the caller rolls back and goes trace by trace).
   */
  private insertAll(prepared: ReadonlyArray<PreparedTrace | undefined>, pending: Map<string, PendingChunk>): number {
    let bytes = 0;
    const ids = new Map<string, number>();
    for (const [key, chunk] of pending) {
      const known = this.statements.addRefs.get(chunk.count, chunk.hash) as { id: number } | undefined;
      if (known !== undefined) {
        ids.set(key, known.id);
        continue;
      }
      const inserted = this.insertChunk(chunk, chunk.count);
      ids.set(key, inserted.id);
      bytes += inserted.bytes;
    }
    for (const trace of prepared) if (trace !== undefined) bytes += this.insertRow(trace, ids);
    return bytes;
  }

  private insertChunk(chunk: PendingChunk, refs: number): { id: number; bytes: number } {
    chunk.stored ??= encodeChunk(chunk.bytes);
    const bytes = chunk.stored.data.length + CHUNK_OVERHEAD;
    const { id } = this.statements.insertChunk.get(chunk.hash, refs, bytes) as { id: number };
    this.statements.insertChunkData.run(id, chunk.stored.encoding, chunk.stored.data);
    return { id, bytes };
  }

  /** Inserts one trace and the chunks it brings; returns the bytes they add (for the batch's totals). */
  private insert(trace: PreparedTrace, pending: Map<string, PendingChunk>): number {
    const existing = this.statements.sameId.get(trace.row.id) as Doomed | undefined;
    if (existing !== undefined) this.remove([existing]);
    const counts = new Map<string, number>();
    for (const body of trace.bodies) {
      for (const chunk of body.chunks) {
        const key = chunk.hash.toString("latin1");
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
    const ids = new Map<string, number>();
    let chunkBytes = 0;
    for (const [key, count] of counts) {
      const chunk = pending.get(key)!;
      const known = this.statements.addRefs.get(count, chunk.hash) as { id: number } | undefined;
      if (known !== undefined) {
        ids.set(key, known.id);
        continue;
      }
      // New, or pruned since the batch began.
      const inserted = this.insertChunk(chunk, count);
      ids.set(key, inserted.id);
      chunkBytes += inserted.bytes;
    }
    return this.insertRow(trace, ids) + chunkBytes;
  }

  /** The trace's row, its bodies as the ids of their chunks; returns the bytes it takes. */
  private insertRow(trace: PreparedTrace, ids: ReadonlyMap<string, number>): number {
    const refs = encodeRefs(
      trace.bodies.map((body) => ({
        slot: body.slot,
        form: body.form,
        byteLength: body.byteLength,
        ids: body.chunks.map((chunk) => ids.get(chunk.hash.toString("latin1"))!),
      })),
    );
    const inline = encodeInline(trace.bodies.flatMap((body) => (body.inline?.length ? [body.inline] : [])));
    const row = trace.row;
    const bytes = rowBytes(row, trace.meta, refs.length + (inline?.length ?? 0));
    this.statements.insertTrace.run(
      // SQLite keeps a boolean as an integer.
      ...traceRowValues(row, (stream) => (stream ? 1 : 0)),
      trace.meta,
      refs,
      inline,
      bytes,
    );
    return bytes;
  }

  /** Deletes traces, releasing their chunks; a chunk no trace holds any more goes too. */
  private remove(rows: readonly Doomed[]): void {
    const releases = new Map<number, number>();
    let bytes = 0;
    for (const row of rows) {
      bytes += row.bytes;
      if (row.bodies !== null) {
        for (const body of decodeRefs(row.bodies)) {
          for (const id of body.ids) releases.set(id, (releases.get(id) ?? 0) + 1);
        }
      }
      this.statements.deleteTrace.run(row.seq);
    }
    for (const [id, count] of releases) {
      const left = this.statements.releaseRefs.get(count, id) as { refs: number; bytes: number } | undefined;
      if (left === undefined || left.refs > 0) continue;
      this.statements.deleteChunk.run(id);
      this.statements.deleteChunkData.run(id);
      bytes += left.bytes;
    }
    this.statements.addTotals.run(-rows.length, -bytes);
  }

  private pruneInTransaction(policy: TraceRetentionPolicy, lowWater: number): number {
    let removed = 0;
    const removeBatch = (rows: Doomed[]) => {
      if (rows.length > 0) this.remove(rows);
      removed += rows.length;
      return rows.length > 0;
    };
    if (policy.maxAgeMs !== undefined) {
      const cutoff = ageCutoff(policy.maxAgeMs);
      while (removeBatch(this.statements.olderThan.all(cutoff, 500) as Doomed[]));
    }
    const maxCount = bound(policy.maxCount);
    if (maxCount !== undefined) {
      for (let excess = this.usage().traces - maxCount; excess > 0; excess = this.usage().traces - maxCount) {
        removeBatch(this.statements.oldest.all(Math.min(excess, 500)) as Doomed[]);
      }
    }
    const maxBytes = bound(policy.maxBytes);
    if (maxBytes !== undefined && this.usage().bytes > maxBytes)
      removed += this.removeOldestDownTo(maxBytes * lowWater);
    return removed;
  }

  /** Removes the oldest traces until the bytes counted come to `target`; returns how many went. */
  private removeOldestDownTo(target: number): number {
    let removed = 0;
    for (let usage = this.usage(); usage.bytes > target && usage.traces > 0; usage = this.usage()) {
      // As many of the oldest as the excess is of the whole, at least one: shared chunks make it an estimate.
      const share = Math.ceil((usage.traces * (usage.bytes - target)) / usage.bytes);
      const rows = this.statements.oldest.all(Math.min(Math.max(1, share), 500)) as Doomed[];
      if (rows.length === 0) break;
      this.remove(rows);
      removed += rows.length;
    }
    return removed;
  }

  /** After a batch, in its transaction: the policy's bounds, then the pages the traces take in the file. */
  private keepRetention(): void {
    this.pruneInTransaction(this.retention, BYTES_LOW_WATER);
    this.keepPagesWithin(bound(this.retention.maxBytes));
  }

  /**
   * The pages the traces take in the file are kept within `maxBytes` too. The bytes counted (`usage`) are what
   * their rows and chunks hold; the file holds those in pages, with the indexes and the room pages leave unused (a
   * chunk's last overflow page, a leaf half full), and kept the pages pruning freed for the next traces: with the
   * counted bytes at the bound the file settled 20-33 % above it. Once the pages in use, less those the rest of the
   * database took when last measured, pass the bound, the trace tables' own pages are measured (`dbstat`, ~0.15 s for
   * 300 MB of traces, in the writer's thread) and the oldest traces go until theirs come to the low-water share of
   * it. The pages freed are for the next traces, but those that take the file past the bound and the rest of the
   * database are given back in the same transaction, so that no commit, and no checkpoint after one, leaves the
   * file larger.
   */
  private keepPagesWithin(maxBytes: number | undefined): void {
    if (maxBytes === undefined) return;
    this.pageBytes ??= Number((this.statements.pageSize.get() as { page_size: number }).page_size);
    const pageBytes = this.pageBytes;
    const used = (this.pages() - this.freePages()) * pageBytes;
    if (used - this.otherBytes > maxBytes) {
      const traceBytes = this.traceFileBytes();
      if (traceBytes === undefined) return;
      this.otherBytes = Math.max(0, used - traceBytes);
      // The counted bytes at which the traces' pages come to the low water, at the ratio the two stand at now.
      if (traceBytes > maxBytes)
        this.removeOldestDownTo((this.usage().bytes * maxBytes * BYTES_LOW_WATER) / traceBytes);
    }
    const excess = this.pages() - Math.floor((maxBytes + this.otherBytes) / pageBytes);
    const free = this.freePages();
    if (excess > 0 && free > 0) this.database.pragma(`incremental_vacuum(${Math.min(free, excess)})`);
  }

  /** The bytes of the pages the trace tables and their indexes take, or undefined without `dbstat`. */
  private traceFileBytes(): number | undefined {
    if (this.traceBytesStatement === undefined) {
      try {
        this.traceBytesStatement = this.database.prepare(
          `SELECT coalesce(sum(pgsize), 0) AS bytes FROM dbstat WHERE name IN (SELECT name FROM sqlite_schema
             WHERE tbl_name IN ('traces', 'trace_chunks', 'trace_chunk_data', 'trace_totals'))`,
        );
      } catch {
        this.traceBytesStatement = null;
      }
    }
    if (this.traceBytesStatement === null) return undefined;
    return Number((this.traceBytesStatement.get() as { bytes: number }).bytes);
  }

  private pages(): number {
    return Number((this.statements.pageCount.get() as { page_count: number }).page_count);
  }

  private freePages(): number {
    return Number((this.statements.freelistCount.get() as { freelist_count: number }).freelist_count);
  }

  /**
   * Pages freed by deletes go back to the file system (the database runs with `auto_vacuum = INCREMENTAL`):
   * after an explicit prune always, while writing only once a quarter of the file is free, so that steady
   * pruning reuses its pages instead of shrinking and growing the file (those past the bytes bound went back with
   * the batch, `keepPagesWithin`).
   */
  private vacuumIfWorthIt(always: boolean): void {
    // Prepared once: `pragma()` compiles its statement on every call, and this runs after every batch.
    const free = this.freePages();
    if (free === 0) return;
    const pages = this.pages();
    if (always || free * 4 > pages) this.database.pragma("incremental_vacuum");
  }
}

/** Traces prepared and inserted together, within a batch's transaction (see `write`). */
const WRITE_SLICE = 32;

/**
 * The chunks of a slice's traces, each with the number of references they hold to it. A chunk is compressed when
 * the slice first finds it missing (a lookup before the lock cost every known chunk a statement more than the
 * compression of the few new ones it would have moved out of the lock).
 */
function pendingChunks(prepared: ReadonlyArray<PreparedTrace | undefined>): Map<string, PendingChunk> {
  const pending = new Map<string, PendingChunk>();
  for (const trace of prepared) {
    for (const body of trace?.bodies ?? []) {
      for (const chunk of body.chunks) {
        const key = chunk.hash.toString("latin1");
        const known = pending.get(key);
        if (known === undefined) pending.set(key, { hash: chunk.hash, bytes: chunk.bytes, count: 1 });
        else known.count++;
      }
    }
  }
  return pending;
}

/** The statement that lists a page (its last parameter the page size plus one). */
export function listSql(query: TraceQuery): { sql: string; values: unknown[] } {
  const values: unknown[] = [];
  const where = traceFilterSql(query, (value) => {
    values.push(value);
    return "?";
  });
  return { sql: `SELECT ${ROW_COLUMNS} FROM traces ${where} ORDER BY created_at DESC, seq DESC LIMIT ?`, values };
}

function traceRow(row: SqlRow): TraceRow {
  return {
    id: row.id,
    requestId: row.request_id,
    instant: row.created_at,
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
    stream: row.stream === null ? null : row.stream === 1,
    lossyCount: row.lossy_count,
    repairCount: row.repair_count,
  };
}
