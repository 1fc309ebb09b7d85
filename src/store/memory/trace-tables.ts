import { ageCutoff, BYTES_LOW_WATER, bound, clampLimit } from "../traces/retention.js";
import { TimeSlice, WRITE_SLICE_MS } from "../traces/time-slice.js";
import { decodeChunk, encodeChunk } from "../traces/trace-chunks.js";
import { assembleTrace, type PreparedTrace, summaryOf, TracePreparer, type TraceRow } from "../traces/trace-prepare.js";
import { decodeCursor, encodeCursor, statusRange } from "../traces/trace-query.js";
import type { QueuedTrace } from "../traces/trace-queue.js";
import type { TracePage, TraceQuery, TraceRecord, TraceRetentionPolicy, TraceUsage } from "../traces/trace-store.js";

/** What a chunk and a trace cost the heap beyond their bytes (objects, map entries, the Buffer itself). */
const CHUNK_OVERHEAD = 256;
const TRACE_OVERHEAD = 1024;
const REFERENCE_BYTES = 8;

interface MemoryChunk {
  key: string;
  encoding: number;
  /**
   * The stored bytes as a one-byte (Latin-1) string: a byte a character, in V8's compacting heap. As Buffers they
   * were malloc'd blocks living for minutes among the request path's short-lived ones, and the C allocator kept
   * the holes they left: the process grew by 130 MB over the first 100,000 requests while the store stayed at
   * its bound (docs/benchmarks.md).
   */
  data: string;
  refs: number;
  bytes: number;
}

interface MemoryTrace {
  row: TraceRow;
  order: number;
  meta: string;
  bodies: Array<{ slot: number; form: number; chunks: MemoryChunk[] }>;
  bytes: number;
}

/**
 * The `memory:` store's traces as it holds them: chunks shared by hash, every byte accounted, the oldest evicted as soon as a
 * write passes `maxCount` or `maxBytes` (or one is older than `maxAgeMs`), so the heap stays flat however
 * long the gateway runs.
 */
export class MemoryTraceTables {
  private readonly preparer: TracePreparer;
  private readonly chunks = new Map<string, MemoryChunk>();
  private readonly byId = new Map<string, MemoryTrace>();
  private readonly byRequestId = new Map<string, MemoryTrace>();
  /** Oldest first by (instant, order), from `head` on. */
  private entries: MemoryTrace[] = [];
  private head = 0;
  private nextOrder = 0;
  private bytes = 0;

  constructor(
    private readonly retention: TraceRetentionPolicy,
    secrets: readonly string[],
    private readonly sliceMs = WRITE_SLICE_MS,
  ) {
    this.preparer = new TracePreparer(secrets);
  }

  /** Trace by trace, yielding to the event loop every slice of work: a batch of large bodies never holds it long. */
  async write(traces: readonly QueuedTrace[]): Promise<Array<string | undefined>> {
    const outcomes: Array<string | undefined> = [];
    const slice = new TimeSlice(this.sliceMs);
    for (const trace of traces) {
      try {
        this.insert(this.preparer.prepare(trace));
        outcomes.push(undefined);
      } catch (error) {
        outcomes.push((error as Error).message);
      }
      this.prune(this.retention, BYTES_LOW_WATER);
      await slice.yieldIfDue();
    }
    return outcomes;
  }

  list(query: TraceQuery): TracePage {
    const limit = clampLimit(query.limit);
    const status = statusRange(query.status);
    let index = this.entries.length - 1;
    if (query.cursor !== undefined) {
      const cursor = decodeCursor(query.cursor);
      index = this.firstAtOrAfter(cursor.instant, cursor.order) - 1;
    }
    const found: MemoryTrace[] = [];
    for (; index >= this.head && found.length <= limit; index--) {
      const { row } = this.entries[index]!;
      if (status !== undefined && (row.status === null || row.status < status.from || row.status > status.to)) continue;
      if (query.model !== undefined && row.clientModel !== query.model && row.upstreamModel !== query.model) continue;
      if (query.conversationId !== undefined && row.conversationId !== query.conversationId) continue;
      if (query.tenant !== undefined && row.tenant !== query.tenant) continue;
      if (query.hasLosses !== undefined && row.lossyCount > 0 !== query.hasLosses) continue;
      found.push(this.entries[index]!);
    }
    const page: TracePage = { traces: found.slice(0, limit).map((entry) => summaryOf(entry.row)) };
    if (found.length > limit && limit > 0) {
      const last = found[limit - 1]!;
      page.nextCursor = encodeCursor({ instant: last.row.instant, order: last.order });
    }
    return page;
  }

