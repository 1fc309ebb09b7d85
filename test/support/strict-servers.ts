import type { ScriptedReply } from "./scripted-upstream.js";

/**
 * How real servers treat a field they do not know, for the scripted upstreams: they refuse the request with a 400
 * naming it. Each server's fields are written out from its own public reference, not from Parley's presets, so
 * a test fails when Parley sends what the server would refuse.
 *
 * - api.openai.com: `Unrecognized request argument supplied: top_k` for a request field, `Additional properties
 *   are not allowed ('id' was unexpected) - 'messages.0'` for a message field (invalid_request_error, param null).
 * - vLLM (0.4.2 to 0.6.4 for request fields, PR #4355 and #10463; message fields still with Mistral models, issue
 *   #12864): pydantic's `extra_forbidden`, `{"object":"error","message":"[{'type': 'extra_forbidden', 'loc':
 *   ('body', 'port'), 'msg': 'Extra inputs are not permitted', ...}]","type":"BadRequestError","code":400}`.
 * - Anthropic: `{"type":"error","error":{"type":"invalid_request_error","message":"metadata.foo: Extra inputs are
 *   not permitted"}}`.
 * - api.openai.com's Responses API: `{"error":{"message":"Unknown parameter: 'input[3].status'.","type":
 *   "invalid_request_error","param":"input[3].status","code":"unknown_parameter"}}`, for a request field too.
 */
export interface StrictServer {
  /** Which server this is, for messages. */
  name: string;
  /** Request fields it takes. */
  request: ReadonlySet<string>;
  /** Fields of a message it takes (any role). */
  message: ReadonlySet<string>;
  /** Fields of `metadata` it takes; undefined when it takes any. */
  metadata?: ReadonlySet<string>;
  /** For a Responses API: the fields of each `input` item type it checks (others it takes as they come). */
  items?: Readonly<Record<string, ReadonlySet<string>>>;
  /** Its 400 for the unknown fields found, by path (`messages.1.prefix`). */
  refuse(unknown: readonly UnknownField[]): ScriptedReply;
}

export interface UnknownField {
  /** Where, the way the server says it: `['messages', 1, 'prefix']`. */
  loc: Array<string | number>;
  value: unknown;
}

/** OpenAI's Chat Completions request fields (platform.openai.com, API reference, chat/create). */
const CHAT_COMPLETIONS_FIELDS = [
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
];

/** Fields of OpenAI's message objects, every role together. */
const CHAT_MESSAGE_FIELDS = [
  "role",
  "content",
  "name",
  "audio",
  "function_call",
  "refusal",
  "tool_calls",
  "tool_call_id",
];

/** What reasoning servers read back on assistant messages (DeepSeek, vLLM, SGLang, OpenRouter). */
const REASONING_MESSAGE_FIELDS = ["reasoning_content", "reasoning", "reasoning_details"];

/** vLLM's documented extra parameters (docs.vllm.ai, OpenAI-compatible server), the ones tests meet. */
const VLLM_EXTRA_FIELDS = [
  "top_k",
  "min_p",
  "repetition_penalty",
  "min_tokens",
  "ignore_eos",
  "skip_special_tokens",
  "chat_template",
  "chat_template_kwargs",
  "guided_json",
  "structured_outputs",
  "priority",
];

function openaiRefusal(unknown: readonly UnknownField[]): ScriptedReply {
  const first = unknown[0]!;
  const message =
    first.loc.length === 1
      ? `Unrecognized request argument supplied: ${first.loc[0]}`
      : `Additional properties are not allowed ('${first.loc.at(-1)}' was unexpected) - '${first.loc.slice(0, -1).join(".")}'`;
  return {
    kind: "error",
    status: 400,
    body: { error: { message, type: "invalid_request_error", param: null, code: null } },
  };
}

function pydanticRefusal(unknown: readonly UnknownField[]): ScriptedReply {
  const errors = unknown.map(
    (field) =>
      `{'type': 'extra_forbidden', 'loc': ('body', ${field.loc.map((part) => (typeof part === "number" ? part : `'${part}'`)).join(", ")}), 'msg': 'Extra inputs are not permitted', 'input': ${JSON.stringify(field.value)}}`,
  );
  return {
    kind: "error",
    status: 400,
    body: { object: "error", message: `[${errors.join(", ")}]`, type: "BadRequestError", param: null, code: 400 },
  };
}

