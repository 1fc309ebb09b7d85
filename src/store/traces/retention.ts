import type { TraceRetentionPolicy } from "./trace-store.js";

export type TraceRetention = TraceRetentionPolicy;

/** On by default: a week of traces, at most ten thousand. */
export const DEFAULT_TRACE_RETENTION = {
  maxAgeMs: 7 * 24 * 60 * 60 * 1000,
  maxCount: 10_000,
} as const satisfies TraceRetention;

const MB = 1024 * 1024;

/** `maxBytes` when none is given: a database file may hold more than a process's heap should. */
export const DEFAULT_TRACE_BYTES = { disk: 256 * MB, memory: 32 * MB } as const;

/**
 * When the bytes bound is passed while writing, the oldest traces go until this share of it is left, so that
 * the next writes do not each prune again.
 */
export const BYTES_LOW_WATER = 0.9;

export function ageCutoff(maxAgeMs: number, now = Date.now()): string {
  return new Date(now - maxAgeMs).toISOString();
}

export function clampLimit(limit: number | undefined, fallback = 50): number {
  if (limit === undefined || !Number.isFinite(limit)) return fallback;
  return Math.max(0, Math.floor(limit));
}

/** A whole-number bound, or undefined for none. */
export function bound(value: number | undefined): number | undefined {
  return value === undefined || !Number.isFinite(value) ? undefined : Math.max(0, Math.floor(value));
}
