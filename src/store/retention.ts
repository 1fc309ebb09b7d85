import { redactTrace } from "./redact.js";
import type { TraceRecord, TraceSummary } from "./types.js";

export interface TraceRetention {
  maxAgeMs?: number;
  maxCount?: number;
}

/** On by default: a week of traces, at most ten thousand. */
export const DEFAULT_TRACE_RETENTION = {
  maxAgeMs: 7 * 24 * 60 * 60 * 1000,
  maxCount: 10_000,
} as const satisfies TraceRetention;

/**
 * The instant stored for ordering and pruning. Always `toISOString()` form, so text comparison is time
 * comparison; an unparseable `createdAt` counts as now rather than failing the write.
 */
export function traceInstant(createdAt: string, now = new Date()): string {
  const time = Date.parse(createdAt);
  return Number.isNaN(time) ? now.toISOString() : new Date(time).toISOString();
}

export function ageCutoff(maxAgeMs: number, now = Date.now()): string {
  return new Date(now - maxAgeMs).toISOString();
}

export function summarizeTrace(trace: TraceRecord): TraceSummary {
  const summary: TraceSummary = {
    id: trace.id,
    requestId: trace.requestId,
    createdAt: trace.createdAt,
    route: trace.route,
  };
  if (trace.provider !== undefined) summary.provider = trace.provider;
  if (trace.model !== undefined) summary.model = trace.model;
  if (trace.status !== undefined) summary.status = trace.status;
  return summary;
}

export function clampLimit(limit: number | undefined, fallback = 50): number {
  if (limit === undefined || !Number.isFinite(limit)) return fallback;
  return Math.max(0, Math.floor(limit));
}

/**
 * A trace as the column values the SQL backends store, redacted first: id, request id, instant, route,
 * provider, model, status, and the whole record as JSON.
 */
export function traceRowValues(
  trace: TraceRecord,
): [string, string, string, string, string | null, string | null, number | null, string] {
  const redacted = redactTrace(trace);
  return [
    redacted.id,
    redacted.requestId,
    traceInstant(redacted.createdAt),
    redacted.route,
    redacted.provider ?? null,
    redacted.model ?? null,
    redacted.status ?? null,
    JSON.stringify(redacted),
  ];
}