function anthropicRefusal(unknown: readonly UnknownField[]): ScriptedReply {
  const first = unknown[0]!;
  return {
    kind: "error",
    status: 400,
    body: {
      type: "error",
      error: { type: "invalid_request_error", message: `${first.loc.join(".")}: Extra inputs are not permitted` },
    },
  };
}

function responsesRefusal(unknown: readonly UnknownField[]): ScriptedReply {
  const param = unknown[0]!.loc
    .map((part, index) => (typeof part === "number" ? `[${part}]` : index === 0 ? part : `.${part}`))
    .join("");
  return {
    kind: "error",
    status: 400,
    body: {
      error: {
        message: `Unknown parameter: '${param}'.`,
        type: "invalid_request_error",
        param,
        code: "unknown_parameter",
      },
    },
  };
}

const set = (...lists: string[][]) => new Set(lists.flat());

/** api.openai.com. */
export const OPENAI_SERVER: StrictServer = {
  name: "api.openai.com",
  request: set(CHAT_COMPLETIONS_FIELDS),
  message: set(CHAT_MESSAGE_FIELDS),
  refuse: openaiRefusal,
};

/** A strict OpenAI-compatible reasoning server: Chat Completions and the reasoning fields on messages. */
export const CHAT_SERVER: StrictServer = {
  name: "a strict OpenAI-compatible server",
  request: set(CHAT_COMPLETIONS_FIELDS),
  message: set(CHAT_MESSAGE_FIELDS, REASONING_MESSAGE_FIELDS),
  refuse: openaiRefusal,
};

/** vLLM with its extra parameters; NIM and SGLang take the same. */
export const VLLM_SERVER: StrictServer = {
  name: "vLLM",
  request: set(CHAT_COMPLETIONS_FIELDS, VLLM_EXTRA_FIELDS),
  message: set(CHAT_MESSAGE_FIELDS, REASONING_MESSAGE_FIELDS),
  refuse: pydanticRefusal,
};

/** DeepSeek, Kimi and GLM: a `thinking` switch, and Kimi's `partial` and DeepSeek's `prefix` continuations. */
export const THINKING_SWITCH_SERVER: StrictServer = {
  name: "DeepSeek / Kimi / GLM",
  request: set(CHAT_COMPLETIONS_FIELDS, ["thinking"]),
  message: set(CHAT_MESSAGE_FIELDS, REASONING_MESSAGE_FIELDS, ["prefix", "partial"]),
  refuse: openaiRefusal,
};

/** OpenRouter: its routing and reasoning parameters. */
export const OPENROUTER_SERVER: StrictServer = {
  name: "OpenRouter",
  request: set(CHAT_COMPLETIONS_FIELDS, [
    "reasoning",
    "provider",
    "models",
    "route",
    "transforms",
    "usage",
    "top_k",
    // automatic prompt caching (openrouter.ai/docs, prompt caching)
    "cache_control",
  ]),
  message: set(CHAT_MESSAGE_FIELDS, REASONING_MESSAGE_FIELDS),
  refuse: openaiRefusal,
};

/** The Anthropic Messages API (docs.anthropic.com, Messages), betas included. */
export const ANTHROPIC_SERVER: StrictServer = {
  name: "Anthropic",
  request: set([
    "model",
    "messages",
    "max_tokens",
    "system",
    "metadata",
    "stop_sequences",
    "stream",
    "temperature",
    "top_k",
    "top_p",
    "tools",
    "tool_choice",
    "thinking",
    "service_tier",
    "container",
    "mcp_servers",
    "context_management",
    "output_config",
    "output_format",
    "thread",
    // automatic prompt caching: one breakpoint the server moves to the last cacheable block
    "cache_control",
    // Claude Code's (2.1.33x) with its betas: a per-request diagnostics object and the betas in the body
    "diagnostics",
    "betas",
  ]),
  // `output_config` on a system message inside `messages` (Claude Code's per-turn control beta)
  message: set(["role", "content", "output_config"]),
  metadata: set(["user_id"]),
  refuse: anthropicRefusal,
};

