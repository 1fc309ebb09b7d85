import type { Extra } from "./extra.js";
import type { Part } from "./parts.js";
import type { StopReason } from "./stop-reason.js";
import type { Usage } from "./usage.js";

/**
 * The canonical stream: what every stream decoder produces and every encoder consumes.
 *
 * Rules: `message-start` comes first; blocks are numbered 0, 1, 2... in the order they appear in the final
 * content, each opened by `block-start`, then deltas for that index, then `block-end`; at most one block is
 * open at a time; `finish` (or `error`) comes last. Folding these events with `accumulate` gives exactly
 * the non-streaming conversion of the same answer.
 */
export type StreamEvent =
  | MessageStartEvent
  | BlockStartEvent
  | TextDeltaEvent
  | ThinkingDeltaEvent
  | SignatureEvent
  | ToolInputDeltaEvent
  | OpaqueDeltaEvent
  | BlockEndEvent
  | FinishEvent
  | ErrorEvent;

export interface MessageStartEvent {
  type: "message-start";
  id: string;
  model: string;
  /** What is known of usage before content (input tokens on Anthropic; often nothing on OpenAI). */
  usage?: Partial<Usage>;
  extra?: Extra;
}

/**
 * Opens a block. `part` holds its initial value: empty text or thinking, a tool call with its id, name
 * and `input: {}`, a whole redacted-thinking or opaque block.
 */
export interface BlockStartEvent {
  type: "block-start";
  index: number;
  part: Part;
}

export interface TextDeltaEvent {
  type: "text-delta";
  index: number;
  text: string;
}

export interface ThinkingDeltaEvent {
  type: "thinking-delta";
  index: number;
  thinking: string;
}

/** Sets (replaces, never appends) the signature of a thinking block. */
export interface SignatureEvent {
  type: "signature";
  index: number;
  signature: string;
}

/** A fragment of a tool call's JSON arguments; the concatenation parses once, at `block-end`. */
export interface ToolInputDeltaEvent {
  type: "tool-input-delta";
  index: number;
  partialJson: string;
}

/** A delta Parley does not model (e.g. Anthropic `citations_delta`), carried for same-format targets. */
export interface OpaqueDeltaEvent {
  type: "opaque-delta";
  index: number;
  delta: unknown;
}

export interface BlockEndEvent {
  type: "block-end";
  index: number;
}

export interface FinishEvent {
  type: "finish";
  stopReason: StopReason;
  stopSequence?: string | null;
  usage: Usage;
  /**
   * What an Anthropic source's `message_delta` carried beyond what the core maps (`delta.stop_details`,
   * `usage.server_tool_use`...), so that an Anthropic client gets it back as it came.
   */
  extra?: { delta?: Record<string, unknown>; usage?: Record<string, unknown> };
}

/** The upstream failed mid-stream; ends the stream. */
export interface ErrorEvent {
  type: "error";
  error: StreamError;
}

export interface StreamError {
  /** Anthropic error type (`overloaded_error`, `api_error`...). */
  type: string;
  message: string;
  /** The HTTP status this error corresponds to, when known. */
  status?: number;
}

/** An incremental conversion: feed input pieces, get events; `finish` flushes what is held back. */
export interface IncrementalDecoder<Input> {
  push(input: Input): StreamEvent[];
  finish(): StreamEvent[];
}
