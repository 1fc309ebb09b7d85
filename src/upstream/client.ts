// undici's pooled Agent alone, without the rest of its index (fetch, WebSocket, caches, the request API): the
// whole package costs about 100 ms of start-up. Its package has no export map, so the file is public.
import AgentClass from "undici/lib/dispatcher/agent.js";
import { isParleyError, type UpstreamError } from "../core/index.js";
import type { Cancellation } from "./cancellation.js";
import { parseRetryAfter, upstreamErrorForFailure, upstreamErrorForStatus } from "./errors.js";
import { type RawUpstreamResponse, ResponseHandler, type ResponseHeaders, type UpstreamBody } from "./response.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy, retryDelay, sleep } from "./retry.js";

export interface UpstreamTimeouts {
  connectMs: number;
  /** From the request sent to the response headers. */
  firstByteMs: number;
  /** The longest silence between two body chunks. */
  idleMs: number;
}

export const DEFAULT_UPSTREAM_TIMEOUTS: UpstreamTimeouts = { connectMs: 10_000, firstByteMs: 120_000, idleMs: 120_000 };

export interface UpstreamRequest {
  url: string;
  headers: Record<string, string>;
  /** Serialised JSON. */
  body: string;
  /** Cancelled when the client goes away: the upstream request ends at once. */
  cancel?: Cancellation;
  /** Attempts this call may still make (a stream that broke before content has used some already). */
  maxAttempts?: number;
  /** The client request this call serves, for the retry log. */
  requestId?: string;
}

export interface UpstreamResponse {
  status: number;
  headers: ResponseHeaders;
  /** The body, read lazily: iterating it pulls from the socket, so a slow reader slows the upstream. */
  body: UpstreamBody;
  /** How many attempts the call took (1 when the first succeeded). */
  attempts: number;
  /** Milliseconds from the first attempt to the response headers. */
  headersMs: number;
}

export interface UpstreamClientOptions {
  timeouts?: Partial<UpstreamTimeouts>;
  retry?: Partial<RetryPolicy>;
  /** Values that must never appear in an error message (upstream keys). */
  secrets?: readonly string[];
  /** Called before each retry, for logs and metrics. */
  onRetry?: (attempt: number, delayMs: number, error: UpstreamError, request: UpstreamRequest) => void;
}

/**
 * HTTP to the upstreams: one keep-alive pool per origin (undici's `Agent`), timeouts, and retries with backoff
 * on connect errors, 429, 500-class and 529. It returns once the upstream answered 2xx headers; the caller
 * reads the body, so nothing has reached the client while this still retries.
 */
export class UpstreamClient {
  private readonly agent: InstanceType<typeof AgentClass>;
  private readonly retry: RetryPolicy;
  private readonly secrets: readonly string[];
  private readonly onRetry: UpstreamClientOptions["onRetry"];

  constructor(options: UpstreamClientOptions = {}) {
    const timeouts = { ...DEFAULT_UPSTREAM_TIMEOUTS, ...options.timeouts };
    this.agent = new AgentClass({
      connect: { timeout: timeouts.connectMs },
      headersTimeout: timeouts.firstByteMs,
      bodyTimeout: timeouts.idleMs,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 600_000,
    });
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.secrets = options.secrets ?? [];
    this.onRetry = options.onRetry;
  }

  /** POSTs JSON. Throws `UpstreamError` for an error status (after retries), a failure or a timeout. */
  async post(upstreamRequest: UpstreamRequest): Promise<UpstreamResponse> {
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      let error: UpstreamError;
      try {
        const response = await this.attempt(upstreamRequest);
        if (response.statusCode >= 200 && response.statusCode < 300) {
          return {
            status: response.statusCode,
            headers: response.headers,
            body: response.body,
            attempts: attempt,
            headersMs: performance.now() - started,
          };
        }
        const text = await response.body.text();
        error = upstreamErrorForStatus(response.statusCode, text, {
          ...retryAfterOption(parseRetryAfter(response.headers["retry-after"])),
          secrets: this.secrets,
        });
      } catch (failure) {
        if (upstreamRequest.cancel?.aborted) throw failure;
        error = isParleyError(failure) ? (failure as UpstreamError) : upstreamErrorForFailure(failure, this.secrets);
      }
      const policy =
        upstreamRequest.maxAttempts === undefined
          ? this.retry
          : { ...this.retry, maxAttempts: upstreamRequest.maxAttempts };
      const delay = error.retryable ? retryDelay(policy, attempt, error.retryAfterMs) : undefined;
      if (delay === undefined) throw error;
      this.onRetry?.(attempt, delay, error, upstreamRequest);
      await sleep(delay, upstreamRequest.cancel);
    }
  }

  private attempt(upstreamRequest: UpstreamRequest): Promise<RawUpstreamResponse> {
    const target = this.target(upstreamRequest.url);
    return new Promise((resolve, reject) => {
      this.agent.dispatch(
        {
          origin: target.origin,
          path: target.path,
          method: "POST",
          headers: upstreamRequest.headers,
          body: upstreamRequest.body,
        },
        new ResponseHandler(resolve, reject, upstreamRequest.cancel),
      );
    });
  }

  /** A provider's few endpoint URLs, parsed once each rather than on every request. */
  private readonly targets = new Map<string, { origin: string; path: string }>();

  private target(address: string): { origin: string; path: string } {
    let target = this.targets.get(address);
    if (target === undefined) {
      const url = new URL(address);
      target = { origin: url.origin, path: `${url.pathname}${url.search}` };
      // Query strings (Anthropic's `?beta=true`) make a few variants; anything beyond is not worth keeping.
      if (this.targets.size < 256) this.targets.set(address, target);
    }
    return target;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** Ends every connection at once (open streams included). */
  async destroy(): Promise<void> {
    await this.agent.destroy();
  }
}

function retryAfterOption(retryAfterMs: number | undefined): { retryAfterMs?: number } {
  return retryAfterMs === undefined ? {} : { retryAfterMs };
}
