import type { ErrorType, StreamError } from "../../core/index.js";
import type { GeminiErrorBody } from "./wire-types.js";

/**
 * Google's error body, `{"error": {"code", "message", "status"}}`, and the core's error types: the status words of
 * google.rpc.Code that the Gemini API answers with, each at its HTTP status.
 */
const STATUS_BY_TYPE: Record<ErrorType, { status: string; code: number }> = {
  invalid_request_error: { status: "INVALID_ARGUMENT", code: 400 },
  authentication_error: { status: "UNAUTHENTICATED", code: 401 },
  permission_error: { status: "PERMISSION_DENIED", code: 403 },
  not_found_error: { status: "NOT_FOUND", code: 404 },
  request_too_large: { status: "INVALID_ARGUMENT", code: 413 },
  rate_limit_error: { status: "RESOURCE_EXHAUSTED", code: 429 },
  api_error: { status: "INTERNAL", code: 500 },
  timeout_error: { status: "DEADLINE_EXCEEDED", code: 504 },
  overloaded_error: { status: "UNAVAILABLE", code: 503 },
};

const TYPE_BY_STATUS: Readonly<Record<string, ErrorType>> = {
  INVALID_ARGUMENT: "invalid_request_error",
  FAILED_PRECONDITION: "invalid_request_error",
  OUT_OF_RANGE: "invalid_request_error",
  UNAUTHENTICATED: "authentication_error",
  PERMISSION_DENIED: "permission_error",
  NOT_FOUND: "not_found_error",
  RESOURCE_EXHAUSTED: "rate_limit_error",
  INTERNAL: "api_error",
  UNKNOWN: "api_error",
  UNAVAILABLE: "overloaded_error",
  DEADLINE_EXCEEDED: "timeout_error",
};

export function geminiErrorBody(type: ErrorType | string, message: string, status?: number): GeminiErrorBody {
  const known = Object.hasOwn(STATUS_BY_TYPE, type) ? STATUS_BY_TYPE[type as ErrorType] : STATUS_BY_TYPE.api_error;
  return { error: { code: status ?? known.code, message, status: known.status } };
}

/** Google's error object (the `error` of a body or of a stream event) as a stream error. */
export function streamErrorFromGemini(error: unknown): StreamError {
  const record = (error !== null && typeof error === "object" ? error : {}) as Record<string, unknown>;
  const status = typeof record.status === "string" ? record.status : undefined;
  const code = typeof record.code === "number" ? record.code : undefined;
  const type = status !== undefined && Object.hasOwn(TYPE_BY_STATUS, status) ? TYPE_BY_STATUS[status]! : "api_error";
  const out: StreamError = {
    type,
    message: typeof record.message === "string" ? record.message : JSON.stringify(error ?? null),
  };
  if (code !== undefined) out.status = code;
  return out;
}
