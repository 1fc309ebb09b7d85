/**
 * Token usage with Anthropic's accounting: `inputTokens` excludes cached tokens, so the total prompt is
 * `inputTokens + cacheReadInputTokens + cacheCreationInputTokens`. OpenAI's `prompt_tokens` is that total,
 * and `cached_tokens` a subset of it: the codecs convert once, at the edge, and never subtract twice.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
  /** Reasoning tokens, already included in `outputTokens`. */
  reasoningTokens?: number;
}

/**
 * What of a usage is known before the answer: the prompt's counts (fresh input, cache reads, cache writes), for a
 * stream's start when the upstream gives them there (Gemini's `usageMetadata` on every chunk). Undefined when it
 * counted no prompt, so that the gateway's estimate stands in.
 */
export function promptUsage(usage: Usage): Partial<Usage> | undefined {
  const read = usage.cacheReadInputTokens ?? 0;
  const written = usage.cacheCreationInputTokens ?? 0;
  if (usage.inputTokens + read + written <= 0) return undefined;
  const prompt: Partial<Usage> = { inputTokens: usage.inputTokens };
  if (read > 0) prompt.cacheReadInputTokens = read;
  if (written > 0) prompt.cacheCreationInputTokens = written;
  return prompt;
}
