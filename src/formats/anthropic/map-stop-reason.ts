import type { StopReason, UnifiedStopReason } from "../../core/stop-reason.js";

const ANTHROPIC_STOP_REASONS: ReadonlySet<string> = new Set<UnifiedStopReason>([
  "end_turn",
  "max_tokens",
  "stop_sequence",
  "tool_use",
  "pause_turn",
  "refusal",
  "model_context_window_exceeded",
]);

/** Anthropic's `stop_reason` beside its unified value; a value Parley does not know maps to `other`. */
export function mapAnthropicStopReason(raw: string | null | undefined): StopReason {
  if (typeof raw !== "string") return { unified: "other", raw: null };
  return { unified: ANTHROPIC_STOP_REASONS.has(raw) ? (raw as UnifiedStopReason) : "other", raw };
}

/**
 * The `stop_reason` to show an Anthropic client. The unified value is Anthropic's own vocabulary; for
 * `other` the raw value is all there is, so it goes out as received (null while the answer is unfinished).
 */
export function anthropicStopReasonFromCore(stopReason: StopReason): string | null {
  return stopReason.unified === "other" ? stopReason.raw : stopReason.unified;
}
