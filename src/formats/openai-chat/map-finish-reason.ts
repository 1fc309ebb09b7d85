import { assertNever, type StopReason, type UnifiedStopReason } from "../../core/index.js";

/**
 * OpenAI `finish_reason` -> stop reason. A value servers made up (`eos`, `end`...) still ended the answer: it is
 * `end_turn` to a client that knows only Anthropic's stop reasons, its raw value kept for OpenAI clients. So is
 * none at all: a whole answer or a finished stream with a null or missing `finish_reason` (some servers send
 * one) has ended, and Anthropic's `stop_reason` is never null there. See `answerStopReason` for tool calls.
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
      return { unified: "end_turn", raw: null };
    default:
      return { unified: "end_turn", raw: value };
  }
}

/**
 * The stop reason of an answer that carries tool calls: `tool_use` whenever the finish reason would end the turn
 * (`stop` from vLLM, Gemini's OpenAI endpoint and LiteLLM, none at all, or a made-up value), since a client that
 * branches on `tool_use` would otherwise stop its loop with calls unrun. A cut (`length`) or a refusal keeps its
 * own reason, as Anthropic reports `max_tokens` for a cut tool call. The raw value is kept.
 */
export function answerStopReason(raw: string | null | undefined, toolCalls: number): StopReason {
  const mapped = mapFinishReason(raw);
  return toolCalls > 0 && mapped.unified === "end_turn" ? { unified: "tool_use", raw: mapped.raw } : mapped;
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
