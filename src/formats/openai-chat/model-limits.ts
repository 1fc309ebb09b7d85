import type { ModelLimits } from "../adapter.js";

/**
 * Context windows and output limits of hosted models, as their providers publish them: what Parley uses when the
 * server's own `/models` answer does not say (vLLM, SGLang, llama.cpp, Ollama and OpenRouter do; DeepSeek, Z.ai,
 * MiniMax, DashScope and NVIDIA's hosted catalogue do not). Keyed by provider, not by API format, so that an
 * Anthropic-format endpoint of the same provider reads the same figures. Where a source gives "8K" the figure is the
 * one the provider's own error messages state (8192); where it gives only a rounded "1M", the rounded figure is
 * kept, so that Parley never promises more than the provider serves.
 */

interface LimitRule extends ModelLimits {
  /** Glob over the upstream model id: `*` any run of characters. */
  match: string;
}

/** Provider keys: the preset ids of `compat.ts`, plus `qwen` (Alibaba DashScope), which has no preset of its own. */
export const MODEL_LIMITS: Readonly<Record<string, readonly LimitRule[]>> = {
  /**
   * api-docs.deepseek.com, Models & Pricing: deepseek-chat max output 8K (its 400 says "the valid range of max_tokens
   * is [1, 8192]"), deepseek-reasoner 64K, both 128K context; DeepSeek-V4 (April 2026): 1M context, 384K output.
   */
  deepseek: [
    { match: "deepseek-chat", contextWindow: 131_072, maxOutputTokens: 8_192 },
    { match: "deepseek-reasoner", contextWindow: 131_072, maxOutputTokens: 65_536 },
    { match: "deepseek-v4-*", contextWindow: 1_000_000, maxOutputTokens: 384_000 },
  ],
  /**
   * Moonshot's `/models` states `context_length` itself; these are for an answer without it. Kimi has no output
   * limit of its own: prompt and answer share the window ("exceeded model token limit: 262144").
   */
  kimi: [
    { match: "kimi-k2*", contextWindow: 262_144 },
    { match: "kimi-latest", contextWindow: 131_072 },
    { match: "moonshot-v1-8k*", contextWindow: 8_192 },
    { match: "moonshot-v1-32k*", contextWindow: 32_768 },
    { match: "moonshot-v1-128k*", contextWindow: 131_072 },
  ],
  /** docs.z.ai: GLM-4.5 128K context and 96K output; GLM-4.6, 4.7 and 5 200K context and 128K output. */
  glm: [
    { match: "glm-4.5*", contextWindow: 128_000, maxOutputTokens: 96_000 },
    { match: "glm-4.6*", contextWindow: 200_000, maxOutputTokens: 128_000 },
    { match: "glm-4.7*", contextWindow: 200_000, maxOutputTokens: 128_000 },
    { match: "glm-5*", contextWindow: 200_000, maxOutputTokens: 128_000 },
  ],
  /**
   * platform.minimax.io model table: the M2 series 204,800 tokens of context and 131,072 of output ("invalid params,
   * context window exceeds limit (2013)" past it); MiniMax-M3 announced at 1M, served at 512K (models.dev #2058).
   */
  minimax: [
    { match: "MiniMax-M2*", contextWindow: 204_800, maxOutputTokens: 131_072 },
    { match: "MiniMax-M3*", contextWindow: 512_000, maxOutputTokens: 128_000 },
  ],
  /** Alibaba Model Studio (DashScope compatible mode) model list. */
  qwen: [
    { match: "qwen3-coder-plus*", contextWindow: 1_000_000, maxOutputTokens: 65_536 },
    { match: "qwen3-coder-flash*", contextWindow: 1_000_000, maxOutputTokens: 65_536 },
    { match: "qwen3-max*", contextWindow: 262_144, maxOutputTokens: 65_536 },
  ],
  /**
   * build.nvidia.com model cards for the hosted catalogue, whose `/v1/models` lists ids only. NIM runs vLLM inside:
   * a self-hosted NIM states `max_model_len` itself.
   */
  "nvidia-nim": [
    { match: "openai/gpt-oss-*", contextWindow: 131_072 },
    { match: "moonshotai/kimi-k2*", contextWindow: 262_144 },
    { match: "qwen/qwen3-coder-480b-a35b-instruct", contextWindow: 262_144 },
    { match: "deepseek-ai/deepseek-v4-*", contextWindow: 1_000_000 },
    { match: "deepseek-ai/deepseek-v3.1*", contextWindow: 131_072 },
    { match: "z-ai/glm-4.7", contextWindow: 200_000 },
    { match: "z-ai/glm-5*", contextWindow: 200_000 },
    { match: "minimaxai/minimax-m2*", contextWindow: 204_800 },
  ],
};

/** Hosts of providers whose limits are known but that have no preset (their quirks are the generic server's). */
const HOST_PROVIDERS: Array<[RegExp, string]> = [[/dashscope(-intl)?\.aliyuncs\.com/, "qwen"]];

/** The provider key whose published limits apply: the preset's id, or one guessed from the host. */
export function limitsProviderKey(presetId: string, baseUrl: string): string {
  if (MODEL_LIMITS[presetId] !== undefined) return presetId;
  let host = baseUrl;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    // Not a URL: match the text as given.
  }
  for (const [pattern, key] of HOST_PROVIDERS) if (pattern.test(host)) return key;
  return presetId;
}

/** The published limits of `model` at `provider` (a key of `MODEL_LIMITS`), or undefined when none are known. */
export function publishedLimits(provider: string, model: string): ModelLimits | undefined {
  const rules = MODEL_LIMITS[provider];
  if (rules === undefined) return undefined;
  for (const rule of rules) {
    if (!matchesGlob(rule.match, model)) continue;
    const limits: ModelLimits = {};
    if (rule.contextWindow !== undefined) limits.contextWindow = rule.contextWindow;
    if (rule.maxOutputTokens !== undefined) limits.maxOutputTokens = rule.maxOutputTokens;
    return limits;
  }
  return undefined;
}

function matchesGlob(pattern: string, value: string): boolean {
  const star = pattern.indexOf("*");
  if (star === -1) return pattern === value;
  const source = pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
  return new RegExp(`^${source}$`, "s").test(value);
}
