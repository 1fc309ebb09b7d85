import {
  assertNever,
  type ErrorType,
  type StopReason,
  type StreamError,
  type UnifiedStopReason,
  type Usage,
} from "../../core/index.js";
import type { ResponsesUsage } from "./wire-types.js";

/**
 * A response's end in the Responses API's words (`status`, `incomplete_details.reason`, the error `code`) and in the
 * core's (stop reason, usage, stream error).
 */

/** How a finished response ended: `completed` (with calls: tool use), or `incomplete` for a reason. */
export function stopReasonFromResponse(status: unknown, incompleteReason: unknown, hasCalls: boolean): StopReason {
  if (status === "incomplete") {
    const raw = typeof incompleteReason === "string" ? incompleteReason : "incomplete";
    if (raw === "max_output_tokens") return { unified: "max_tokens", raw };
    if (raw === "content_filter") return { unified: "refusal", raw };
    return { unified: "other", raw };
  }
  if (status === "completed") return { unified: hasCalls ? "tool_use" : "end_turn", raw: "completed" };
  return { unified: "other", raw: typeof status === "string" ? status : null };
}

/** The `status` and `incomplete_details` a client gets for a stop reason. */
export function responseEnd(stopReason: StopReason): {
  status: "completed" | "incomplete";
  incomplete_details: { reason: string } | null;
} {
  const unified: UnifiedStopReason = stopReason.unified;
  switch (unified) {
    case "end_turn":
    case "stop_sequence":
    case "tool_use":
    case "pause_turn":
    case "other":
      return { status: "completed", incomplete_details: null };
    case "max_tokens":
    case "model_context_window_exceeded":
      return { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
    case "refusal":
      return { status: "incomplete", incomplete_details: { reason: "content_filter" } };
    default:
      return assertNever(unified, "stop reason");
  }
}

/** Responses usage -> core: `input_tokens` includes cached tokens, the core's does not (subtracted once, here). */
export function usageFromResponses(usage: Partial<ResponsesUsage> | null | undefined): Usage {
  if (!usage) return { inputTokens: 0, outputTokens: 0 };
  const input = numberOr(usage.input_tokens);
  const cached = numberOr(usage.input_tokens_details?.cached_tokens);
  const out: Usage = { inputTokens: Math.max(0, input - cached), outputTokens: numberOr(usage.output_tokens) };
  if (cached > 0) out.cacheReadInputTokens = cached;
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  if (typeof reasoning === "number" && reasoning > 0) out.reasoningTokens = reasoning;
  return out;
}

export function usageToResponses(usage: Usage): ResponsesUsage {
  const cached = (usage.cacheReadInputTokens ?? 0) + (usage.cacheCreationInputTokens ?? 0);
  const input = usage.inputTokens + cached;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cacheReadInputTokens ?? 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: input + usage.outputTokens,
  };
}

/** An error code OpenAI gives a failed response, for a core error type. */
export function errorCodeFor(type: string): string {
  switch (type as ErrorType) {
    case "rate_limit_error":
      return "rate_limit_exceeded";
    case "overloaded_error":
      return "server_is_overloaded";
    case "invalid_request_error":
      return "invalid_request_error";
    case "authentication_error":
      return "invalid_api_key";
    case "not_found_error":
      return "not_found";
    case "request_too_large":
      return "request_too_large";
    case "timeout_error":
      return "timeout";
    case "permission_error":
      return "permission_denied";
    default:
      return "server_error";
  }
}

/** A failed response's (or an `error` event's) error as a core stream error, its status told by its code. */
export function streamErrorFromResponses(error: unknown): StreamError {
  const object = (error !== null && typeof error === "object" ? error : {}) as Record<string, unknown>;
  const message = typeof object.message === "string" ? object.message : JSON.stringify(error);
  const code = `${typeof object.code === "string" ? object.code : ""} ${typeof object.type === "string" ? object.type : ""}`;
  if (/rate_limit|quota/i.test(code)) return { type: "rate_limit_error", message, status: 429 };
  if (/overloaded|unavailable/i.test(code)) return { type: "overloaded_error", message, status: 529 };
  if (/invalid|context_length|bad_request|unsupported/i.test(code))
    return { type: "invalid_request_error", message, status: 400 };
  if (/auth|api_key/i.test(code)) return { type: "authentication_error", message, status: 401 };
  if (/not_found/i.test(code)) return { type: "not_found_error", message, status: 404 };
  return { type: "api_error", message };
}

function numberOr(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