  get(idOrRequestId: string): TraceRecord | undefined {
    const entry = this.byId.get(idOrRequestId) ?? this.byRequestId.get(idOrRequestId);
    if (entry === undefined) return undefined;
    const bodies = entry.bodies.map((body) => ({
      slot: body.slot,
      form: body.form,
      bytes: Buffer.concat(body.chunks.map((chunk) => decodeChunk(chunk.encoding, Buffer.from(chunk.data, "latin1")))),
    }));
    return assembleTrace(entry.row, entry.meta, bodies);
  }

  usage(): TraceUsage {
    return { traces: this.byId.size, bytes: this.bytes };
  }

  /** Removes the oldest traces beyond the policy; with `lowWater`, down to that share of `maxBytes`. */
  prune(policy: TraceRetentionPolicy, lowWater = 1): number {
    let removed = 0;
    const removeOldest = () => {
      this.remove(this.entries[this.head]!);
      removed++;
    };
    if (policy.maxAgeMs !== undefined) {
      const cutoff = ageCutoff(policy.maxAgeMs);
      while (this.head < this.entries.length && this.entries[this.head]!.row.instant < cutoff) removeOldest();
    }
    const maxCount = bound(policy.maxCount);
    if (maxCount !== undefined) while (this.byId.size > maxCount) removeOldest();
    const maxBytes = bound(policy.maxBytes);
    if (maxBytes !== undefined && this.bytes > maxBytes) {
      while (this.byId.size > 0 && this.bytes > maxBytes * lowWater) removeOldest();
    }
    this.compact();
    return removed;
  }

  private insert(prepared: PreparedTrace): void {
    const existing = this.byId.get(prepared.row.id);
    if (existing !== undefined) this.remove(existing);
    let references = 0;
    const bodies = prepared.bodies.map((body) => {
      references += body.chunks.length;
      return {
        slot: body.slot,
        form: body.form,
        chunks: body.chunks.map((chunk) => this.reference(chunk.hash.toString("base64"), chunk.bytes)),
      };
    });
    const row = prepared.row;
    const entry: MemoryTrace = {
      row,
      order: this.nextOrder++,
      meta: prepared.meta,
      bodies,
      bytes: TRACE_OVERHEAD + prepared.meta.length + references * REFERENCE_BYTES + textLength(row),
    };
    this.bytes += entry.bytes;
    this.byId.set(row.id, entry);
    this.byRequestId.set(row.requestId, entry);
    const at = this.firstAtOrAfter(row.instant, entry.order);
    if (at === this.entries.length) this.entries.push(entry);
    else this.entries.splice(at, 0, entry);
  }

  private reference(key: string, bytes: Buffer): MemoryChunk {
    let chunk = this.chunks.get(key);
    if (chunk === undefined) {
      const { encoding, data } = encodeChunk(bytes);
      chunk = { key, encoding, data: data.toString("latin1"), refs: 0, bytes: data.length + CHUNK_OVERHEAD };
      this.chunks.set(key, chunk);
      this.bytes += chunk.bytes;
    }
    chunk.refs++;
    return chunk;
  }

  private remove(entry: MemoryTrace): void {
    for (const body of entry.bodies) {
      for (const chunk of body.chunks) {
        if (--chunk.refs > 0) continue;
        this.chunks.delete(chunk.key);
        this.bytes -= chunk.bytes;
      }
    }
    this.bytes -= entry.bytes;
    this.byId.delete(entry.row.id);
    if (this.byRequestId.get(entry.row.requestId) === entry) this.byRequestId.delete(entry.row.requestId);
    if (this.entries[this.head] === entry) {
      this.entries[this.head++] = undefined as unknown as MemoryTrace;
      return;
    }
    const at = this.firstAtOrAfter(entry.row.instant, entry.order);
    if (this.entries[at] === entry) this.entries.splice(at, 1);
  }

  /** The index of the first entry not before (instant, order). */
  private firstAtOrAfter(instant: string, order: number): number {
    let low = this.head;
    let high = this.entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const entry = this.entries[middle]!;
      const before = entry.row.instant < instant || (entry.row.instant === instant && entry.order < order);
      if (before) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }
}

function textLength(row: TraceRow): number {
  let length = 0;
  for (const value of Object.values(row)) if (typeof value === "string") length += value.length;
  return length;
}
