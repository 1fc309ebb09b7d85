/**
 * The OpenAI Responses API as Parley reads and writes it: loose shapes (every object may carry fields Parley
 * does not name, kept as they came), after OpenAI's API reference and the `openai` SDK's types.
 */

export type Json = Record<string, unknown>;

/** `POST /v1/responses`. */
export interface ResponsesRequest extends Json {
  model: string;
  /** A string is one user message. */
  input?: string | ResponsesItem[];
  instructions?: string | null;
  tools?: ResponsesTool[];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  reasoning?: ResponsesReasoningConfig | null;
  text?: ResponsesTextConfig | null;
  stream?: boolean | null;
  store?: boolean | null;
  previous_response_id?: string | null;
  include?: string[] | null;
  user?: string;
}

export interface ResponsesReasoningConfig extends Json {
  effort?: string | null;
  summary?: string | null;
}

export interface ResponsesTextConfig extends Json {
  format?: ResponsesTextFormat;
  verbosity?: string | null;
}

export interface ResponsesTextFormat extends Json {
  type: string;
  name?: string;
  schema?: unknown;
  strict?: boolean | null;
  description?: string;
}

/** `function`, `custom` (freeform), `namespace` (functions under one name) or a hosted tool (`web_search`...). */
export interface ResponsesTool extends Json {
  type: string;
  name?: string;
  description?: string | null;
  parameters?: unknown;
  strict?: boolean | null;
  tools?: ResponsesTool[];
}

/** Any input or output item: messages, reasoning, calls, their outputs, hosted tools' items. */
export interface ResponsesItem extends Json {
  type?: string;
  id?: string;
}

export interface ResponsesMessageItem extends ResponsesItem {
  role: "user" | "assistant" | "system" | "developer";
  content: string | ResponsesContentPart[];
  status?: string;
}

/** `input_text`, `output_text`, `refusal`, `input_image`, `input_file`, `input_audio`... */
export interface ResponsesContentPart extends Json {
  type: string;
  text?: string;
}

export interface ResponsesReasoningItem extends ResponsesItem {
  type: "reasoning";
  summary?: Array<{ type: string; text: string }>;
  content?: Array<{ type: string; text: string }> | null;
  encrypted_content?: string | null;
  status?: string;
}

export interface ResponsesFunctionCall extends ResponsesItem {
  type: "function_call";
  call_id: string;
  name: string;
  arguments: string;
  namespace?: string;
  status?: string;
}

export interface ResponsesCustomToolCall extends ResponsesItem {
  type: "custom_tool_call";
  call_id: string;
  name: string;
  input: string;
  status?: string;
}

export interface ResponsesCallOutput extends ResponsesItem {
  type: "function_call_output" | "custom_tool_call_output";
  call_id: string;
  output: string | ResponsesContentPart[];
  status?: string;
}

export interface ResponsesUsage extends Json {
  input_tokens: number;
  input_tokens_details?: { cached_tokens?: number; [key: string]: unknown };
  output_tokens: number;
  output_tokens_details?: { reasoning_tokens?: number; [key: string]: unknown };
  total_tokens: number;
}

/** The response object: what `POST` answers, `response.*` events carry and `GET /v1/responses/{id}` returns. */
export interface ResponsesObject extends Json {
  id: string;
  object: "response";
  created_at: number;
  status: "completed" | "incomplete" | "failed" | "in_progress" | "queued" | "cancelled";
  error: { code: string; message: string } | null;
  incomplete_details: { reason: string } | null;
  model: string;
  output: ResponsesItem[];
  usage: ResponsesUsage | null;
}

/** `POST /v1/responses/compact`'s answer: the compacted conversation's items, not a response. */
export interface ResponsesCompactionObject extends Json {
  id: string;
  object: "response.compaction";
  created_at: number;
  output: ResponsesItem[];
  usage: ResponsesUsage | null;
}

/** One event of a streamed response; every event has its `type` and an increasing `sequence_number`. */
export interface ResponsesEvent extends Json {
  type: string;
  sequence_number?: number;
}
