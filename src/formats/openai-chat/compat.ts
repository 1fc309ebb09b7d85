import type { TextToolCallFormat } from "../../text/text-tool-calls/index.js";

import type { ReasoningMode } from "../adapter.js";
import type { OpenAIPresetName } from "./preset-names.js";
import type { ThoughtSignatureKey } from "./signature-keys.js";

export type { ReasoningMode } from "../adapter.js";
export type { OpenAIPresetName } from "./preset-names.js";

/** The servers' own token counts Parley knows how to ask for (`OpenAICompat.tokenCount`). */
export const TOKEN_COUNT_ENDPOINTS = ["none", "llamacpp", "vllm"] as const;
export type TokenCountEndpoint = (typeof TOKEN_COUNT_ENDPOINTS)[number];

/** How a server is told to think. */
export type ThinkingSwitch =
  | { type: "none" }
  /**
   * vLLM / SGLang / NIM chat templates: `chat_template_kwargs: {enable_thinking}`; with `budgetField`, a thinking
   * budget goes in that field too (llama.cpp's `thinking_budget_tokens`).
   */
  | { type: "chat_template_kwargs"; budgetField?: string }
  | { type: "reasoning_effort" }
  /** DeepSeek, Z.ai, Moonshot: `thinking: {type: "enabled" | "disabled"}`. */
  | { type: "thinking" }
  /** Ollama: `think: true | false`. */
  | { type: "ollama_think" }
  /** NVIDIA Nemotron: a system prompt `detailed thinking on | off`. */
  | { type: "nemotron_system_prompt" }
  /** OpenRouter: `reasoning: {max_tokens} | {enabled}`. */
  | { type: "openrouter_reasoning" };

/** Provider quirks as data: guessed from the base URL, overridable in config. */
export interface OpenAICompat {
  id: string;
  /** Where this provider's own reasoning is sent back. */
  reasoningMode: ReasoningMode;
  thinkingSwitch: ThinkingSwitch;
  /** Tool messages must directly follow the assistant's tool_calls (api.openai.com enforces it). */
  strictToolMessageOrder: boolean;
  supportsToolChoice: boolean;
  /**
   * How a named tool choice goes: OpenAI's `{type: "function", function: {name}}`, or, for a server that takes
   * only the string forms (llama.cpp drops the object and runs `auto`), `"required"` with that one tool offered.
   */
  namedToolChoice: "object" | "required";
  supportsImages: boolean;
  /**
   * The server takes Anthropic `cache_control` on parts, tools and the request (OpenRouter, which hands it to the
   * model's provider in that provider's form); elsewhere it is stripped and reported.
   */
  supportsCacheControl: boolean;
  /**
   * The server routes its prompt cache by `prompt_cache_key` (api.openai.com): a request without a client's own gets
   * the conversation's key (`ConversationRequest.cacheKey`); others get none.
   */
  promptCacheKey: boolean;
  maxTokensField: "max_tokens" | "max_completion_tokens";
  maxTokensCap?: number;
  /** The server leaves tool calls as text in `content` in this syntax. */
  textToolCallFormat?: TextToolCallFormat;
  /** Every earlier assistant tool-call message must carry non-empty reasoning (Kimi, DeepSeek). */
  requiresReasoningOnToolCallTurns: boolean;
  /** Send `stream_options.include_usage` so the last chunk carries usage. */
  streamUsage: boolean;
  /**
   * How the server counts a request's tokens through its own template and tokenizer (`token-count.ts`): `llamacpp`
   * (Anthropic's `/v1/messages/count_tokens` for an Anthropic client, `/apply-template` then `/tokenize` for any
   * other), `vllm` (`/tokenize` with the chat messages), or `none` (Parley estimates).
   */
  tokenCount: TokenCountEndpoint;
  /**
   * Fields beyond Chat Completions the server takes, at the top level or on a message: its own extensions by name,
   * or `any` for a server that ignores what it does not know (a client's fields of this API then all go; another
   * API's only by name). Any other field Parley does not know (a client's extension, another API's field) is
   * dropped and reported: strict servers answer 400 to it.
   */
  extraFields: readonly string[] | "any";
  /**
   * Chat Completions fields the server refuses (Google's OpenAI-compatible endpoint answers 400 `Unknown name
   * "store": Cannot find field`): dropped and reported, as a client's or Parley's.
   */
  refusedFields: readonly string[];
  /**
   * Where the server reads and writes Gemini's thought signatures: `extra_content.google.thought_signature` (the
   * Gemini API's OpenAI-compatible endpoint), `extra_content.vertex.thought_signature` (Vertex AI's), or `none` (a
   * server not known to take them: only the signatures it gave itself go back to it, under `google`). See
   * `thought-signatures.ts`.
   */
  thoughtSignatures: ThoughtSignatureKey | "none";
}

