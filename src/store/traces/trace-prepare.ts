import { redactBodyText, redactSecrets, redactValue } from "./redact.js";
import { BodyChunker } from "./trace-bodies.js";
import { type Chunk, chunkBytes, wholeChunk } from "./trace-chunks.js";
import { BODY_SLOTS, type QueuedTrace, type TraceFields } from "./trace-queue.js";
import type { TraceRecord, TraceSummary } from "./trace-store.js";

export { BODY_SLOTS, type BodySlot } from "./trace-queue.js";

/**
 * What the background writer does to a trace before any backend stores it: redact, then cut each body into
 * content-addressed chunks. Pure CPU work, run off the request path (in the SQLite writer's worker thread, or
 * deferred for the other backends).
 */

/** How a body's text became bytes: UTF-8, or (a string with a lone surrogate, which UTF-8 cannot carry) JSON. */
export const UTF8_FORM = 0;
export const JSON_FORM = 1;

/** A trace's listed fields, as columns. */
export interface TraceRow {
  id: string;
  requestId: string;
  /** `createdAt` as `toISOString()`, so that text order is time order. */
  instant: string;
  route: string;
  provider: string | null;
  clientModel: string | null;
  upstreamModel: string | null;
  status: number | null;
  durationMs: number | null;
  inputTokens: number | null;
  cacheReadTokens: number | null;
  cacheWriteTokens: number | null;
  outputTokens: number | null;
  /** `switchedFrom`, as two columns: both set or neither. */
  switchedFromProvider: string | null;
  switchedFromModel: string | null;
  conversationId: string | null;
  tenant: string | null;
  stream: boolean | null;
  lossyCount: number;
  repairCount: number;
}

/**
 * A row's listed fields in the order both backends' `INSERT INTO traces` names their columns (id, request_id,
 * created_at, route, provider, client_model, upstream_model, status, duration_ms, input_tokens, cache_read_tokens,
 * cache_write_tokens, output_tokens, switched_from_provider, switched_from_model, conversation_id, tenant, stream,
 * lossy_count, repair_count); `stream` as the backend stores a boolean.
 */
export function traceRowValues<Flag>(
  row: TraceRow,
  flag: (value: boolean) => Flag,
): Array<string | number | Flag | null> {
  return [
    row.id,
    row.requestId,
    row.instant,
    row.route,
    row.provider,
    row.clientModel,
    row.upstreamModel,
    row.status,
    row.durationMs,
    row.inputTokens,
    row.cacheReadTokens,
    row.cacheWriteTokens,
    row.outputTokens,
    row.switchedFromProvider,
    row.switchedFromModel,
    row.conversationId,
    row.tenant,
    row.stream === null ? null : flag(row.stream),
    row.lossyCount,
    row.repairCount,
  ];
}

export interface PreparedBody {
  slot: number;
  form: number;
  byteLength: number;
  /** The body's chunks; none for an inline body (or an empty one). */
  chunks: Chunk[];
  /** A response kept whole in its trace's row (a backend that asked for it): its redacted bytes. */
  inline?: Buffer;
}

export interface TracePreparerOptions {
  /**
   * Responses are kept whole beside the row instead of as chunks: a response is never sent again, so its chunk
   * would be shared by nothing, and hashing and indexing it cost the writer more than the row itself.
   */
  inlineResponses?: boolean;
}

export interface PreparedTrace {
  row: TraceRow;
  /** The reports as JSON: `{ lossy, repair, timings }`. */
  meta: string;
  bodies: PreparedBody[];
}

/** Bytes accounted for a chunk beyond its data: its hash, its row and index entries. */
export const CHUNK_OVERHEAD = 96;
/** Bytes accounted for a trace row beyond its text: its numbers and its index entries. */
export const ROW_OVERHEAD = 256;

/**
 * Prepares traces for one writer. The requests (client and upstream) are cut into content-defined chunks, so
 * that a history sent again shares them (and is cut and hashed only where it is new, see trace-bodies.ts);
 * the responses are never sent again and go as one chunk each.
 */
