import type { Extra } from "./extra.js";
import type { WireFormat } from "./wire-format.js";

/**
 * The canonical conversation model: messages whose content is an ordered list of parts.
 *
 * Order is the truth. No codec may regroup parts (all thinking first, text after tool results...):
 * a converter walks the parts in order and emits them in order, or reports what it could not carry.
 */

export { WIRE_FORMATS, type WireFormat } from "./wire-format.js";

/**
 * Where reasoning sat in its producer's answer, so it can go back the same way: a field of an OpenAI-compatible
 * message; a Responses reasoning item's `summary` or `reasoning_text` content; an Anthropic `thinking` or
 * `redacted_thinking` block (whose signature or data then rides in `sealed`); the Gemini text part right after a
 * signature part (`next-text`, `src/formats/gemini/signatures.ts`).
 */
export type ReasoningField =
  | "reasoning_content"
  | "reasoning"
  | "reasoning_details"
  | "think-tags"
  | "content-parts"
  | "summary"
  | "reasoning_text"
  | "thinking"
  | "redacted_thinking"
  | "next-text";

/**
 * Who produced a thinking part. Thinking is origin-bound: it is replayed as a signed block only to the provider
 * whose signature it carries (Anthropic for Anthropic's own), and to an OpenAI-compatible provider only in the
 * field it came in.
 */
export interface ReasoningOrigin {
  /** The API it came in: `anthropic` for a signed thinking block (Anthropic's, or a provider's of that API). */
  format: WireFormat;
  /** The gateway's provider name (config key) or preset id that produced it, when known. */
  provider?: string;
  /** The field it arrived in (OpenAI-compatible origins only). */
  field?: ReasoningField;
  /**
   * The key or deployment behind `provider` when it made it: a short, non-secret hash (`providerBinding`), so that
   * what only that key or organisation can verify goes back only to it, not to the same provider under a new key.
   * Absent (an envelope written before bindings, or a provider of no configuration): the provider's name alone.
   */
  binding?: string;
  /** The upstream model that produced it, when known. */
  model?: string;
  /** OpenRouter-style `reasoning_details` items as received, replayed unchanged to the same provider. */
  details?: unknown[];
  /**
   * The signature an Anthropic-format provider other than Anthropic gave the block (DeepSeek's, vLLM's made-up
   * one), which only `provider` can take back: the block carries it wrapped in an origin envelope.
   */
  signature?: string;
  /** The producer's own id for this reasoning (a Responses reasoning item's `id`). */
  id?: string;
  /**
   * What only the producer may get back, unmodified: a Responses reasoning item's `encrypted_content`; Anthropic's
   * own signature (or redacted thinking's data) carried where the client's format has no field for it.
   */
  sealed?: string;
}

export interface TextPart {
  type: "text";
  text: string;
  /** Fields a codec did not map, by the format they came from (e.g. Anthropic `cache_control`, `citations`). */
  extra?: Extra;
}

export interface ThinkingPart {
  type: "thinking";
  thinking: string;
  /** Opaque; Anthropic's signature, or Parley's origin envelope (see `reasoning-origin.ts`). */
  signature?: string;
  origin?: ReasoningOrigin;
  extra?: Extra;
}

export interface RedactedThinkingPart {
  type: "redacted_thinking";
  /** Opaque, passed back unchanged. */
  data: string;
  extra?: Extra;
}

export interface ToolCallPart {
  type: "tool_call";
  id: string;
  name: string;
  /** The parsed arguments (an object for every well-behaved model). */
  input: unknown;
  /** The arguments text as received, kept when it was not valid JSON (then `input` holds the repair). */
  rawInput?: string;
  extra?: Extra;
}

export type MediaSource =
  | { type: "base64"; mediaType: string; data: string }
  | { type: "url"; url: string }
  | { type: "text"; mediaType: string; data: string };

export interface ImagePart {
  type: "image";
  source: MediaSource;
  extra?: Extra;
}

export interface DocumentPart {
  type: "document";
  source: MediaSource;
  /** e.g. `title`, `context`, `citations`. */
  extra?: Extra;
}

/**
 * A block Parley does not model (server_tool_use, web_search_tool_result, mcp_tool_use, future types).
 * It is carried untouched within its own format and reported as lossy when the target cannot take it.
 */
export interface OpaquePart {
  type: "opaque";
  format: WireFormat;
  block: unknown;
  /**
   * What the block says, in words, for an API that cannot carry the block itself (an Anthropic `tool_reference`
   * names the tool a search loaded); absent, the block is left out there.
   */
  text?: string;
}

/** What a tool result may hold. */
export type ToolResultContentPart = TextPart | ImagePart | DocumentPart | OpaquePart;

export interface ToolResultPart {
  type: "tool_result";
  toolCallId: string;
  /** A bare string when the wire carried one (kept so the block round-trips). */
  content: string | ToolResultContentPart[];
  isError?: boolean;
  /** e.g. Anthropic `cache_control`, OpenAI tool message `name`. */
  extra?: Extra;
}

export type Part =
  | TextPart
  | ThinkingPart
  | RedactedThinkingPart
  | ToolCallPart
  | ToolResultPart
  | ImagePart
  | DocumentPart
  | OpaquePart;

export type PartType = Part["type"];

/**
 * `system` messages appear both as the request-level system prompt and in place inside the history
 * (Claude Code sends a `role: "system"` message there). Tool results are parts of `user` messages;
 * OpenAI's `tool` messages map to them and back without changing order.
 */
export type Role = "system" | "user" | "assistant";

export interface Message {
  role: Role;
  parts: Part[];
  /** The wire carried the content as a bare string rather than an array of blocks. */
  textShorthand?: boolean;
  /** Message-level fields a codec did not map (e.g. OpenAI `name`, the `developer` role). */
  extra?: Extra;
}

/** Raises a type error when a switch over a union misses a case. */
export function assertNever(value: never, what = "value"): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
