import type { ServerShape, ShapedError, ShapedModel } from "./server-shapes.js";

/**
 * The hosted providers of the recipes, shaped as their APIs answer (sources: test/fixtures/scripted/server-shapes.md).
 * Their limits are what the providers publish; the scripted servers enforce them as the providers do.
 */

const created = 1_767_225_600;

function list(
  models: ShapedModel[],
  ownedBy: string,
  extra: (model: ShapedModel) => Record<string, unknown> = () => ({}),
) {
  return {
    object: "list",
    data: models.map((model) => ({ id: model.id, object: "model", created, owned_by: ownedBy, ...extra(model) })),
  };
}

function error(status: number, body: unknown): ShapedError {
  return { status, body };
}

/** NVIDIA's hosted catalogue: ids only; vLLM inside answers a request past the window with vLLM's 400. */
export const NIM: ServerShape = {
  name: "nvidia-nim",
  preset: "nvidia-nim",
  realBaseUrl: "https://integrate.api.nvidia.com/v1",
  models: [
    { id: "qwen/qwen3-coder-480b-a35b-instruct", contextWindow: 262_144 },
    { id: "moonshotai/kimi-k2-instruct-0905", contextWindow: 262_144 },
    { id: "openai/gpt-oss-120b", contextWindow: 131_072 },
  ],
  checksModel: true,
  modelList() {
    return list(this.models, "nvidia", (model) => ({ owned_by: model.id.split("/")[0] }));
  },
  unknownModel: (model) =>
    error(404, {
      object: "error",
      message: `The model \`${model}\` does not exist.`,
      type: "NotFoundError",
      param: null,
      code: 404,
    }),
  overLimit: (model, maxTokens, prompt) =>
    maxTokens !== undefined && maxTokens > model.contextWindow - prompt
      ? error(400, {
          object: "error",
          message: `'max_tokens' is too large: ${maxTokens}. This model's maximum context length is ${model.contextWindow} tokens and your request has ${prompt} input tokens (${maxTokens} > ${model.contextWindow} - ${prompt}).`,
          type: "BadRequestError",
          param: "max_tokens",
          code: 400,
        })
      : undefined,
  reasoning: "reasoning_content",
};

export const DEEPSEEK: ServerShape = {
  name: "deepseek",
  preset: "deepseek",
  realBaseUrl: "https://api.deepseek.com/v1",
  models: [
    { id: "deepseek-chat", contextWindow: 131_072, maxOutputTokens: 8_192 },
    { id: "deepseek-reasoner", contextWindow: 131_072, maxOutputTokens: 65_536 },
    { id: "deepseek-v4-flash", contextWindow: 1_000_000, maxOutputTokens: 384_000 },
    { id: "deepseek-v4-pro", contextWindow: 1_000_000, maxOutputTokens: 384_000 },
  ],
  checksModel: true,
  modelList() {
    return list(this.models, "deepseek");
  },
  unknownModel: () =>
    error(400, {
      error: { message: "Model Not Exist", type: "invalid_request_error", param: null, code: "invalid_request_error" },
    }),
  overLimit: (model, maxTokens, prompt) => {
    if (maxTokens !== undefined && model.maxOutputTokens !== undefined && maxTokens > model.maxOutputTokens) {
      return error(400, {
        error: {
          message: `Invalid max_tokens value, the valid range of max_tokens is [1, ${model.maxOutputTokens}]`,
          type: "invalid_request_error",
          param: null,
          code: "invalid_request_error",
        },
      });
    }
    const completion = maxTokens ?? 4_096;
    if (prompt + completion <= model.contextWindow) return undefined;
    return error(400, {
      error: {
        message: `This model's maximum context length is ${model.contextWindow} tokens. However, you requested ${prompt + completion} tokens (${prompt} in the messages, ${completion} in the completion). Please reduce the length of the messages or completion.`,
        type: "invalid_request_error",
        param: null,
        code: "invalid_request_error",
      },
    });
  },
  reasoning: "reasoning_content",
};

/** Moonshot states `context_length` in its list; prompt and answer share it. */
export const KIMI: ServerShape = {
  name: "kimi",
  preset: "kimi",
  realBaseUrl: "https://api.moonshot.ai/v1",
  models: [
    { id: "kimi-k2.5", contextWindow: 262_144 },
    { id: "kimi-k2-0905-preview", contextWindow: 262_144 },
    { id: "moonshot-v1-8k", contextWindow: 8_192 },
  ],
  checksModel: true,
  modelList() {
    return list(this.models, "moonshot", (model) => ({
      root: "",
      parent: "",
      permission: [],
      context_length: model.contextWindow,
      supports_reasoning: model.id.startsWith("kimi"),
    }));
  },
  unknownModel: (model) =>
    error(404, {
      error: { message: `Not found the model ${model} or Permission denied`, type: "resource_not_found_error" },
    }),
  overLimit: (model, maxTokens, prompt) =>
    prompt + (maxTokens ?? 1_024) <= model.contextWindow
      ? undefined
      : error(400, {
          error: {
            message: `Invalid request: Your request exceeded model token limit: ${model.contextWindow} (requested: ${prompt + (maxTokens ?? 1_024)})`,
            type: "invalid_request_error",
          },
        }),
  reasoning: "reasoning_content",
};

