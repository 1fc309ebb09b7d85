/** Stop reasons in Anthropic's vocabulary (the richer of the two); unknown upstream values map to `other`. */
export type UnifiedStopReason =
  | "end_turn"
  | "max_tokens"
  | "stop_sequence"
  | "tool_use"
  | "pause_turn"
  | "refusal"
  | "model_context_window_exceeded"
  | "other";

/** The mapped value beside the raw one, so nothing the upstream said is lost. */
export interface StopReason {
  unified: UnifiedStopReason;
  raw: string | null;
}
