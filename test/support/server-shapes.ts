import { mockTokenize, renderChatML } from "./mock-tokenizer.js";

/**
 * Scripted model servers shaped like the real ones, for the recipes in docs/clients.md: each server's model list as
 * it answers `GET /models` (and its own info endpoints, vLLM's `/tokenize`), its model ids and limits, what it answers
 * for an unknown model and for a request past its limits, and the field its reasoning comes in. Sources:
 * test/fixtures/scripted/server-shapes.md.
 */

export interface ShapedModel {
  id: string;
  /** Prompt and answer together, as the server enforces it. */
  contextWindow: number;
  /** The largest `max_tokens` the server accepts, when it has a limit of its own. */
  maxOutputTokens?: number;
}

export interface ShapedError {
  status: number;
  body: unknown;
  contentType?: string;
}

/** An answer of one of a server's own endpoints: its status and JSON body. */
export interface ShapedReply {
  status: number;
  body: unknown;
}

export type ReasoningField = "reasoning" | "reasoning_content" | "reasoning_details" | "think-tags";

export interface ServerShape {
  name: string;
  /** The preset Parley guesses from the real server's host or port (given with --preset, on 127.0.0.1). */
  preset: string;
  /** Where the real server is, as the recipe names it: only the path after the origin is kept in tests. */
  realBaseUrl: string;
  models: ShapedModel[];
  /** Whether the server answers a name it does not serve (llama.cpp and SGLang serve their one model to any name). */
  checksModel: boolean;
  /** `GET <base>/models`; undefined: the server has no list (404). */
  modelList(): unknown;
  /** Any other endpoint (Ollama's /api/ps and /api/show, LM Studio's REST API), by method and path. */
  info?(method: string, path: string, body: unknown): unknown;
  /** `POST /tokenize` at the server's root, answered or refused; absent: the server has none (404). */
  tokenize?(body: unknown): ShapedReply;
  unknownModel(model: string): ShapedError;
  /** The error for a request past a limit, or undefined when the server takes it. */
  overLimit(model: ShapedModel, maxTokens: number | undefined, promptTokens: number): ShapedError | undefined;
  reasoning: ReasoningField;
}

const created = 1_767_225_600;

/** vLLM's own 400 (vllm/entrypoints/openai/serving_engine.py, 0.8-0.11): max_tokens past what the window leaves. */
function vllmOverLimit(model: ShapedModel, maxTokens: number | undefined, prompt: number): ShapedError | undefined {
  if (prompt >= model.contextWindow) {
    return openaiError(
      400,
      `This model's maximum context length is ${model.contextWindow} tokens. However, your request has ${prompt} input tokens. Please reduce the length of the input messages.`,
      "BadRequestError",
    );
  }
  if (maxTokens !== undefined && maxTokens > model.contextWindow - prompt) {
    return openaiError(
      400,
      `'max_tokens' is too large: ${maxTokens}. This model's maximum context length is ${model.contextWindow} tokens and your request has ${prompt} input tokens (${maxTokens} > ${model.contextWindow} - ${prompt}).`,
      "BadRequestError",
    );
  }
  return undefined;
}

function openaiError(status: number, message: string, type: string, extra: Record<string, unknown> = {}): ShapedError {
  return { status, body: { error: { message, type, param: null, code: status, ...extra } } };
}

/** What vLLM's `/tokenize` takes in its chat form (`TokenizeChatRequest`, vllm/entrypoints/serve/tokenize/protocol.py). */
const VLLM_TOKENIZE_CHAT_FIELDS = new Set([
  "model",
  "messages",
  "add_generation_prompt",
  "return_token_strs",
  "continue_final_message",
  "add_special_tokens",
  "chat_template",
  "chat_template_kwargs",
  "media_io_kwargs",
  "mm_processor_kwargs",
  "tools",
]);
const VLLM_TOKENIZE_PROMPT_FIELDS = new Set(["model", "prompt", "add_special_tokens", "return_token_strs"]);

/** pydantic's 400 as vLLM words it, for the fields of a request it refuses. */
function vllmValidationError(problems: Array<{ type: string; field: string; msg: string }>): ShapedError {
  const listed = problems.map(
    ({ type, field, msg }) => `{'type': '${type}', 'loc': ('body', '${field}'), 'msg': '${msg}'}`,
  );
  return openaiError(400, `[${listed.join(", ")}]`, "BadRequestError");
}

/**
 * vLLM's `POST /tokenize`: the chat form renders the messages and tools through the model's template and counts
 * them (`{count, max_model_len, tokens, token_strs}`), the prompt form counts the text; an unknown model is its 404,
 * a field it does not take pydantic's 400 (as strict vLLM releases refuse it), both generation settings at once its
 * own 400. The template and tokenizer are the scripted ones (`mock-tokenizer.ts`): a Qwen-style ChatML over
 * o200k_base, the markers one token each.
 */