/** The `extra_content` keys Google's OpenAI-compatible endpoints carry thought signatures under. */

/**
 * vLLM's sampling and template parameters beyond OpenAI's (docs.vllm.ai, OpenAI-compatible server, "Extra
 * parameters"); SGLang and NIM, which run the same kind of engine, take the same ones.
 */
const VLLM_FIELDS = [
  "top_k",
  "min_p",
  "repetition_penalty",
  "length_penalty",
  "stop_token_ids",
  "include_stop_str_in_output",
  "ignore_eos",
  "min_tokens",
  "skip_special_tokens",
  "spaces_between_special_tokens",
  "truncate_prompt_tokens",
  "prompt_logprobs",
  "allowed_token_ids",
  "bad_words",
  "echo",
  "add_generation_prompt",
  "continue_final_message",
  "add_special_tokens",
  "documents",
  "chat_template",
  "chat_template_kwargs",
  "mm_processor_kwargs",
  "guided_json",
  "guided_regex",
  "guided_choice",
  "guided_grammar",
  "structural_tag",
  "structured_outputs",
  "priority",
  "request_id",
  "cache_salt",
];

const base: Omit<OpenAICompat, "id"> = {
  reasoningMode: "think-tags",
  thinkingSwitch: { type: "none" },
  strictToolMessageOrder: false,
  supportsToolChoice: true,
  namedToolChoice: "object",
  supportsImages: true,
  supportsCacheControl: false,
  promptCacheKey: false,
  maxTokensField: "max_tokens",
  requiresReasoningOnToolCallTurns: false,
  streamUsage: true,
  tokenCount: "none",
  extraFields: [],
  refusedFields: [],
  thoughtSignatures: "none",
};

/**
 * What Google's OpenAI-compatible endpoints refuse among Chat Completions' fields, from the 400s they answer (`Invalid
 * JSON payload received. Unknown name "store": Cannot find field.`, and the same for `metadata` and
 * `prompt_cache_key`, reported by users of the OpenAI SDKs: Routstr/routstr-core#505, ed-donner/agents#45,
 * leookun/cursor-byok#112).
 */
const GOOGLE_REFUSED_FIELDS = ["store", "metadata", "prompt_cache_key"];

/**
 * Google's own fields there: `extra_body` (`{google: {thinking_config, cached_content}}`, as its docs have the
 * OpenAI SDKs send it) and a message's `extra_content`.
 */
const GOOGLE_FIELDS = ["extra_body", "extra_content"];

