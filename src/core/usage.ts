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