function vllmTokenize(shape: ServerShape, body: unknown): ShapedReply {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    return vllmValidationError([
      { type: "model_attributes_type", field: "", msg: "Input should be a valid dictionary" },
    ]);
  const request = body as Record<string, unknown>;
  const chat = "messages" in request;
  const fields = chat ? VLLM_TOKENIZE_CHAT_FIELDS : VLLM_TOKENIZE_PROMPT_FIELDS;
  const extra = Object.keys(request).filter((field) => !fields.has(field));
  if (extra.length > 0)
    return vllmValidationError(
      extra.map((field) => ({ type: "extra_forbidden", field, msg: "Extra inputs are not permitted" })),
    );
  const model = shape.models.find((candidate) => request.model === undefined || candidate.id === request.model);
  if (model === undefined) return shape.unknownModel(String(request.model));
  if (request.add_generation_prompt === true && request.continue_final_message === true)
    return openaiError(
      400,
      "Cannot set both `continue_final_message` and `add_generation_prompt` to True.",
      "BadRequestError",
    );
  if (chat && !Array.isArray(request.messages))
    return vllmValidationError([{ type: "list_type", field: "messages", msg: "Input should be a valid list" }]);
  if (!chat && typeof request.prompt !== "string")
    return vllmValidationError([{ type: "missing", field: "prompt", msg: "Field required" }]);
  const text = chat ? renderChatML(request as Parameters<typeof renderChatML>[0]) : (request.prompt as string);
  const tokens = mockTokenize(text);
  return {
    status: 200,
    body: { count: tokens.length, max_model_len: model.contextWindow, tokens, token_strs: null },
  };
}

export const VLLM: ServerShape = {
  name: "vllm",
  preset: "vllm",
  realBaseUrl: "http://127.0.0.1:8000/v1",
  models: [{ id: "Qwen/Qwen3-Coder-30B-A3B-Instruct", contextWindow: 65_536 }],
  checksModel: true,
  modelList() {
    return {
      object: "list",
      data: this.models.map((model) => ({
        id: model.id,
        object: "model",
        created,
        owned_by: "vllm",
        root: model.id,
        parent: null,
        max_model_len: model.contextWindow,
        permission: [{ id: "modelperm-1", object: "model_permission", allow_sampling: true }],
      })),
    };
  },
  unknownModel: (model) => ({
    status: 404,
    body: {
      error: { message: `The model \`${model}\` does not exist.`, type: "NotFoundError", param: "model", code: 404 },
    },
  }),
  overLimit: vllmOverLimit,
  tokenize(body) {
    return vllmTokenize(this, body);
  },
  reasoning: "reasoning",
};

export const SGLANG: ServerShape = {
  name: "sglang",
  preset: "sglang",
  realBaseUrl: "http://127.0.0.1:30000/v1",
  models: [{ id: "zai-org/GLM-4.5-Air", contextWindow: 65_536 }],
  checksModel: false,
  modelList() {
    return {
      object: "list",
      data: this.models.map((model) => ({
        id: model.id,
        object: "model",
        created,
        owned_by: "sglang",
        root: model.id,
        max_model_len: model.contextWindow,
      })),
    };
  },
  unknownModel: () => ({ status: 500, body: "unused" }),
  overLimit: (model, maxTokens, prompt) => {
    const completion = maxTokens ?? 0;
    if (prompt + completion <= model.contextWindow) return undefined;
    return {
      status: 400,
      body: {
        object: "error",
        message: `Requested token count exceeds the model's maximum context length of ${model.contextWindow} tokens. You requested a total of ${prompt + completion} tokens: ${prompt} tokens from the input messages and ${completion} tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.`,
        type: "BadRequestError",
        param: null,
        code: 400,
      },
    };
  },
  reasoning: "reasoning_content",
};

