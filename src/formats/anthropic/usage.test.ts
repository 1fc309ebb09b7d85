import { describe, expect, test } from "vitest";
import { anthropicStopReasonFromCore, mapAnthropicStopReason } from "./map-stop-reason.js";
import { anthropicUsageToCore, coreUsageToAnthropic, partialAnthropicUsageToCore } from "./usage.js";

describe("usage", () => {
  test("cache counts map apart from input tokens, unmapped fields are kept", () => {
    const wire = {
      input_tokens: 10,
      cache_creation_input_tokens: 5,
      cache_read_input_tokens: 100,
      cache_creation: { ephemeral_5m_input_tokens: 5 },
      output_tokens: 7,
      service_tier: "standard",
      output_tokens_details: { thinking_tokens: 3 },
    };
    const { usage, rest } = anthropicUsageToCore(wire);
    expect(usage).toEqual({
      inputTokens: 10,
      outputTokens: 7,
      cacheReadInputTokens: 100,
      cacheCreationInputTokens: 5,
      reasoningTokens: 3,
    });
    expect(rest).toEqual({ cache_creation: { ephemeral_5m_input_tokens: 5 }, service_tier: "standard" });
    expect(coreUsageToAnthropic(usage, rest)).toEqual(wire);
  });

  test("null counts and richer details stay raw; a partial usage knows only what it was told", () => {
    const wire = {
      input_tokens: 1,
      output_tokens: 2,
      cache_read_input_tokens: null,
      output_tokens_details: { thinking_tokens: 1, other: 2 },
    };
    const { usage, rest } = anthropicUsageToCore(wire);
    expect(usage).toEqual({ inputTokens: 1, outputTokens: 2 });
    expect(coreUsageToAnthropic(usage, rest)).toEqual(wire);
    expect(partialAnthropicUsageToCore({ output_tokens: 9 })).toEqual({ outputTokens: 9 });
    expect(anthropicUsageToCore(undefined).usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });
});

describe("stop reason", () => {
  test("known values map to themselves, unknown ones to other with the raw value kept", () => {
    for (const raw of [
      "end_turn",
      "max_tokens",
      "stop_sequence",
      "tool_use",
      "pause_turn",
      "refusal",
      "model_context_window_exceeded",
    ])
      expect(mapAnthropicStopReason(raw)).toEqual({ unified: raw, raw });
    expect(mapAnthropicStopReason("compaction")).toEqual({ unified: "other", raw: "compaction" });
    expect(mapAnthropicStopReason(null)).toEqual({ unified: "other", raw: null });
    expect(anthropicStopReasonFromCore({ unified: "tool_use", raw: "tool_calls" })).toBe("tool_use");
    expect(anthropicStopReasonFromCore({ unified: "other", raw: "compaction" })).toBe("compaction");
  });
});
