import type { Usage } from "../../core/index.js";
import type { GeminiUsage } from "./wire-types.js";

/**
 * `usageMetadata` and the core's accounting: Gemini's `promptTokenCount` includes cached tokens
 * (`cachedContentTokenCount`), the core's `inputTokens` does not; `candidatesTokenCount` leaves out the thoughts
 * (`thoughtsTokenCount`), the core's `outputTokens` includes them. Tool-use prompt tokens are prompt.
 */
export function usageToCore(usage: GeminiUsage | undefined): Usage {
  const prompt = count(usage?.promptTokenCount) + count(usage?.toolUsePromptTokenCount);
  const cached = count(usage?.cachedContentTokenCount);
  const thoughts = count(usage?.thoughtsTokenCount);
  const out: Usage = {
    inputTokens: Math.max(0, prompt - cached),
    outputTokens: count(usage?.candidatesTokenCount) + thoughts,
  };
  if (cached > 0) out.cacheReadInputTokens = cached;
  if (thoughts > 0) out.reasoningTokens = thoughts;
  return out;
}

/** Core usage as `usageMetadata`: the prompt counts every input token, the cached count only those read. */
export function usageFromCore(usage: Usage): GeminiUsage {
  const cached = usage.cacheReadInputTokens ?? 0;
  const prompt = usage.inputTokens + cached + (usage.cacheCreationInputTokens ?? 0);
  const thoughts = usage.reasoningTokens ?? 0;
  const out: GeminiUsage = {
    promptTokenCount: prompt,
    candidatesTokenCount: Math.max(0, usage.outputTokens - thoughts),
    totalTokenCount: prompt + usage.outputTokens,
  };
  if (thoughts > 0) out.thoughtsTokenCount = thoughts;
  if (cached > 0) out.cachedContentTokenCount = cached;
  return out;
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}