export const LLAMACPP: ServerShape = {
  name: "llamacpp",
  preset: "llamacpp",
  realBaseUrl: "http://127.0.0.1:8080/v1",
  models: [{ id: "ggml-org/gpt-oss-20b-GGUF", contextWindow: 65_536 }],
  checksModel: false,
  // The shape of test/fixtures/llamacpp-server/models.json, recorded from the real server (commit 80fb11a); the
  // figures in `meta` are gpt-oss-20b's, approximately.
  modelList() {
    const model = this.models[0]!;
    return {
      models: [
        {
          name: model.id,
          model: model.id,
          modified_at: "",
          size: "",
          digest: "",
          type: "model",
          description: "",
          tags: [""],
          capabilities: ["completion"],
          parameters: "",
          details: {
            parent_model: "",
            format: "gguf",
            family: "",
            families: [""],
            parameter_size: "",
            quantization_level: "",
          },
        },
      ],
      object: "list",
      data: [
        {
          id: model.id,
          aliases: [model.id],
          tags: [],
          object: "model",
          created,
          owned_by: "llamacpp",
          meta: {
            vocab_type: true,
            n_vocab: 201_088,
            n_ctx: model.contextWindow,
            n_ctx_train: 131_072,
            n_embd: 2_880,
            n_params: 20_914_757_184,
            size: 12_109_565_952,
            ftype: "MXFP4 MoE",
          },
        },
      ],
    };
  },
  unknownModel: () => ({ status: 500, body: "unused" }),
  // llama-server refuses only a prompt past the slot's window; a long max_tokens stops at the window's end.
  overLimit: (model, _maxTokens, prompt) =>
    prompt < model.contextWindow
      ? undefined
      : {
          status: 400,
          body: {
            error: {
              code: 400,
              message: `request (${prompt} tokens) exceeds the available context size (${model.contextWindow} tokens), try increasing it`,
              type: "exceed_context_size_error",
              n_prompt_tokens: prompt,
              n_ctx: model.contextWindow,
            },
          },
        },
  reasoning: "reasoning_content",
};

export const OLLAMA: ServerShape = {
  name: "ollama",
  preset: "ollama",
  realBaseUrl: "http://127.0.0.1:11434/v1",
  // Loaded with OLLAMA_CONTEXT_LENGTH=65536; the model itself takes 262144 (its /api/show model_info).
  models: [
    { id: "qwen3-coder:30b", contextWindow: 65_536 },
    { id: "nomic-embed-text:latest", contextWindow: 2_048 },
  ],
  checksModel: true,
  modelList() {
    return {
      object: "list",
      data: this.models.map((model) => ({ id: model.id, object: "model", created, owned_by: "library" })),
    };
  },
  info(method, path, body) {
    if (method === "GET" && path === "/api/ps") {
      return {
        models: [
          {
            name: "qwen3-coder:30b",
            model: "qwen3-coder:30b",
            size: 19_000_000_000,
            digest: "06c1097efce0",
            details: { family: "qwen3moe", parameter_size: "30.5B", quantization_level: "Q4_K_M" },
            expires_at: "2026-11-23T12:00:00Z",
            size_vram: 19_000_000_000,
            context_length: 65_536,
          },
        ],
      };
    }
    if (method === "POST" && path === "/api/show") {
      const name = (body as { model?: string } | undefined)?.model;
      if (name === "nomic-embed-text:latest") return { model_info: { "nomic-bert.context_length": 2_048 } };
      if (name === "qwen3-coder:30b") {
        return {
          parameters: 'repeat_penalty 1.05\nstop "<|im_end|>"\ntemperature 0.7',
          model_info: { "general.architecture": "qwen3moe", "qwen3moe.context_length": 262_144 },
          capabilities: ["completion", "tools"],
        };
      }
    }
    return undefined;
  },
  unknownModel: (model) =>
    openaiError(404, `model "${model}" not found, try pulling it first`, "api_error", { code: null }),
  // Ollama maps max_tokens to num_predict and cuts a long prompt to the window: it refuses neither.
  overLimit: () => undefined,
  reasoning: "reasoning",
};

export const LMSTUDIO: ServerShape = {
  name: "lmstudio",
  preset: "lmstudio",
  realBaseUrl: "http://127.0.0.1:1234/v1",
  models: [{ id: "qwen/qwen3-coder-30b", contextWindow: 65_536 }],
  checksModel: true,
  modelList() {
    return {
      data: [
        { id: "qwen/qwen3-coder-30b", object: "model", owned_by: "organization_owner" },
        { id: "text-embedding-nomic-embed-text-v1.5", object: "model", owned_by: "organization_owner" },
      ],
      object: "list",
    };
  },
  info(method, path) {
    if (method !== "GET" || path !== "/api/v1/models") return undefined;
    return {
      models: [
        {
          type: "llm",
          publisher: "qwen",
          key: "qwen/qwen3-coder-30b",
          display_name: "Qwen3 Coder 30B",
          max_context_length: 262_144,
          loaded_instances: [{ id: "qwen/qwen3-coder-30b", config: { context_length: 65_536 } }],
        },
        {
          type: "embedding",
          publisher: "nomic-ai",
          key: "text-embedding-nomic-embed-text-v1.5",
          max_context_length: 2_048,
          loaded_instances: [],
        },
      ],
    };
  },
  unknownModel: (model) => openaiError(404, `Model "${model}" not found.`, "invalid_request_error"),
  overLimit: (model, _maxTokens, prompt) =>
    prompt < model.contextWindow
      ? undefined
      : openaiError(
          400,
          `Trying to keep the first ${prompt} tokens when context the overflows. However, the model is loaded with context length of only ${model.contextWindow} tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input`,
          "invalid_request_error",
        ),
  reasoning: "reasoning_content",
};
