import {
  type ContextOverflow,
  type ErrorType,
  InvalidRequestError,
  isParleyError,
  UpstreamError,
} from "../../core/index.js";
import { formatAdapter } from "../../formats/registry.js";
import { AnsweredError } from "./answered-error.js";
import type { ApiShape, Context } from "./context.js";
import { sendJson } from "./context.js";

export interface ErrorDescription {
  status: number;
  type: ErrorType;
  message: string;
  /** The offending field, for OpenAI's `param`. */
  param: string | null;
  retryAfterSeconds?: number;
  /** Anthropic's `error.details`. */
  details?: Record<string, unknown>;
  headers?: Record<string, string>;
  contextOverflow?: ContextOverflow;
}

/** What an error becomes on the wire. Anything that is not a ParleyError is a bug: a 500 that hides details. */
export function describeError(error: unknown, requestId: string): ErrorDescription {
  if (!isParleyError(error)) {
    return {
      status: 500,
      type: "api_error",
      message: `internal error (request id ${requestId})`,
      param: null,
    };
  }
  const description: ErrorDescription = {
    status: error.status,
    type: error.type,
    message: error.message,
    param: error instanceof InvalidRequestError ? (error.path ?? null) : null,
  };
  if (error.contextOverflow !== undefined) description.contextOverflow = error.contextOverflow;
  if (error instanceof UpstreamError && error.retryAfterMs !== undefined) {
    description.retryAfterSeconds = Math.max(1, Math.ceil(error.retryAfterMs / 1000));
  }
  if (error instanceof AnsweredError) {
    if (error.details !== undefined) description.details = error.details;
    if (error.headers !== undefined) description.headers = error.headers;
  }
  return description;
}

/** The error body in the route's API shape. */
export function errorBody(api: ApiShape, description: ErrorDescription, requestId: string): unknown {
  return formatAdapter(api).client.errorBody(description, requestId);
}

export function sendError(ctx: Context, description: ErrorDescription): void {
  const headers: Record<string, string> = { ...description.headers };
  if (description.retryAfterSeconds !== undefined) headers["retry-after"] = String(description.retryAfterSeconds);
  sendJson(ctx, description.status, errorBody(ctx.api, description, ctx.requestId), headers);
}
