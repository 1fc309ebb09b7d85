import { describe, expect, test } from "vitest";
import type { Usage } from "../core/index.js";
import { accumulate, parseSse } from "../stream/index.js";
import { createAnthropicStreamEncoder } from "./anthropic/stream-encoder.js";
import { anthropicUsageToCore, coreUsageToAnthropic } from "./anthropic/usage.js";
import { createGeminiStreamDecoder } from "./gemini/stream-decoder.js";
import { usageToCore as usageFromGemini, usageFromCore as usageToGemini } from "./gemini/usage.js";
import { createOpenAIStreamDecoder } from "./openai-chat/stream-decoder.js";
import { createOpenAIStreamEncoder } from "./openai-chat/stream-encoder.js";
import { usageFromOpenAI, usageToOpenAI } from "./openai-chat/usage.js";
import { usageFromResponses, usageToResponses } from "./openai-responses/status.js";

/**
 * Usage between the four formats (docs/gateway.md, "Usage", has the table): each figure the wire has goes to the
 * core's, once, and back; the prompt's total is the same everywhere (Anthropic's input excludes what was read from
 * or written to the cache, the others' prompt counts include it), reads and writes are never counted twice.
 */

/** A turn that read 800 prompt tokens from the cache, wrote 150 to it, sent 50 fresh, thought 30 of 90 output. */
const core: Usage = {
  inputTokens: 50,
  outputTokens: 90,
  cacheReadInputTokens: 800,
  cacheCreationInputTokens: 150,
  reasoningTokens: 30,
};
const promptTotal = 1000;

describe("each format's figures to the core's", () => {
  test("Anthropic: each figure as it is", () => {
    const { usage } = anthropicUsageToCore({
      input_tokens: 50,
      cache_creation_input_tokens: 150,
      cache_read_input_tokens: 800,
      output_tokens: 90,
      output_tokens_details: { thinking_tokens: 30 },
    });
    expect(usage).toEqual(core);
  });

  test("Chat Completions: cached and written tokens come out of prompt_tokens once", () => {
    expect(
      usageFromOpenAI({
        prompt_tokens: promptTotal,
        completion_tokens: 90,
        prompt_tokens_details: { cached_tokens: 800, cache_write_tokens: 150 },
        completion_tokens_details: { reasoning_tokens: 30 },
      }),
    ).toEqual(core);
    // DeepSeek's names, and Moonshot's (Kimi) top-level cached_tokens
    expect(usageFromOpenAI({ prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: 60 })).toEqual({
      inputTokens: 40,
      outputTokens: 5,
      cacheReadInputTokens: 60,
    });
    expect(usageFromOpenAI({ prompt_tokens: 100, completion_tokens: 5, cached_tokens: 70 })).toEqual({
      inputTokens: 30,
      outputTokens: 5,
      cacheReadInputTokens: 70,
    });
  });

  test("Responses: cached tokens come out of input_tokens once", () => {
    expect(
      usageFromResponses({
        input_tokens: 850,
        input_tokens_details: { cached_tokens: 800 },
        output_tokens: 90,
        output_tokens_details: { reasoning_tokens: 30 },
        total_tokens: 940,
      }),
    ).toEqual({ inputTokens: 50, outputTokens: 90, cacheReadInputTokens: 800, reasoningTokens: 30 });
  });

  test("Gemini: cached content out of the prompt, thoughts into the output", () => {
    expect(
      usageFromGemini({
        promptTokenCount: 850,
        cachedContentTokenCount: 800,
        candidatesTokenCount: 60,
        thoughtsTokenCount: 30,
        totalTokenCount: 940,
      }),
    ).toEqual({ inputTokens: 50, outputTokens: 90, cacheReadInputTokens: 800, reasoningTokens: 30 });
  });
});

