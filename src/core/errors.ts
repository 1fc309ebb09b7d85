/**
 * Typed errors. Every error Parley raises knows the Anthropic error type and HTTP status it maps to,
 * and, for bad input, the path of the offending field.
 */

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

export class ParleyError extends Error {
  readonly type: ErrorType;
  readonly status: number;

  constructor(type: ErrorType, message: string, options?: { cause?: unknown; status?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ParleyError";
    this.type = type;
    this.status = options?.status ?? statusForErrorType(type);
  }
}

/** Input that does not fit the API: a 400 naming the field, never a 5xx. */
export class InvalidRequestError extends ParleyError {
  /** e.g. `messages[5].content[3].type` */
  readonly path: string | undefined;

  constructor(message: string, path?: string, options?: { cause?: unknown }) {
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
    },
  ) {
    super(type, message, { cause: options.cause, status: options.status ?? statusForErrorType(type) });
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
