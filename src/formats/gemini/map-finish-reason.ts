import type { StopReason, UnifiedStopReason } from "../../core/index.js";
import { assertNever } from "../../core/index.js";

/**
 * Gemini's finish reasons, upper case, mapped to the core's with the raw value kept. An answer holding function
 * calls stopped for them (`STOP` is what Gemini says then); an unknown value is `other`, never an error.
 */
const UNIFIED: Readonly<Record<string, UnifiedStopReason>> = {
  STOP: "end_turn",
  MAX_TOKENS: "max_tokens",
  SAFETY: "refusal",
  RECITATION: "refusal",
  BLOCKLIST: "refusal",
  PROHIBITED_CONTENT: "refusal",
  SPII: "refusal",
  IMAGE_SAFETY: "refusal",
  IMAGE_PROHIBITED_CONTENT: "refusal",
  LANGUAGE: "other",
  MALFORMED_FUNCTION_CALL: "other",
  UNEXPECTED_TOOL_CALL: "other",
  TOO_MANY_TOOL_CALLS: "other",
  FINISH_REASON_UNSPECIFIED: "other",
  OTHER: "other",
};

export function mapFinishReason(raw: string | undefined, hasToolCalls: boolean): StopReason {
  if (raw === undefined) return { unified: hasToolCalls ? "tool_use" : "end_turn", raw: null };
  const unified = Object.hasOwn(UNIFIED, raw) ? UNIFIED[raw]! : "other";
  return { unified: unified === "end_turn" && hasToolCalls ? "tool_use" : unified, raw };
}

/** A blocked prompt (`promptFeedback.blockReason`, no candidate) as a stop reason. */
export function blockedPrompt(blockReason: string): StopReason {
  return { unified: "refusal", raw: blockReason };
}

/** The finish reason a Gemini client gets: the raw one when it is Gemini's, else the core's in Gemini's words. */
export function finishReasonFor(stopReason: StopReason): string {
  if (stopReason.raw !== null && Object.hasOwn(UNIFIED, stopReason.raw)) return stopReason.raw;
  switch (stopReason.unified) {
    case "end_turn":
    case "tool_use":
    case "stop_sequence":
    case "pause_turn":
      return "STOP";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "MAX_TOKENS";
    case "refusal":
      return "SAFETY";
    case "other":
      return "OTHER";
    default:
      return assertNever(stopReason.unified, "stop reason");
  }
}