describe("the core's figures in each format", () => {
  test("Anthropic: each figure as it is", () => {
    expect(coreUsageToAnthropic(core)).toEqual({
      input_tokens: 50,
      cache_creation_input_tokens: 150,
      cache_read_input_tokens: 800,
      output_tokens: 90,
      output_tokens_details: { thinking_tokens: 30 },
    });
  });

  test("Chat Completions: the prompt total, reads as cached_tokens, writes as cache_write_tokens", () => {
    const wire = usageToOpenAI(core);
    expect(wire).toEqual({
      prompt_tokens: promptTotal,
      completion_tokens: 90,
      total_tokens: promptTotal + 90,
      prompt_tokens_details: { cached_tokens: 800, cache_write_tokens: 150 },
      completion_tokens_details: { reasoning_tokens: 30 },
    });
    expect(usageFromOpenAI(wire)).toEqual(core);
  });

  test("Responses: the prompt total, reads as cached_tokens (writes have no field and stay in the total)", () => {
    expect(usageToResponses(core)).toEqual({
      input_tokens: promptTotal,
      input_tokens_details: { cached_tokens: 800 },
      output_tokens: 90,
      output_tokens_details: { reasoning_tokens: 30 },
      total_tokens: promptTotal + 90,
    });
  });

  test("Gemini: the prompt total, reads as cachedContentTokenCount, thoughts apart from the candidates", () => {
    expect(usageToGemini(core)).toEqual({
      promptTokenCount: promptTotal,
      cachedContentTokenCount: 800,
      candidatesTokenCount: 60,
      thoughtsTokenCount: 30,
      totalTokenCount: promptTotal + 90,
    });
  });

  test("every pair keeps the prompt total and the cache reads", () => {
    const toCore: Record<string, (usage: Usage) => Usage> = {
      anthropic: (usage) => anthropicUsageToCore(coreUsageToAnthropic(usage)).usage,
      openai: (usage) => usageFromOpenAI(usageToOpenAI(usage)),
      responses: (usage) => usageFromResponses(usageToResponses(usage)),
      gemini: (usage) => usageFromGemini(usageToGemini(usage)),
    };
    const total = (usage: Usage) =>
      usage.inputTokens + (usage.cacheReadInputTokens ?? 0) + (usage.cacheCreationInputTokens ?? 0);
    for (const [from, first] of Object.entries(toCore))
      for (const [to, second] of Object.entries(toCore)) {
        const carried = second(first(core));
        expect(total(carried), `${from} -> ${to}`).toBe(promptTotal);
        expect(carried.cacheReadInputTokens, `${from} -> ${to}`).toBe(800);
        expect(carried.outputTokens, `${from} -> ${to}`).toBe(90);
        expect(carried.reasoningTokens, `${from} -> ${to}`).toBe(30);
      }
  });
});