/** OpenAI's Responses request fields (platform.openai.com, API reference, responses/create). */
const RESPONSES_FIELDS = [
  "model",
  "input",
  "instructions",
  "background",
  "conversation",
  "include",
  "max_output_tokens",
  "max_tool_calls",
  "metadata",
  "parallel_tool_calls",
  "previous_response_id",
  "prompt",
  "prompt_cache_key",
  "prompt_cache_retention",
  "reasoning",
  "safety_identifier",
  "service_tier",
  "store",
  "stream",
  "stream_options",
  "temperature",
  "text",
  "tool_choice",
  "tools",
  "top_logprobs",
  "top_p",
  "truncation",
  "user",
  // Not in the reference, but taken: Codex sends it on every request, to api.openai.com directly too (its
  // `x-codex-installation-id`, `x-codex-turn-metadata`), and Codex on an API key works there.
  "client_metadata",
];

/**
 * Codex's metadata on every input item for a provider it takes for OpenAI's (one named `OpenAI`, as its remote
 * compaction needs): OpenAI's API takes it, or Codex on OpenAI would not work.
 */
const CODEX_ITEM_METADATA = "internal_chat_message_metadata_passthrough";

/**
 * The fields of the input items a Responses provider is sent (a message's with or without `type`); a reasoning item
 * sent back has no `status` (OpenAI refuses `input[n].status` on one).
 */
const RESPONSES_ITEMS: Record<string, ReadonlySet<string>> = {
  message: set(["type", "id", "role", "content", "status", "phase", CODEX_ITEM_METADATA]),
  function_call: set(["type", "id", "call_id", "name", "namespace", "arguments", "status", CODEX_ITEM_METADATA]),
  function_call_output: set(["type", "id", "call_id", "output", "status", CODEX_ITEM_METADATA]),
  custom_tool_call: set(["type", "id", "call_id", "name", "namespace", "input", CODEX_ITEM_METADATA]),
  custom_tool_call_output: set(["type", "id", "call_id", "output", CODEX_ITEM_METADATA]),
  reasoning: set(["type", "id", "summary", "content", "encrypted_content", CODEX_ITEM_METADATA]),
};

/** api.openai.com's Responses API. */
export const RESPONSES_SERVER: StrictServer = {
  name: "api.openai.com (Responses)",
  request: set(RESPONSES_FIELDS),
  message: set([]),
  items: RESPONSES_ITEMS,
  refuse: responsesRefusal,
};

/** The server a provider of this type and preset stands for in tests; undefined: one that ignores what it does not know. */
export function strictServerFor(
  type: "openai" | "anthropic" | "openai-responses",
  preset: string | undefined,
): StrictServer | undefined {
  if (type === "anthropic") return ANTHROPIC_SERVER;
  if (type === "openai-responses") return RESPONSES_SERVER;
  switch (preset) {
    case undefined:
    case "generic":
      return CHAT_SERVER;
    case "openai":
      return OPENAI_SERVER;
    case "vllm":
    case "sglang":
    case "nvidia-nim":
      return VLLM_SERVER;
    case "deepseek":
    case "kimi":
    case "glm":
      return THINKING_SWITCH_SERVER;
    case "openrouter":
      return OPENROUTER_SERVER;
    default:
      // llama.cpp, Ollama and others read what they know and ignore the rest
      return undefined;
  }
}

/** The fields of a request body the server does not take, in the order it meets them. */
export function unknownFields(server: StrictServer, body: unknown): UnknownField[] {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return [];
  const unknown: UnknownField[] = [];
  const record = body as Record<string, unknown>;
  for (const [key, value] of Object.entries(record)) {
    if (!server.request.has(key)) unknown.push({ loc: [key], value });
  }
  const metadata = record.metadata;
  if (server.metadata !== undefined && metadata !== null && typeof metadata === "object") {
    for (const [key, value] of Object.entries(metadata)) {
      if (!server.metadata.has(key)) unknown.push({ loc: ["metadata", key], value });
    }
  }
  const messages = Array.isArray(record.messages) ? record.messages : [];
  messages.forEach((message, index) => {
    if (message === null || typeof message !== "object") return;
    for (const [key, value] of Object.entries(message)) {
      if (!server.message.has(key)) unknown.push({ loc: ["messages", index, key], value });
    }
  });
  if (server.items !== undefined && Array.isArray(record.input)) {
    record.input.forEach((item, index) => {
      if (item === null || typeof item !== "object") return;
      const type = (item as { type?: unknown }).type ?? "message";
      const known = typeof type === "string" ? server.items![type] : undefined;
      if (known === undefined) return;
      for (const [key, value] of Object.entries(item)) {
        if (!known.has(key)) unknown.push({ loc: ["input", index, key], value });
      }
    });
  }
  return unknown;
}