export class TracePreparer {
  private readonly chunker: BodyChunker;

  private readonly inlineResponses: boolean;

  constructor(
    private readonly secrets: readonly string[] = [],
    options: TracePreparerOptions = {},
  ) {
    this.chunker = new BodyChunker(secrets);
    this.inlineResponses = options.inlineResponses ?? false;
  }

  prepare(trace: QueuedTrace): PreparedTrace {
    const bodies: PreparedBody[] = [];
    trace.bodies.forEach((body, slot) => {
      if (body !== undefined) bodies.push(this.body(slot, body));
    });
    const { fields } = trace;
    const reports = this.redactedReports(fields.reports);
    // Numbers only, nothing to redact: added to the reports' object, before its closing brace.
    const meta =
      fields.arrivals === undefined
        ? reports
        : `${reports.slice(0, -1)},"arrivals":${JSON.stringify(fields.arrivals)}}`;
    return { row: traceRow(fields), meta, bodies };
  }

  /** The reports' JSON, as it is when the search finds nothing to redact in it (the usual case). */
  private redactedReports(text: string): string {
    if (!this.chunker.mayNeedRedactionText(text)) return text;
    const { lossy, repair, timings, ...numbers } = JSON.parse(text) as Record<string, unknown>;
    const redacted = redactSecrets(redactValue({ lossy, repair, timings }), this.secrets) as Record<string, unknown>;
    // The rest are numbers only: nothing to redact.
    return JSON.stringify({ ...redacted, ...numbers });
  }

  private body(slot: number, body: Uint8Array | string): PreparedBody {
    const chunked = slot <= 1;
    if (typeof body === "string" && !isWellFormed(body)) {
      // UTF-8 cannot carry it: its JSON string literal is stored instead.
      const bytes = Buffer.from(JSON.stringify(redactBodyText(body, this.secrets)), "utf8");
      if (!chunked && this.inlineResponses) {
        return { slot, form: JSON_FORM, byteLength: bytes.length, chunks: [], inline: bytes };
      }
      return {
        slot,
        form: JSON_FORM,
        byteLength: bytes.length,
        chunks: chunked ? chunkBytes(bytes) : wholeChunk(bytes),
      };
    }
    const bytes =
      typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    if (!chunked && this.inlineResponses) {
      const inline = this.chunker.redactedResponse(bytes);
      return { slot, form: UTF8_FORM, byteLength: inline.length, chunks: [], inline };
    }
    const chunks = chunked ? this.chunker.request(slot, bytes) : this.chunker.response(bytes);
    return { slot, form: UTF8_FORM, byteLength: byteLength(chunks), chunks };
  }
}

function byteLength(chunks: readonly Chunk[]): number {
  let length = 0;
  for (const chunk of chunks) length += chunk.bytes.length;
  return length;
}

function traceRow(trace: TraceFields): TraceRow {
  return {
    id: trace.id,
    requestId: trace.requestId,
    instant: traceInstant(trace.createdAt),
    route: trace.route,
    provider: trace.provider ?? null,
    clientModel: trace.clientModel ?? null,
    upstreamModel: trace.upstreamModel ?? null,
    status: trace.status ?? null,
    durationMs: trace.durationMs ?? null,
    inputTokens: trace.inputTokens ?? null,
    cacheReadTokens: trace.cacheReadTokens ?? null,
    cacheWriteTokens: trace.cacheWriteTokens ?? null,
    outputTokens: trace.outputTokens ?? null,
    switchedFromProvider: trace.switchedFrom?.provider ?? null,
    switchedFromModel: trace.switchedFrom?.model ?? null,
    conversationId: trace.conversationId ?? null,
    tenant: trace.tenant ?? null,
    stream: trace.stream ?? null,
    lossyCount: trace.lossyCount,
    repairCount: trace.repairCount,
  };
}

/**
 * The instant stored for ordering and pruning. Always `toISOString()` form, so text comparison is time
 * comparison; an unparseable `createdAt` counts as now rather than failing the write. A `createdAt` already in
 * that form (the gateway's) is kept as it is, not formatted again.
 */
