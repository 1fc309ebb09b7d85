import type { Usage } from "../../core/usage.js";
import type { AnthropicUnknownFields, AnthropicUsage } from "./wire-types.js";

const MAPPED_KEYS = new Set([
  "input_tokens",
  "output_tokens",
  "cache_creation_input_tokens",
  "cache_read_input_tokens",
]);

/** Anthropic usage as the core `Usage`, and the fields it does not map (`cache_creation`, `service_tier`...). */
export function anthropicUsageToCore(wire: AnthropicUsage | null | undefined): {
  usage: Usage;
  rest: AnthropicUnknownFields;
} {
  const usage = partialAnthropicUsageToCore(wire);
  const rest: AnthropicUnknownFields = {};
  if (wire) {
    for (const key in wire) {
      // a count the core took is mapped; a null or odd value stays as received
      if (MAPPED_KEYS.has(key) && typeof wire[key] === "number") continue;
      if (key === "output_tokens_details" && usage.reasoningTokens !== undefined) continue;
      rest[key] = wire[key];
    }
  }
  return { usage: { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0, ...usage }, rest };
}

/**
 * Only the counts the wire actually carries: `message_start` knows input tokens, `message_delta` restates
 * what it likes. `output_tokens_details.thinking_tokens` maps to `reasoningTokens` only when it is the sole
 * detail, so that the response round-trips.
 */
export function partialAnthropicUsageToCore(wire: AnthropicUsage | null | undefined): Partial<Usage> {
  const usage: Partial<Usage> = {};
  if (!wire) return usage;
  if (typeof wire.input_tokens === "number") usage.inputTokens = wire.input_tokens;
  if (typeof wire.output_tokens === "number") usage.outputTokens = wire.output_tokens;
  if (typeof wire.cache_read_input_tokens === "number") usage.cacheReadInputTokens = wire.cache_read_input_tokens;
  if (typeof wire.cache_creation_input_tokens === "number")
    usage.cacheCreationInputTokens = wire.cache_creation_input_tokens;
  const details = wire.output_tokens_details;
  if (details && typeof details.thinking_tokens === "number" && Object.keys(details).length === 1)
    usage.reasoningTokens = details.thinking_tokens;
  return usage;
}

/** Core usage on the wire, in Anthropic's key order, with the unmapped fields after. */
export function coreUsageToAnthropic(usage: Partial<Usage>, rest?: AnthropicUnknownFields): AnthropicUsage {
  const wire: AnthropicUsage = {};
  if (usage.inputTokens !== undefined) wire.input_tokens = usage.inputTokens;
  if (usage.cacheCreationInputTokens !== undefined) wire.cache_creation_input_tokens = usage.cacheCreationInputTokens;
  if (usage.cacheReadInputTokens !== undefined) wire.cache_read_input_tokens = usage.cacheReadInputTokens;
  if (rest) Object.assign(wire, rest);
  if (usage.outputTokens !== undefined) wire.output_tokens = usage.outputTokens;
  if (usage.reasoningTokens !== undefined) wire.output_tokens_details = { thinking_tokens: usage.reasoningTokens };
  return wire;
}
