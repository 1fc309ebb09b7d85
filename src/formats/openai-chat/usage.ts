import type { Usage } from "../../core/index.js";
import type { OpenAIUsage } from "./wire-types.js";

/**
 * OpenAI usage -> core usage. `prompt_tokens` includes the tokens read from the cache and those written to it
 * (OpenRouter's `cache_write_tokens`); core `inputTokens` includes neither, so both are subtracted here, once.
 * DeepSeek reports the cache as `prompt_cache_hit_tokens`, Moonshot (Kimi) as a top-level `cached_tokens`.
 */
export function usageFromOpenAI(usage: OpenAIUsage | null | undefined): Usage {
  if (!usage) return { inputTokens: 0, outputTokens: 0 };
  const prompt = numberOr(usage.prompt_tokens, 0);
  const cached = numberOr(
    usage.prompt_tokens_details?.cached_tokens,
    numberOr(usage.prompt_cache_hit_tokens, numberOr(usage.cached_tokens, 0)),
  );
  const written = numberOr(usage.prompt_tokens_details?.cache_write_tokens, 0);
  const out: Usage = {
    inputTokens: Math.max(0, prompt - cached - written),
    outputTokens: numberOr(usage.completion_tokens, 0),
  };
  if (cached > 0) out.cacheReadInputTokens = cached;
  if (written > 0) out.cacheCreationInputTokens = written;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === "number" && reasoning > 0) out.reasoningTokens = reasoning;
  return out;
}

/** Core usage -> OpenAI usage: the prompt total puts the cached tokens back. */
export function usageToOpenAI(usage: Usage): OpenAIUsage {
  const cached = usage.cacheReadInputTokens ?? 0;
  const written = usage.cacheCreationInputTokens ?? 0;
  const prompt = usage.inputTokens + cached + written;
  const out: OpenAIUsage = {
    prompt_tokens: prompt,
    completion_tokens: usage.outputTokens,
    total_tokens: prompt + usage.outputTokens,
  };
  if (cached > 0 || written > 0) {
    out.prompt_tokens_details = { cached_tokens: cached, ...(written > 0 ? { cache_write_tokens: written } : {}) };
  }
  if (usage.reasoningTokens !== undefined) out.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens };
  return out;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}
