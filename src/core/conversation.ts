import type { Extra } from "./extra.js";
import type { Message, TextPart } from "./parts.js";
import type { StopReason } from "./stop-reason.js";
import type { Usage } from "./usage.js";

export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the input object. */
  inputSchema: unknown;
  /** e.g. Anthropic `cache_control`, `defer_loading`, `type` of server tools; OpenAI `strict`. */
  extra?: Extra;
}

export type ToolChoice =
  | { type: "auto"; disableParallelToolUse?: boolean }
  | { type: "any"; disableParallelToolUse?: boolean }
  | { type: "tool"; name: string; disableParallelToolUse?: boolean }
  | { type: "none" };

export interface ThinkingConfig {
  type: "enabled" | "adaptive" | "disabled";
  budgetTokens?: number;
  /** Anthropic `display`: `summarized`, `omitted`, `updates`... */
  display?: string;
  extra?: Extra;
}

/** The shape the answer's text must take (OpenAI `response_format`, Responses `text.format`). */
export interface ResponseFormat {
  type: "text" | "json_object" | "json_schema";
  /** For `json_schema`: the schema's name, the schema, whether it is enforced strictly, what it is for. */
  name?: string;
  schema?: unknown;
  strict?: boolean;
  description?: string;
}

/** A model request, independent of the API it came in or goes out on. */
export interface ConversationRequest {
  model: string;
  /** The request-level system prompt; `role` is always `system`. */
  system?: Message;
  messages: Message[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  stream?: boolean;
  thinking?: ThinkingConfig;
  /** OpenAI `reasoning_effort`, Anthropic `output_config.effort`. */
  reasoningEffort?: string;
  /** Anthropic `metadata.user_id`, OpenAI `user`. */
  userId?: string;
  /** Structured output: the form the answer's text must take. */
  responseFormat?: ResponseFormat;
  /**
   * The client asks for its conversation compacted rather than continued (Codex's `compaction_trigger`): the answer
   * is the conversation in a form a later request can replay in its place.
   */
  compact?: boolean;
  /**
   * A stable key for the provider's prompt cache, the same on every turn of one conversation (the gateway derives it
   * from the client's session or conversation, never from a secret). An API with such a field (`prompt_cache_key`)
   * sends it where the client gave none; an API without one ignores it.
   */
  cacheKey?: string;
  /**
   * Top-level fields of the source format that the model does not map (`output_config`,
   * `context_management`, `service_tier`, `stream_options`...). Same-format targets carry them;
   * other targets drop them and report it.
   */
  extra?: Extra;
}

/** A complete model answer. */
export interface ConversationResponse {
  id: string;
  model: string;
  /** Always `role: "assistant"`. */
  message: Message;
  stopReason: StopReason;
  stopSequence?: string | null;
  usage: Usage;
  extra?: Extra;
}

export function systemText(system: Message | undefined): string {
  if (!system) return "";
  return system.parts
    .filter((part): part is TextPart => part.type === "text")
    .map((part) => part.text)
    .join("\n\n");
}
