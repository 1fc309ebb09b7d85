// src/store/traces/trace-store.ts — the trace store's API
import type { LossyEntry } from "../../core/index.js";
/**
 * One gateway exchange. The bodies are text exactly as received or sent (the responses cut at
 * `traces.maxBodyBytes`), and come back from `get` byte for byte (after key redaction).
 */
export interface TraceRecord {
  id: string;
  requestId: string;
  createdAt: string;
  route: string;
  provider?: string;
  /** The model the client asked for. */
  clientModel?: string;
  /** The model sent upstream. */
  upstreamModel?: string;
  status?: number;
  durationMs?: number;
  /** The prompt's tokens neither read from nor written to the provider's cache (the core's `Usage.inputTokens`). */
  inputTokens?: number;
  /** The prompt's tokens read from the provider's cache (`Usage.cacheReadInputTokens`), beside `inputTokens`. */
  cacheReadTokens?: number;
  /** The prompt's tokens written to the provider's cache (`Usage.cacheCreationInputTokens`), beside `inputTokens`. */
  cacheWriteTokens?: number;
  outputTokens?: number;
  /**
   * Where the conversation's previous answered turn went, when this turn went to another provider or model: a
   * provider's prompt cache is its own and its model's, so this turn found none of the conversation's.
   */
  switchedFrom?: RouteTaken;
  conversationId?: string;
  /** The tenant of the client's key (`DEFAULT_OWNER` on a gateway without keys), as conversation owners are. */
  tenant?: string;
  stream?: boolean;
  clientRequest?: string;
  upstreamRequest?: string;
  upstreamResponse?: string;
  clientResponse?: string;
  /** As recorded: a trace keeps the codes of the release that wrote it. */
  lossy: LossyEntry<string>[];
  repair: unknown[];
  timings: Record<string, number>;
  /**
   * When each piece of a streamed response arrived (upstream) or was written (client): pairs of the piece's
   * offset in the body text and the milliseconds since the request began, flat (`[0, 412.5, 187, 430.1, ...]`).
   */
  arrivals?: { upstreamResponse?: number[]; clientResponse?: number[] };
  /** How many stored messages a stateful turn put in front of the client's: where the repaired history began. */
  storedMessages?: number;
  /**
   * How many of `lossy`'s first entries came from reading the client's request (their paths are the client's)
   * and how many next from writing the upstream request (their paths name the history it was written from);
   * the rest came from the answer.
   */
  lossyStages?: { clientRequest: number; upstreamRequest: number };
}
/** The provider and upstream model a turn went to. */
export interface RouteTaken {
  provider: string;
  model: string;
}
/** What a trace list shows: everything but the bodies and the reports, which are counted. */
export type TraceSummary = Omit<
  TraceRecord,
  | "clientRequest"
  | "upstreamRequest"
  | "upstreamResponse"
  | "clientResponse"
  | "lossy"
  | "repair"
  | "timings"
  | "arrivals"
  | "storedMessages"
  | "lossyStages"
> & { lossyCount: number; repairCount: number };
/** Filters of `TraceStore.list`, all optional, combined with AND; newest first. */
export interface TraceQuery {
  /** Page size (default 50). */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
  /** An exact status, or an inclusive range (`{ from: 500, to: 599 }`). */
  status?: number | { from: number; to: number };
  /** The client's or the upstream model. */
  model?: string;
  conversationId?: string;
  /** Only traces that did (true) or did not (false) lose something in conversion. */
  hasLosses?: boolean;
  tenant?: string;
}
export interface TracePage {
  traces: TraceSummary[];
  /** Present when more traces match: pass it as `cursor` for the next page. */
  nextCursor?: string;
}
/** Bounds on stored traces; the oldest go first. */
export interface TraceRetentionPolicy {
  maxAgeMs?: number;
  maxCount?: number;
  /** Bytes the stored traces may take (rows and shared body chunks, as stored). */
  maxBytes?: number;
}
export interface TraceUsage {
  traces: number;
  bytes: number;
}
/** The background trace writer's counters since the store opened. */
export interface TraceWriterStats {
  recorded: number;
  /** Dropped because the writer fell behind and its queue was full. */
  dropped: number;
  /** Lost to a write that failed. */
  failed: number;
  /** Waiting for the writer now. */
  queued: number;
}
export interface TraceStore {
  /**
   * Queues a trace for the background writer and returns at once, never waiting on disk. The promise resolves
   * once the trace is stored and rejects with a `TraceNotRecordedError` when it was dropped (queue full) or its
   * write failed; either is counted in `stats()`. Recording an id again replaces that trace.
   */
  record(trace: TraceRecord): Promise<void>;
  list(query?: TraceQuery): Promise<TracePage>; // newest first
  get(idOrRequestId: string): Promise<TraceRecord | undefined>; // by trace id, or the newest with that request id
  prune(policy: TraceRetentionPolicy): Promise<number>; // how many traces went
  usage(): Promise<TraceUsage>;
  stats(): TraceWriterStats;
}
