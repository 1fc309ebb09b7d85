/**
 * OpenAI Chat Completions on the wire, as servers and clients actually send it. Hand-written and loose:
 * every object may carry fields not listed here (`provider`, `obfuscation`, `x_groq`...), which the
 * codecs keep in `extra` or ignore, never reject.
 */

export type OpenAIRole = "system" | "developer" | "user" | "assistant" | "tool";

export interface OpenAITextContentPart {
  type: "text";
  text: string;
  [key: string]: unknown;
}

export interface OpenAIImageContentPart {
  type: "image_url";
  image_url: { url: string; detail?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface OpenAIFileContentPart {
  type: "file";
  file: { file_data?: string; file_id?: string; filename?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** Mistral Magistral streams reasoning as content parts of this shape. */
export interface OpenAIThinkingContentPart {
  type: "thinking";
  thinking: Array<{ type: string; text?: string }> | string;
  [key: string]: unknown;
}

/** Any other part (`input_audio`, `refusal`, future types): carried as an opaque block. */
export interface OpenAIOtherContentPart {
  type: string;
  [key: string]: unknown;
}

export type OpenAIContentPart =
  | OpenAITextContentPart
  | OpenAIImageContentPart
  | OpenAIFileContentPart
  | OpenAIThinkingContentPart
  | OpenAIOtherContentPart;

export interface OpenAIToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
  /** Google's OpenAI-compatible endpoints: `{google: {thought_signature}}`, Vertex AI's `{vertex: ...}` (`thought-signatures.ts`). */
  extra_content?: unknown;
  [key: string]: unknown;
}

/** OpenRouter-style reasoning item: `reasoning.text`, `reasoning.summary`, `reasoning.encrypted`. */
export interface OpenAIReasoningDetail {
  type: string;
  text?: string;
  summary?: string;
  data?: string;
  signature?: string | null;
  index?: number;
  format?: string | null;
  id?: string | null;
  [key: string]: unknown;
}

export interface OpenAIMessage {
  role: OpenAIRole;
  content?: string | OpenAIContentPart[] | null;
  name?: string;
  tool_calls?: OpenAIToolCall[];
  tool_call_id?: string;
  reasoning_content?: string | null;
  reasoning?: string | null;
  reasoning_details?: OpenAIReasoningDetail[];
  refusal?: string | null;
  /** Google's OpenAI-compatible endpoints: `{google: {thought_signature}}`, Vertex AI's `{vertex: ...}` (`thought-signatures.ts`). */
  extra_content?: unknown;
  [key: string]: unknown;
}

export interface OpenAIFunctionTool {
  type: "function";
  function: { name: string; description?: string; parameters?: unknown; strict?: boolean | null };
  [key: string]: unknown;
}

export type OpenAIToolChoice =
  | "none"
  | "auto"
  | "required"
  | { type: "function"; function: { name: string } }
  | { type: string; [key: string]: unknown };

export interface OpenAIChatRequest {
  model: string;
  messages: OpenAIMessage[];
  tools?: OpenAIFunctionTool[];
  tool_choice?: OpenAIToolChoice;
  parallel_tool_calls?: boolean;
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string | string[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean; [key: string]: unknown };
  reasoning_effort?: string;
  user?: string;
  [key: string]: unknown;
}

export interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number; [key: string]: unknown } | null;
  completion_tokens_details?: { reasoning_tokens?: number; [key: string]: unknown } | null;
  /** DeepSeek's own names for cached prompt tokens. */
  prompt_cache_hit_tokens?: number;
  prompt_cache_miss_tokens?: number;
  /** Moonshot's (Kimi) cached prompt tokens, beside the standard fields. */
  cached_tokens?: number;
  [key: string]: unknown;
}

export interface OpenAIChoice {
  index: number;
  message: OpenAIMessage;
  finish_reason: string | null;
  [key: string]: unknown;
}

export interface OpenAIChatResponse {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: OpenAIChoice[];
  usage?: OpenAIUsage | null;
  [key: string]: unknown;
}

export interface OpenAIToolCallDelta {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
  /** Google's OpenAI-compatible endpoints: `{google: {thought_signature}}`, Vertex AI's `{vertex: ...}` (`thought-signatures.ts`). */
  extra_content?: unknown;
  [key: string]: unknown;
}

export interface OpenAIDelta {
  role?: string;
  content?: string | OpenAIContentPart[] | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  reasoning_details?: OpenAIReasoningDetail[];
  refusal?: string | null;
  tool_calls?: OpenAIToolCallDelta[];
  /** Google's OpenAI-compatible endpoints: `{google: {thought_signature}}`, Vertex AI's `{vertex: ...}` (`thought-signatures.ts`). */
  extra_content?: unknown;
  [key: string]: unknown;
}

export interface OpenAIChunkChoice {
  index?: number;
  delta?: OpenAIDelta;
  finish_reason?: string | null;
  [key: string]: unknown;
}

export interface OpenAIErrorObject {
  message: string;
  type?: string | null;
  param?: string | null;
  code?: string | number | null;
  [key: string]: unknown;
}

export interface OpenAIChatChunk {
  id?: string;
  object?: string;
  created?: number;
  model?: string;
  choices?: OpenAIChunkChoice[];
  usage?: OpenAIUsage | null;
  error?: OpenAIErrorObject;
  [key: string]: unknown;
}

export interface OpenAIErrorBody {
  error: OpenAIErrorObject;
}
