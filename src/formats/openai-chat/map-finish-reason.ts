import { assertNever, type StopReason, type UnifiedStopReason } from "../../core/index.js";

/**
 * OpenAI `finish_reason` -> stop reason. A value servers made up (`eos`, `end`...) still ended the answer: it is
 * `end_turn` to a client that knows only Anthropic's stop reasons, its raw value kept for OpenAI clients; no
 * value at all (an answer still open) is `other`.
 */
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
    case null:
      return { unified: "other", raw: null };
    default:
      return { unified: "end_turn", raw: value };
  }
}

const OPENAI_FINISH_REASONS: ReadonlySet<string> = new Set([
  "stop",
  "length",
  "tool_calls",
  "function_call",
  "content_filter",
]);

/**
 * Stop reason -> OpenAI `finish_reason`; a raw OpenAI value is given back unchanged when it maps the same
 * (`function_call` stays itself). Anything else, an Anthropic `end_turn` or a server's own `eos`, is mapped.
 */
export function finishReasonFor(stopReason: StopReason): string {
  const raw = stopReason.raw;
  if (raw !== null && OPENAI_FINISH_REASONS.has(raw) && mapFinishReason(raw).unified === stopReason.unified) return raw;
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
