// undici's pooled Agent alone, without the rest of its index (fetch, WebSocket, caches, the request API): the
// whole package costs about 100 ms of start-up. Its package has no export map, so the file is public.
import AgentClass from "undici/lib/dispatcher/agent.js";
import { isParleyError, UpstreamError } from "../core/index.js";
import { Cancellation } from "./cancellation.js";
import { parseRetryAfter, retriedInWholeAnswer, upstreamErrorForFailure, upstreamErrorForStatus } from "./errors.js";
import {
  type BodyLimits,
  type RawUpstreamResponse,
  ResponseHandler,
  type ResponseHeaders,
  type UpstreamBody,
} from "./response.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy, retryDelay, sleep } from "./retry.js";

export interface UpstreamTimeouts {
  connectMs: number;
  /** From the request sent to the response headers. */
  firstByteMs: number;
  /** The longest silence between two body chunks. */
  idleMs: number;
  /** From the first attempt to the last byte of a whole (non-streamed) answer, retries included. */
  answerMs: number;
}

export const DEFAULT_UPSTREAM_TIMEOUTS: UpstreamTimeouts = {
  connectMs: 10_000,
  firstByteMs: 120_000,
  idleMs: 120_000,
  answerMs: 600_000,
};

/** The most of an error body that is read: enough for its message, never a broken upstream's gigabyte. */
export const ERROR_BODY_BYTES = 64 * 1024;

export interface UpstreamRequest {
  url: string;
  headers: Record<string, string>;
  /** Serialised JSON. */
  body: string;
  /** Cancelled when the client goes away: the upstream request ends at once. */
  cancel?: Cancellation;
  /** Attempts this call may still make (a stream that broke before content has used some already). */
  maxAttempts?: number;
  /**
   * When a retry's wait must be over (`performance.now()` time): a wait that would end later is not taken, and the
   * error (with the upstream's `Retry-After`) goes to the client at once. A streamed request's status line goes
   * out at its hold's end, so a rate limit waited past it would reach the client as `200` and an error event.
   */
  retryBy?: number;
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

/** A whole (non-streamed) answer, read to its end. */
export interface UpstreamWholeResponse extends Omit<UpstreamResponse, "body"> {
  text: string;
}

export interface UpstreamClientOptions {
  timeouts?: Partial<UpstreamTimeouts>;
  retry?: Partial<RetryPolicy>;
  /** Values that must never appear in an error message (upstream keys). */
  secrets?: readonly string[];
  /** The most bytes one answer's body may have, streamed or not (default 64 MiB). */
  maxAnswerBytes?: number;
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
  private readonly limits: BodyLimits;
  private readonly answerMs: number;

  constructor(options: UpstreamClientOptions = {}) {
    const timeouts = { ...DEFAULT_UPSTREAM_TIMEOUTS, ...options.timeouts };
    this.answerMs = timeouts.answerMs;
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
    this.limits = { maxBytes: options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES, secrets: this.secrets };
  }

  /**
   * POSTs JSON and returns at the 2xx response headers; the caller reads the body (a stream). Throws
   * `UpstreamError` for an error status (after retries), a failure or a timeout.
   */
  post(upstreamRequest: UpstreamRequest): Promise<UpstreamResponse> {
    return this.call(upstreamRequest, async (response) => response);
  }

  /**
   * POSTs JSON and reads the whole answer. Nothing has reached the client until it is complete, so a failure
   * while its body arrives (a reset, an idle timeout) is retried like one before the headers; the whole call,
   * retries included, ends with a 504 after `timeouts.answerMs`.
   */
  async postWhole(upstreamRequest: UpstreamRequest): Promise<UpstreamWholeResponse> {
    const deadline = new Cancellation();
    const stopFollowing = upstreamRequest.cancel?.onAbort((reason) => deadline.abort(reason));
    if (upstreamRequest.cancel?.reason !== undefined) deadline.abort(upstreamRequest.cancel.reason);
    const timer = setTimeout(() => {
      deadline.abort(
        new UpstreamError(
          "timeout_error",
          `upstream did not complete its answer within ${this.answerMs} ms (timeouts.answerMs)`,
          { retryable: false },
        ),
      );
    }, this.answerMs);
    try {
      return await this.call({ ...upstreamRequest, cancel: deadline }, async ({ body, ...response }) => {
        try {
          return { ...response, text: await body.text() };
        } catch (error) {
          throw error instanceof UpstreamError ? retriedInWholeAnswer(error) : error;
        }
      });
    } finally {
      clearTimeout(timer);
      stopFollowing?.();
    }
  }

  /** Attempts until `read` succeeds on a 2xx answer, or the error is final. */
  private async call<T>(
    upstreamRequest: UpstreamRequest,
    read: (response: UpstreamResponse) => Promise<T>,
  ): Promise<T> {
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      let error: UpstreamError;
      try {
        const response = await this.attempt(upstreamRequest);
        if (response.statusCode >= 200 && response.statusCode < 300) {
          return await read({
            status: response.statusCode,
            headers: response.headers,
            body: response.body,
            attempts: attempt,
            headersMs: performance.now() - started,
          });
        }
        const text = await response.body.text(ERROR_BODY_BYTES);
        const location = response.headers.location;
        error = upstreamErrorForStatus(response.statusCode, text, {
          ...retryAfterOption(parseRetryAfter(response.headers["retry-after"])),
          ...(typeof location === "string" ? { location } : {}),
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
      if (delay === undefined || waitsPast(delay, upstreamRequest.retryBy)) throw error;
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
        new ResponseHandler(resolve, reject, upstreamRequest.cancel, this.limits),
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

/** An answer larger than this is an upstream fault (a model's longest answer is a few megabytes of events). */
export const DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024;

function waitsPast(delayMs: number, retryBy: number | undefined): boolean {
  return retryBy !== undefined && performance.now() + delayMs > retryBy;
}

function retryAfterOption(retryAfterMs: number | undefined): { retryAfterMs?: number } {
  return retryAfterMs === undefined ? {} : { retryAfterMs };
}