/** Z.ai (api/paas/v4): ids only; errors carry Zhipu's numeric codes. */
export const GLM: ServerShape = {
  name: "glm",
  preset: "glm",
  realBaseUrl: "https://api.z.ai/api/paas/v4",
  models: [
    { id: "glm-4.7", contextWindow: 200_000, maxOutputTokens: 128_000 },
    { id: "glm-4.6", contextWindow: 200_000, maxOutputTokens: 128_000 },
    { id: "glm-4.5-air", contextWindow: 128_000, maxOutputTokens: 96_000 },
  ],
  checksModel: true,
  modelList() {
    return list(this.models, "z-ai");
  },
  unknownModel: () => error(400, { error: { code: "1211", message: "Unknown Model, please check the model code." } }),
  overLimit: (model, maxTokens, prompt) => {
    if (maxTokens !== undefined && model.maxOutputTokens !== undefined && maxTokens > model.maxOutputTokens) {
      return error(400, { error: { code: "1214", message: "max_tokens参数非法。请检查文档。" } });
    }
    return prompt + (maxTokens ?? 0) > model.contextWindow
      ? error(400, { error: { code: "1261", message: "Prompt exceeds max length" } })
      : undefined;
  },
  reasoning: "reasoning_content",
};

/** MiniMax's OpenAI-compatible API has no model list; its reasoning stays inline in `<think>` tags. */
export const MINIMAX: ServerShape = {
  name: "minimax",
  preset: "minimax",
  realBaseUrl: "https://api.minimax.io/v1",
  models: [
    { id: "MiniMax-M2.7", contextWindow: 204_800, maxOutputTokens: 131_072 },
    { id: "MiniMax-M2.5", contextWindow: 204_800, maxOutputTokens: 131_072 },
  ],
  checksModel: true,
  modelList: () => undefined,
  unknownModel: (model) =>
    error(400, { error: { type: "bad_request_error", message: `invalid params, unknown model '${model}' (2013)` } }),
  overLimit: (model, maxTokens, prompt) =>
    (maxTokens ?? 0) > (model.maxOutputTokens ?? Infinity) || prompt + (maxTokens ?? 0) > model.contextWindow
      ? error(400, {
          error: { type: "bad_request_error", message: "invalid params, context window exceeds limit (2013)" },
        })
      : undefined,
  reasoning: "think-tags",
};

/** OpenRouter's list carries `context_length` and the top provider's `max_completion_tokens`. */
export const OPENROUTER: ServerShape = {
  name: "openrouter",
  preset: "openrouter",
  realBaseUrl: "https://openrouter.ai/api/v1",
  models: [
    { id: "qwen/qwen3-coder", contextWindow: 262_144, maxOutputTokens: 65_536 },
    { id: "z-ai/glm-4.6", contextWindow: 202_752, maxOutputTokens: 65_536 },
    { id: "anthropic/claude-sonnet-4.5", contextWindow: 1_000_000, maxOutputTokens: 64_000 },
  ],
  checksModel: true,
  modelList() {
    return {
      data: this.models.map((model) => ({
        id: model.id,
        canonical_slug: model.id,
        name: model.id,
        created,
        description: "",
        context_length: model.contextWindow,
        architecture: { modality: "text->text", input_modalities: ["text"], output_modalities: ["text"] },
        pricing: { prompt: "0.0000002", completion: "0.0000008" },
        top_provider: {
          context_length: model.contextWindow,
          max_completion_tokens: model.maxOutputTokens,
          is_moderated: false,
        },
        per_request_limits: null,
        supported_parameters: ["tools", "tool_choice", "reasoning", "max_tokens"],
      })),
    };
  },
  unknownModel: (model) => error(400, { error: { message: `${model} is not a valid model ID`, code: 400 } }),
  overLimit: (model, maxTokens, prompt) => {
    const output = maxTokens ?? 0;
    if (output <= (model.maxOutputTokens ?? Infinity) && prompt + output <= model.contextWindow) return undefined;
    return error(400, {
      error: {
        message: `This endpoint's maximum context length is ${model.contextWindow} tokens. However, you requested about ${prompt + output} tokens (${prompt} of text input, ${output} in the output). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.`,
        code: 400,
      },
    });
  },
  reasoning: "reasoning_details",
};
