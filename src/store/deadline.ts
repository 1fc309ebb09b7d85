import { storeTooSlow } from "./errors.js";

/**
 * How long any one store call may take before its caller gets a `StoreUnavailableError` (a 503). Far above a
 * healthy call (a turn's append takes ~0.2 ms on SQLite; loading a 10,000-message conversation 58 ms on SQLite and
 * 79 ms on PostgreSQL, docs/benchmarks.md) and well below what a client waits before giving up on a request: a lock
 * another process holds for longer, or a server that stopped answering, costs the request this much and no more.
 */
export const DEFAULT_STORE_DEADLINE_MS = 5000;

/** `work`, or a `StoreUnavailableError` naming `backend` once `deadlineMs` have passed without an answer. */
export function withDeadline<T>(work: Promise<T>, deadlineMs: number, backend: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(storeTooSlow(backend, deadlineMs)), deadlineMs);
  });
  // The call may still settle after its deadline: nothing waits for it, and its failure is not unhandled.
  work.catch(() => {});
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