export function traceInstant(createdAt: string, now?: Date): string {
  const time = Date.parse(createdAt);
  if (Number.isNaN(time)) return (now ?? new Date()).toISOString();
  return ISO_INSTANT.test(createdAt) ? createdAt : new Date(time).toISOString();
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The bytes a row takes, as accounted against `maxBytes`. */
export function rowBytes(row: TraceRow, meta: string, refsLength: number): number {
  let text = 0;
  for (const value of Object.values(row)) if (typeof value === "string") text += value.length;
  return ROW_OVERHEAD + text + meta.length + refsLength;
}

export function summaryOf(row: TraceRow): TraceSummary {
  const summary: TraceSummary = {
    id: row.id,
    requestId: row.requestId,
    createdAt: row.instant,
    route: row.route,
    lossyCount: row.lossyCount,
    repairCount: row.repairCount,
  };
  if (row.provider !== null) summary.provider = row.provider;
  if (row.clientModel !== null) summary.clientModel = row.clientModel;
  if (row.upstreamModel !== null) summary.upstreamModel = row.upstreamModel;
  if (row.status !== null) summary.status = row.status;
  if (row.durationMs !== null) summary.durationMs = row.durationMs;
  if (row.inputTokens !== null) summary.inputTokens = row.inputTokens;
  if (row.cacheReadTokens !== null) summary.cacheReadTokens = row.cacheReadTokens;
  if (row.cacheWriteTokens !== null) summary.cacheWriteTokens = row.cacheWriteTokens;
  if (row.outputTokens !== null) summary.outputTokens = row.outputTokens;
  if (row.switchedFromProvider !== null && row.switchedFromModel !== null) {
    summary.switchedFrom = { provider: row.switchedFromProvider, model: row.switchedFromModel };
  }
  if (row.conversationId !== null) summary.conversationId = row.conversationId;
  if (row.tenant !== null) summary.tenant = row.tenant;
  if (row.stream !== null) summary.stream = row.stream;
  return summary;
}

/** A stored trace put back together: its row, its reports and its bodies' bytes. */
export function assembleTrace(
  row: TraceRow,
  meta: string,
  bodies: ReadonlyArray<{ slot: number; form: number; bytes: Buffer }>,
): TraceRecord {
  const reports = JSON.parse(meta) as Pick<
    TraceRecord,
    "lossy" | "repair" | "timings" | "arrivals" | "storedMessages" | "lossyStages"
  >;
  const trace: TraceRecord = {
    ...summaryFields(row),
    lossy: reports.lossy,
    repair: reports.repair,
    timings: reports.timings,
  };
  if (reports.arrivals !== undefined) trace.arrivals = reports.arrivals;
  if (reports.storedMessages !== undefined) trace.storedMessages = reports.storedMessages;
  if (reports.lossyStages !== undefined) trace.lossyStages = reports.lossyStages;
  for (const body of bodies) {
    const name = BODY_SLOTS[body.slot];
    if (name === undefined) continue;
    const text = body.bytes.toString("utf8");
    trace[name] = body.form === JSON_FORM ? (JSON.parse(text) as string) : text;
  }
  return trace;
}

/**
 * A trace recorded whole before bodies were chunked (the SQL backends' first schema): its bodies were stored
 * parsed, so they come back as their JSON text.
 */
export function legacyTrace(row: TraceRow, record: string): TraceRecord {
  const old = JSON.parse(record) as Record<string, unknown>;
  const trace = assembleTrace(
    row,
    JSON.stringify({ lossy: old.lossy ?? [], repair: old.repair ?? [], timings: old.timings ?? {} }),
    [],
  );
  for (const name of BODY_SLOTS) {
    const body = old[name];
    if (body !== undefined && body !== null) trace[name] = typeof body === "string" ? body : JSON.stringify(body);
  }
  return trace;
}

function summaryFields(row: TraceRow): Omit<TraceRecord, "lossy" | "repair" | "timings"> {
  const { lossyCount: _lossy, repairCount: _repair, ...fields } = summaryOf(row);
  return fields;
}

function isWellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}