/** Values from the protocol notes, sections C (reasoning) and B (OpenAI rules); the source is named per preset. */
const PRESET_TABLE = {
  /** Unknown OpenAI-compatible server: inline tags are the one form every chat template reads. */
  generic: { id: "generic", ...base },
  /** NIM: `reasoning_content`; thinking via chat_template_kwargs (Nemotron uses the system prompt: override). */
  "nvidia-nim": {
    id: "nvidia-nim",
    ...base,
    reasoningMode: "reasoning_content",
    thinkingSwitch: { type: "chat_template_kwargs" },
    extraFields: [...VLLM_FIELDS, "nvext"],
  },
  /**
   * vLLM renamed `reasoning_content` to `reasoning` (PR #27752) and its interleaved-thinking example sends `reasoning`.
   * It tokenizes chat messages through the model's template at `/tokenize`, beside `/v1`.
   */
  vllm: {
    id: "vllm",
    ...base,
    reasoningMode: "reasoning",
    thinkingSwitch: { type: "chat_template_kwargs" },
    tokenCount: "vllm",
    extraFields: VLLM_FIELDS,
  },
  /**
   * SGLang `--reasoning-parser`: `reasoning_content`; Qwen3 `enable_thinking`. Its `/tokenize` takes a prompt, not
   * chat messages, and it has no template endpoint: its counts are estimated.
   */
  sglang: {
    id: "sglang",
    ...base,
    reasoningMode: "reasoning_content",
    thinkingSwitch: { type: "chat_template_kwargs" },
    extraFields: [...VLLM_FIELDS, "separate_reasoning", "stream_reasoning", "regex", "ebnf", "json_schema"],
  },
  /**
   * llama-server `--reasoning-format deepseek` reads `reasoning_content`; images depend on the model. It reads the
   * fields it knows (many samplers of its own) and ignores the rest. Thinking is switched per request by the chat
   * template's `enable_thinking` and bounded by `thinking_budget_tokens`; `tool_choice` must be a string. It counts
   * tokens through its own template: an Anthropic request at Anthropic's `/v1/messages/count_tokens`, any other
   * rendered at `/apply-template` and counted at `/tokenize`.
   */
  llamacpp: {
    id: "llamacpp",
    ...base,
    reasoningMode: "reasoning_content",
    thinkingSwitch: { type: "chat_template_kwargs", budgetField: "thinking_budget_tokens" },
    namedToolChoice: "required",
    tokenCount: "llamacpp",
    extraFields: "any",
  },
  /** Ollama's OpenAI endpoint answers with `reasoning`; the native `think` switch is accepted there too; unknown fields are ignored. */
  ollama: {
    id: "ollama",
    ...base,
    reasoningMode: "reasoning",
    thinkingSwitch: { type: "ollama_think" },
    extraFields: "any",
  },
  /** LM Studio: reasoning models answer in `reasoning_content`; no thinking switch of its own. */
  lmstudio: {
    id: "lmstudio",
    ...base,
    reasoningMode: "reasoning_content",
    thinkingSwitch: { type: "none" },
    // the sampling and loading parameters its OpenAI-compatible endpoint documents beyond OpenAI's
    extraFields: ["top_k", "min_p", "repeat_penalty", "ttl", "draft_model"],
  },
  /** DeepSeek: `reasoning_content` must come back on tool-call turns, else 400. */
  deepseek: {
    id: "deepseek",
    ...base,
    reasoningMode: "reasoning_content",
    thinkingSwitch: { type: "thinking" },
    supportsImages: false,
    requiresReasoningOnToolCallTurns: true,
    // chat prefix completion: the last assistant message with `prefix: true` is continued
    extraFields: ["prefix", "thinking"],
  },
  /** Moonshot Kimi: "reasoning_content is missing in assistant tool call message" 400; `""` is rejected too. */
  kimi: {
    id: "kimi",
    ...base,
    reasoningMode: "reasoning_content",
    thinkingSwitch: { type: "thinking" },
    requiresReasoningOnToolCallTurns: true,
    // partial mode: the last assistant message with `partial: true` is continued
    extraFields: ["partial", "thinking"],
  },
  /** Z.ai GLM: `reasoning_content`, `thinking: {type}`; preserved thinking goes back unmodified. */
  glm: {
    id: "glm",
    ...base,
    reasoningMode: "reasoning_content",
    thinkingSwitch: { type: "thinking" },
    extraFields: ["thinking", "do_sample", "request_id", "tool_stream", "user_id"],
  },
  /** MiniMax native API keeps `<think>` inline in content and wants it back completely. */
  minimax: { id: "minimax", ...base, reasoningMode: "think-tags", thinkingSwitch: { type: "none" } },
  /** OpenRouter: `reasoning` + `reasoning_details`, details replayed complete. */
  openrouter: {
    id: "openrouter",
    ...base,
    reasoningMode: "reasoning_details",
    thinkingSwitch: { type: "openrouter_reasoning" },
    // cache_control on parts and at the top level (automatic caching), converted for each model's provider
    supportsCacheControl: true,
    // its routing and sampling parameters (openrouter.ai/docs, API reference, parameters)
    extraFields: [
      "models",
      "route",
      "provider",
      "transforms",
      "plugins",
      "reasoning",
      "usage",
      "top_k",
      "top_a",
      "min_p",
      "repetition_penalty",
      "debug",
    ],
  },
  /** api.openai.com: strict tool-message order, `max_completion_tokens`, no reasoning text to send back. */
  openai: {
    id: "openai",
    ...base,
    reasoningMode: "drop",
    thinkingSwitch: { type: "reasoning_effort" },
    strictToolMessageOrder: true,
    maxTokensField: "max_completion_tokens",
    promptCacheKey: true,
  },
  /**
   * The Gemini API's OpenAI-compatible endpoint (`https://generativelanguage.googleapis.com/v1beta/openai`): thought
   * signatures in `extra_content.google` on tool calls and on the message, and Gemini 3 answers 400 for a current
   * turn's call without one; thinking switched by `reasoning_effort` (its thinking level); no reasoning text to send
   * back (its thoughts stay behind their signatures); a field it does not know is a 400.
   */
  "gemini-openai": {
    id: "gemini-openai",
    ...base,
    thinkingSwitch: { type: "reasoning_effort" },
    extraFields: GOOGLE_FIELDS,
    refusedFields: GOOGLE_REFUSED_FIELDS,
    thoughtSignatures: "google",
  },
  /**
   * Vertex AI's OpenAI-compatible endpoint (`https://{location}-aiplatform.googleapis.com/v1/projects/{project}/
   * locations/{location}/endpoints/openapi`, an access token as the key): as the Gemini API's, its signatures under
   * `extra_content.vertex`, and its own (Vertex AI signs apart from the Gemini API).
   */
  "vertex-openai": {
    id: "vertex-openai",
    ...base,
    thinkingSwitch: { type: "reasoning_effort" },
    extraFields: GOOGLE_FIELDS,
    refusedFields: GOOGLE_REFUSED_FIELDS,
    thoughtSignatures: "vertex",
  },
} satisfies Record<OpenAIPresetName, OpenAICompat>;

