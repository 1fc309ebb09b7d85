/**
 * The Anthropic Messages API as it travels on the wire. Hand-written and deliberately open: every object
 * may carry fields this file does not name (new API features, client extensions), and Parley keeps them.
 */

/** Fields Parley does not name, kept so that a value round-trips unchanged. */
export type AnthropicUnknownFields = Record<string, unknown>;

export interface AnthropicCacheControl extends AnthropicUnknownFields {
  type: string;
  ttl?: string;
}

export interface AnthropicTextBlock extends AnthropicUnknownFields {
  type: "text";
  text: string;
  cache_control?: AnthropicCacheControl | null;
  citations?: unknown[] | null;
}

export interface AnthropicThinkingBlock extends AnthropicUnknownFields {
  type: "thinking";
  thinking: string;
  /** Required by the API on input; absent in some third-party histories. */
  signature?: string;
}

export interface AnthropicRedactedThinkingBlock extends AnthropicUnknownFields {
  type: "redacted_thinking";
  data: string;
}

export interface AnthropicToolUseBlock extends AnthropicUnknownFields {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: AnthropicCacheControl | null;
}

export type AnthropicMediaSource =
  | { type: "base64"; media_type: string; data: string }
  | { type: "url"; url: string }
  | { type: "text"; media_type: string; data: string }
  | (AnthropicUnknownFields & { type: string });

export interface AnthropicImageBlock extends AnthropicUnknownFields {
  type: "image";
  source: AnthropicMediaSource;
  cache_control?: AnthropicCacheControl | null;
}

export interface AnthropicDocumentBlock extends AnthropicUnknownFields {
  type: "document";
  source: AnthropicMediaSource;
  title?: string | null;
  context?: string | null;
  citations?: unknown;
  cache_control?: AnthropicCacheControl | null;
}

/** What a `tool_result` may hold besides a string: text, image, document, search_result, tool_reference... */
export type AnthropicToolResultContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicOtherBlock;

export interface AnthropicToolResultBlock extends AnthropicUnknownFields {
  type: "tool_result";
  tool_use_id: string;
  content?: string | AnthropicToolResultContentBlock[];
  is_error?: boolean;
  cache_control?: AnthropicCacheControl | null;
}

/** server_tool_use, web_search_tool_result, mcp_tool_use, mcp_tool_result, container_upload, future types. */
export interface AnthropicOtherBlock extends AnthropicUnknownFields {
  type: string;
}

export type AnthropicKnownBlock =
  | AnthropicTextBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock;

export type AnthropicContentBlock = AnthropicKnownBlock | AnthropicOtherBlock;

/** `system` is not an Anthropic role, but Claude Code sends such a message inside `messages`. */
export type AnthropicRole = "user" | "assistant" | "system";

export interface AnthropicMessage extends AnthropicUnknownFields {
  role: AnthropicRole;
  content: string | AnthropicContentBlock[];
}

export interface AnthropicTool extends AnthropicUnknownFields {
  name: string;
  description?: string;
  /** Absent on server tools (`{"type":"web_search_20250305","name":"web_search"}`). */
  input_schema?: unknown;
  type?: string;
  cache_control?: AnthropicCacheControl | null;
  defer_loading?: boolean;
}

export type AnthropicToolChoice =
  | { type: "auto"; disable_parallel_tool_use?: boolean }
  | { type: "any"; disable_parallel_tool_use?: boolean }
  | { type: "tool"; name: string; disable_parallel_tool_use?: boolean }
  | { type: "none" };

export interface AnthropicThinkingConfig extends AnthropicUnknownFields {
  type: string;
  budget_tokens?: number;
  display?: string;
}

export interface AnthropicMetadata extends AnthropicUnknownFields {
  user_id?: string | null;
}

export interface AnthropicRequestBody extends AnthropicUnknownFields {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: string | AnthropicTextBlock[];
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  thinking?: AnthropicThinkingConfig;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  metadata?: AnthropicMetadata;
  stream?: boolean;
  output_config?: AnthropicUnknownFields & { effort?: string };
}

/** `POST /v1/messages/count_tokens`: a request without `max_tokens`. */
export type AnthropicCountTokensRequestBody = Omit<AnthropicRequestBody, "max_tokens"> & { max_tokens?: number };

export interface AnthropicUsage extends AnthropicUnknownFields {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: AnthropicUnknownFields & { thinking_tokens?: number };
}

export interface AnthropicMessageResponse extends AnthropicUnknownFields {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: string | null;
  stop_sequence?: string | null;
  usage: AnthropicUsage;
}

export interface AnthropicErrorBody {
  type: "error";
  error: { type: string; message: string };
  request_id?: string;
}

export interface AnthropicMessageStartEvent {
  type: "message_start";
  message: AnthropicMessageResponse;
}

export interface AnthropicContentBlockStartEvent {
  type: "content_block_start";
  index: number;
  content_block: AnthropicContentBlock;
}

export type AnthropicDelta =
  | { type: "text_delta"; text: string }
  | { type: "thinking_delta"; thinking: string }
  | { type: "signature_delta"; signature: string }
  | { type: "input_json_delta"; partial_json: string }
  | { type: "citations_delta"; citation: unknown };

export interface AnthropicContentBlockDeltaEvent {
  type: "content_block_delta";
  index: number;
  delta: AnthropicDelta | (AnthropicUnknownFields & { type: string });
}

export interface AnthropicContentBlockStopEvent {
  type: "content_block_stop";
  index: number;
}

export interface AnthropicMessageDeltaEvent {
  type: "message_delta";
  delta: { stop_reason?: string | null; stop_sequence?: string | null } & AnthropicUnknownFields;
  /** Cumulative; may restate input and cache tokens. */
  usage?: AnthropicUsage;
}

export interface AnthropicMessageStopEvent {
  type: "message_stop";
}

export interface AnthropicPingEvent {
  type: "ping";
}

export interface AnthropicErrorEvent {
  type: "error";
  error: { type: string; message: string };
}

export type AnthropicStreamEvent =
  | AnthropicMessageStartEvent
  | AnthropicContentBlockStartEvent
  | AnthropicContentBlockDeltaEvent
  | AnthropicContentBlockStopEvent
  | AnthropicMessageDeltaEvent
  | AnthropicMessageStopEvent
  | AnthropicPingEvent
  | AnthropicErrorEvent;
