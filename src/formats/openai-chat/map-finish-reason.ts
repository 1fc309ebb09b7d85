import { assertNever, type StopReason, type UnifiedStopReason } from "../../core/index.js";

/** OpenAI `finish_reason` -> stop reason; unknown values map to `other` with the raw value kept. */
export function mapFinishReason(raw: string | null | undefined): StopReason {
  const value = raw ?? null;
  switch (value) {
    case "stop":
      return { unified: "end_turn", raw: value };
    case "length":
      return { unified: "max_tokens", raw: value };
    case "tool_calls":
    case "function_call":
      return { unified: "tool_use", raw: value };
    case "content_filter":
      return { unified: "refusal", raw: value };
    default:
      return { unified: "other", raw: value };
  }
}

/** Stop reason -> OpenAI `finish_reason`; a raw OpenAI value is given back unchanged when it maps the same. */
export function finishReasonFor(stopReason: StopReason): string {
  if (stopReason.raw !== null && mapFinishReason(stopReason.raw).unified === stopReason.unified) return stopReason.raw;
  return finishReasonForUnified(stopReason.unified);
}

function finishReasonForUnified(unified: UnifiedStopReason): string {
  switch (unified) {
    case "end_turn":
    case "stop_sequence":
    case "pause_turn":
    case "other":
      return "stop";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      return assertNever(unified, "stop reason");
  }
}