export const PRESETS: Readonly<Record<string, OpenAICompat>> = PRESET_TABLE;

/**
 * Servers told by their URL's host and path (a host serving other APIs beside Chat Completions): Google's
 * OpenAI-compatible endpoints, `generativelanguage.googleapis.com/v1beta/openai` and Vertex AI's
 * `{location-}aiplatform.googleapis.com/.../endpoints/openapi` (ai.google.dev/gemini-api/docs/openai; Vertex AI,
 * "Call Vertex AI models by using the OpenAI library").
 */
const urlRules: Array<[RegExp, string]> = [
  [/^generativelanguage\.googleapis\.com\/v1(?:beta|alpha)?\/openai(?:\/|$)/, "gemini-openai"],
  [/^(?:[a-z0-9-]+-)?aiplatform\.googleapis\.com\/.*\/endpoints\/openapi(?:\/|$)/, "vertex-openai"],
];

const hostRules: Array<[RegExp, string]> = [
  [/integrate\.api\.nvidia\.com/, "nvidia-nim"],
  [/api\.deepseek\.com/, "deepseek"],
  [/api\.moonshot\.(ai|cn)/, "kimi"],
  [/api\.z\.ai|open\.bigmodel\.cn/, "glm"],
  [/api\.minimaxi?\.(io|com|chat)/, "minimax"],
  [/openrouter\.ai/, "openrouter"],
  [/api\.openai\.com/, "openai"],
];

const portRules: Array<[string, string]> = [
  ["11434", "ollama"],
  ["8000", "vllm"],
  ["30000", "sglang"],
  ["8080", "llamacpp"],
  ["1234", "lmstudio"],
];

/**
 * The `owned_by` model servers give their models in `GET /models`, which says what they are whatever their port:
 * llama-server `llamacpp`, vLLM `vllm`, SGLang `sglang` (each server's OpenAI-compatible model list).
 */
const ownerRules: Array<[string, string]> = [
  ["llamacpp", "llamacpp"],
  ["vllm", "vllm"],
  ["sglang", "sglang"],
];

/** The preset a server's model list names (its models' `owned_by`); undefined when it names none of them. */
export function presetFromOwners(owners: readonly string[]): string | undefined {
  for (const [owner, id] of ownerRules) if (owners.includes(owner)) return id;
  return undefined;
}

/** Guesses the preset from the base URL; an unknown server gets `generic`. */
export function detectPreset(baseUrl: string): OpenAICompat {
  let host = baseUrl;
  let port = "";
  let path = "";
  try {
    const url = new URL(baseUrl);
    host = url.hostname;
    port = url.port;
    path = url.pathname;
  } catch {
    // Not a URL: match the text as given.
  }
  for (const [pattern, id] of urlRules) if (pattern.test(host + path)) return presetOrGeneric(id);
  for (const [pattern, id] of hostRules) if (pattern.test(host)) return presetOrGeneric(id);
  for (const [wanted, id] of portRules) if (port === wanted) return presetOrGeneric(id);
  return presetOrGeneric("generic");
}

/** A named preset (or the one guessed from the URL), with config overrides on top. */
export function resolveCompat(
  preset: string | undefined,
  baseUrl: string,
  overrides?: Partial<OpenAICompat>,
): OpenAICompat {
  const chosen = preset !== undefined ? PRESETS[preset] : undefined;
  if (preset !== undefined && chosen === undefined) {
    throw new Error(`unknown OpenAI-compatible preset '${preset}' (known: ${Object.keys(PRESETS).join(", ")})`);
  }
  const found = chosen ?? detectPreset(baseUrl);
  return { ...found, thinkingSwitch: { ...found.thinkingSwitch }, ...stripUndefined(overrides ?? {}) };
}

function presetOrGeneric(id: string): OpenAICompat {
  const found = PRESETS[id] ?? PRESETS.generic!;
  return { ...found, thinkingSwitch: { ...found.thinkingSwitch } };
}

function stripUndefined(overrides: Partial<OpenAICompat>): Partial<OpenAICompat> {
  return Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined));
}