describe("streamed usage", () => {
  test("a Chat stream's final usage chunk, cache figures included, reaches a Chat client that asked for it", () => {
    const chunk = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
    const usage = {
      prompt_tokens: 1000,
      completion_tokens: 90,
      total_tokens: 1090,
      prompt_tokens_details: { cached_tokens: 800, cache_write_tokens: 150 },
      completion_tokens_details: { reasoning_tokens: 30 },
    };
    const upstream = [
      { ...chunk, choices: [{ index: 0, delta: { role: "assistant", content: "ok" }, finish_reason: null }] },
      { ...chunk, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
      {
        ...chunk,
        choices: [],
        usage,
      },
    ];
    const decoder = createOpenAIStreamDecoder();
    const sse = `${upstream.map((entry) => `data: ${JSON.stringify(entry)}\n\n`).join("")}data: [DONE]\n\n`;
    const events = [...parseSse(sse).flatMap((message) => decoder.push(message)), ...decoder.finish()];
    expect(accumulate(events).usage).toEqual(core);
    const encoder = createOpenAIStreamEncoder({ model: "m", includeUsage: true });
    const text = events.map((event) => encoder.encode(event)).join("");
    const last = parseSse(text)
      .filter((event) => event.data !== "[DONE]")
      .map((event) => JSON.parse(event.data) as { usage?: unknown })
      .at(-1);
    expect(last?.usage).toEqual(usage);
  });

  /** An Anthropic client's view of a stream: its `message_start` usage and its `message_delta` usage. */
  const anthropicUsage = (events: ReturnType<typeof decodeGemini>) => {
    const encoder = createAnthropicStreamEncoder({ model: "claude-x" });
    const data = parseSse(events.map((event) => encoder.encode(event)).join("")).map(
      (event) => JSON.parse(event.data) as { type: string; message?: { usage: unknown }; usage?: unknown },
    );
    return {
      start: data.find((event) => event.type === "message_start")?.message?.usage,
      delta: data.find((event) => event.type === "message_delta")?.usage,
    };
  };
  const decodeGemini = (chunks: unknown[]) => {
    const decoder = createGeminiStreamDecoder();
    const sse = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("");
    return [...parseSse(sse).flatMap((message) => decoder.push(message)), ...decoder.finish()];
  };
  const decodeChat = (chunks: unknown[]) => {
    const decoder = createOpenAIStreamDecoder();
    const sse = `${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("")}data: [DONE]\n\n`;
    return [...parseSse(sse).flatMap((message) => decoder.push(message)), ...decoder.finish()];
  };

  test("Gemini counts the prompt on every chunk: an Anthropic client's message_start has the input and cache figures, message_delta the final ones", () => {
    const prompt = { promptTokenCount: 1000, cachedContentTokenCount: 800 };
    const text = (value: string, extra: object = {}) => ({
      candidates: [{ content: { role: "model", parts: [{ text: value }] }, index: 0, ...extra }],
      modelVersion: "gemini-3-pro-preview",
      responseId: "r1",
    });
    const events = decodeGemini([
      { ...text("Hel"), usageMetadata: { ...prompt, totalTokenCount: 1000 } },
      {
        ...text("lo", { finishReason: "STOP" }),
        usageMetadata: { ...prompt, candidatesTokenCount: 90, thoughtsTokenCount: 30, totalTokenCount: 1120 },
      },
    ]);
    expect(events[0]).toEqual({
      type: "message-start",
      id: "r1",
      model: "gemini-3-pro-preview",
      usage: { inputTokens: 200, cacheReadInputTokens: 800 },
    });
    expect(anthropicUsage(events)).toEqual({
      start: { input_tokens: 200, cache_read_input_tokens: 800, output_tokens: 1 },
      delta: {
        input_tokens: 200,
        cache_read_input_tokens: 800,
        output_tokens: 120,
        output_tokens_details: { thinking_tokens: 30 },
      },
    });
    // A first chunk without usage leaves the start without it (the gateway's estimate stands in).
    expect(decodeGemini([text("Hi", { finishReason: "STOP" })])[0]).not.toHaveProperty("usage");
  });

  test("a Chat server that sends usage on every chunk gives an Anthropic client the prompt figures in message_start", () => {
    const chunk = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
    const early = {
      prompt_tokens: 1000,
      completion_tokens: 0,
      total_tokens: 1000,
      prompt_tokens_details: { cached_tokens: 800, cache_write_tokens: 150 },
    };
    const final = {
      ...early,
      completion_tokens: 90,
      total_tokens: 1090,
      completion_tokens_details: { reasoning_tokens: 30 },
    };
    const events = decodeChat([
      {
        ...chunk,
        choices: [{ index: 0, delta: { role: "assistant", content: "o" }, finish_reason: null }],
        usage: early,
      },
      { ...chunk, choices: [{ index: 0, delta: { content: "k" }, finish_reason: "stop" }], usage: final },
    ]);
    expect(anthropicUsage(events)).toEqual({
      start: { input_tokens: 50, cache_creation_input_tokens: 150, cache_read_input_tokens: 800, output_tokens: 1 },
      delta: {
        input_tokens: 50,
        cache_creation_input_tokens: 150,
        cache_read_input_tokens: 800,
        output_tokens: 90,
        output_tokens_details: { thinking_tokens: 30 },
      },
    });
  });

  test("a Chat server that sends usage only at the end gives the final figures in message_delta, none in message_start", () => {
    const chunk = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
    const events = decodeChat([
      {
        ...chunk,
        choices: [{ index: 0, delta: { role: "assistant", content: "ok" }, finish_reason: null }],
        usage: null,
      },
      { ...chunk, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null },
      {
        ...chunk,
        choices: [],
        usage: {
          prompt_tokens: 1000,
          completion_tokens: 9,
          total_tokens: 1009,
          prompt_tokens_details: { cached_tokens: 800 },
        },
      },
    ]);
    expect(events[0]).toEqual({ type: "message-start", id: "c", model: "m" });
    expect(anthropicUsage(events)).toEqual({
      start: { input_tokens: 0, output_tokens: 1 },
      delta: { input_tokens: 200, cache_read_input_tokens: 800, output_tokens: 9 },
    });
  });
});
