import type { SharesField } from "../../core/index.js";

/**
 * The fields Chat Completions has, from OpenAI's API reference (`POST /v1/chat/completions`): what an
 * OpenAI-compatible server is expected to take. A client's field outside these is an extension of one server
 * (vLLM's `min_p`, DeepSeek's `prefix`), and goes only to a provider whose preset takes it (`extraFields`).
 */
export const REQUEST_FIELDS: ReadonlySet<string> = new Set([
  "model",
  "messages",
  "audio",
  "frequency_penalty",
  "function_call",
  "functions",
  "logit_bias",
  "logprobs",
  "max_completion_tokens",
  "max_tokens",
  "metadata",
  "modalities",
  "n",
  "parallel_tool_calls",
  "prediction",
  "presence_penalty",
  "prompt_cache_key",
  "prompt_cache_retention",
  "reasoning_effort",
  "response_format",
  "safety_identifier",
  "seed",
  "service_tier",
  "stop",
  "store",
  "stream",
  "stream_options",
  "temperature",
  "tool_choice",
  "tools",
  "top_logprobs",
  "top_p",
  "user",
  "verbosity",
  "web_search_options",
]);

/**
 * The fields of a message, whatever its role (`developer`, `system`, `user`, `assistant`, `tool`, `function`), and
 * the reasoning fields OpenAI-compatible reasoning servers read on assistant messages, which Parley writes itself.
 */
export const MESSAGE_FIELDS: ReadonlySet<string> = new Set([
  "role",
  "content",
  "name",
  "audio",
  "function_call",
  "refusal",
  "tool_calls",
  "tool_call_id",
  "reasoning_content",
  "reasoning",
  "reasoning_details",
]);

/**
 * Fields another API has under the same name and meaning inside a message's parts and tools: a tool's `strict`
 * (Anthropic's too says the input must match the schema). `cache_control` is the preset's to allow.
 */
export const sharedElementField: SharesField = (key, value) => key === "strict" && typeof value === "boolean";

/** Request fields another API has under the same name and meaning: the Responses API's `prompt_cache_key`. */
export const sharedRequestField: SharesField = (key, value) => key === "prompt_cache_key" && typeof value === "string";
