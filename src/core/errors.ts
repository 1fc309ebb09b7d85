/**
 * Typed errors. Every error Parley raises knows the Anthropic error type and HTTP status it maps to,
 * and, for bad input, the path of the offending field.
 */
import type { ConversationResponse } from "./conversation.js";
import type { StreamError } from "./stream-events.js";

export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "timeout_error"
  | "overloaded_error";

const statusByType: Record<ErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** Whether a string from the wire is one of the error types Parley knows. */
export function isErrorType(type: string): type is ErrorType {
  return Object.hasOwn(statusByType, type);
}

export function statusForErrorType(type: ErrorType): number {
  return statusByType[type];
}

/**
 * Whether an upstream's error of this type may go away if the same request is sent again: a server-side failure,
 * an overload, a rate limit, a timeout. The one rule for errors given as a status, as an error event or as an
 * error document in place of an answer.
 */
export function isRetryableErrorType(type: ErrorType): boolean {
  return type === "api_error" || type === "overloaded_error" || type === "rate_limit_error" || type === "timeout_error";
}

/** The same rule for an upstream's error status: a request timeout, a rate limit, any server-side status. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Maps an HTTP status to the Anthropic error type (Anthropic's table; other 4xx are invalid requests). */
export function errorTypeForStatus(status: number): ErrorType {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    case 504:
      return "timeout_error";
    default:
      return status >= 400 && status < 500 ? "invalid_request_error" : "api_error";
  }
}

/**
 * A prompt larger than the model's context window, with the counts where they are known: each API says it in the
 * words its clients recognise and compact on (Anthropic's `prompt is too long: N tokens > M maximum`, OpenAI's
 * `context_length_exceeded`).
 */
export interface ContextOverflow {
  promptTokens?: number;
  contextWindow?: number;
}

export class ParleyError extends Error {
  readonly type: ErrorType;
  readonly status: number;
  /** Set when the error is a context overflow (Parley's own count, or an upstream's words for one). */
  readonly contextOverflow: ContextOverflow | undefined;

  constructor(
    type: ErrorType,
    message: string,
    options?: { cause?: unknown; status?: number; contextOverflow?: ContextOverflow },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ParleyError";
    this.type = type;
    this.status = options?.status ?? statusForErrorType(type);
    this.contextOverflow = options?.contextOverflow;
  }
}

/** Input that does not fit the API: a 400 naming the field, never a 5xx. */
export class InvalidRequestError extends ParleyError {
  /** e.g. `messages[5].content[3].type` */
  readonly path: string | undefined;

  constructor(message: string, path?: string, options?: { cause?: unknown; contextOverflow?: ContextOverflow }) {
    super("invalid_request_error", path ? `${path}: ${message}` : message, options);
    this.name = "InvalidRequestError";
    this.path = path;
  }
}

/** An upstream answered with an error status, failed to connect, or timed out. */
export class UpstreamError extends ParleyError {
  /** The upstream's HTTP status; undefined for connect errors and timeouts. */
  readonly upstreamStatus: number | undefined;
  readonly body: string | undefined;
  readonly retryable: boolean;
  /** From `Retry-After`, in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(
    type: ErrorType,
    message: string,
    options: {
      upstreamStatus?: number;
      body?: string;
      retryable: boolean;
      retryAfterMs?: number;
      status?: number;
      cause?: unknown;
      contextOverflow?: ContextOverflow;
    },
  ) {
    super(type, message, {
      cause: options.cause,
      status: options.status ?? statusForErrorType(type),
      ...(options.contextOverflow === undefined ? {} : { contextOverflow: options.contextOverflow }),
    });
    this.name = "UpstreamError";
    this.upstreamStatus = options.upstreamStatus;
    this.body = options.body;
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export function isParleyError(value: unknown): value is ParleyError {
  return value instanceof ParleyError;
}

/**
 * A stream that gave no finished answer: it ended in an error (the upstream's, or a cut the decoder's `finish`
 * reported), or its events stop before their `finish` (the decoder's `finish()` was never called). It carries the
 * answer as far as it came, so a caller can keep it knowingly: never as a normal answer.
 */
export class IncompleteStreamError extends ParleyError {
  readonly reason: "error" | "unfinished";
  /** The answer as far as it came: closed blocks whole, the open one as received. */
  readonly partial: ConversationResponse;
  /** The stream's `error` event, when it ended in one. */
  readonly streamError: StreamError | undefined;

  constructor(partial: ConversationResponse, streamError: StreamError | undefined) {
    const type =
      streamError === undefined ? "api_error" : isErrorType(streamError.type) ? streamError.type : "api_error";
    super(
      type,
      streamError === undefined
        ? "the stream ended before its finish event: call the decoder's finish() after the last chunk (a stream cut off then ends in an error)"
        : `the stream ended in an error (${streamError.type}): ${streamError.message}`,
      streamError?.status === undefined ? undefined : { status: streamError.status },
    );
    this.name = "IncompleteStreamError";
    this.reason = streamError === undefined ? "unfinished" : "error";
    this.partial = partial;
    this.streamError = streamError;
  }
}

/** An optional package a feature needs is not installed: the message names it and how to install it. */
export class MissingPackageError extends ParleyError {
  constructor(
    readonly packageName: string,
    feature: string,
    options?: { cause?: unknown },
  ) {
    super("api_error", `${feature} needs the package ${packageName}: npm install ${packageName}`, options);
    this.name = "MissingPackageError";
  }
}

/**
 * Loads an optional package, turning its absence (and only its own absence, not a dependency of it missing) into a
 * `MissingPackageError` naming it.
 */
export async function importOptional<T>(packageName: string, feature: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    throw missingPackage(error, packageName, feature) ?? error;
  }
}

/** The `MissingPackageError` a failed load (an `import`, a `require`, a worker's start) stands for, if it does. */
export function missingPackage(error: unknown, packageName: string, feature: string): MissingPackageError | undefined {
  const message = error instanceof Error ? error.message : String(error);
  const escaped = packageName.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const own = new RegExp(`Cannot find (?:package|module) ['"]${escaped}(?:/[^'"]*)?['"]`);
  return own.test(message) ? new MissingPackageError(packageName, feature, { cause: error }) : undefined;
}
