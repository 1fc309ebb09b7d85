import type { Cancellation } from "./cancellation.js";

/** When to try an upstream call again, and how long to wait. */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A `Retry-After` longer than this is not waited for: the error goes to the client with the hint. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 3,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 30_000,
};

/**
 * The wait before attempt `attempt + 1` (attempt counts from 1), or undefined to give up. Exponential backoff
 * with equal jitter spreads retries of many clients apart; a `Retry-After` from the upstream wins when present.
 */
export function retryDelay(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  if (attempt >= policy.maxAttempts) return undefined;
  if (retryAfterMs !== undefined) return retryAfterMs > policy.maxRetryAfterMs ? undefined : retryAfterMs;
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Resolves after `ms`, or rejects at once when `cancel` is cancelled. */
export function sleep(ms: number, cancel?: Cancellation): Promise<void> {
  return new Promise((resolve, reject) => {
    if (cancel?.aborted) {
      reject(cancel.reason);
      return;
    }
    const timer = setTimeout(() => {
      stopListening?.();
      resolve();
    }, ms);
    const stopListening = cancel?.onAbort((reason) => {
      clearTimeout(timer);
      reject(reason);
    });
  });
}
