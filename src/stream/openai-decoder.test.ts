import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import type { StreamEvent } from "../core/index.js";
import { accumulate } from "./accumulate.js";
import { createOpenAIStreamDecoder, type OpenAIDecodeOptions } from "./openai-decoder.js";
import { parseSse } from "./sse.js";

const scripted = (name: string) =>
  readFileSync(new URL(`../../test/fixtures/scripted/${name}`, import.meta.url), "utf8");

function run(sse: string, options?: OpenAIDecodeOptions): StreamEvent[] {
  const decoder = createOpenAIStreamDecoder(options);
  return [...parseSse(sse).flatMap((message) => decoder.push(message)), ...decoder.finish()];
}

const chunk = (delta: object, extra: object = {}) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;

function shape(events: StreamEvent[]) {
  return accumulate(events).message.parts.map((part) => {
    if (part.type === "text") return ["text", part.text];
    if (part.type === "thinking") return ["thinking", part.thinking];
    if (part.type === "tool_call") return ["tool", part.id, part.name, part.input];
    return [part.type];
  });
}

describe("OpenAI stream decoder", () => {
  test("think tags cut across chunks, Chinese text: thinking then text", () => {
    const sse = ["<think>用户", "用中文说", "</think>", "\n\n", "你好"].map((content) => chunk({ content })).join("");
    expect(shape(run(`${sse}data: [DONE]\n\n`))).toEqual([
      ["thinking", "用户用中文说"],
      ["text", "\n\n你好"],
    ]);
  });

  test("inline think blocks interleaved with text stay in order; an unclosed one ends as thinking", () => {
    const sse = ["<th", "ink>a</think>m<think>", "b</think>", "<think>c"].map((content) => chunk({ content })).join("");
    expect(shape(run(sse))).toEqual([
      ["thinking", "a"],
      ["text", "m"],
      ["thinking", "b"],
      ["thinking", "c"],
    ]);
  });

  test("a reasoning field comes first and content is then plain text", () => {
    const events = run(scripted("openai-vllm-reasoning.sse"), { provider: "vllm" });
    const response = accumulate(events);
    expect(shape(events)).toEqual([
      ["thinking", "The user wants a greeting."],
      ["text", "Hello!"],
    ]);
    const thinking = response.message.parts[0];
    expect(thinking?.type === "thinking" && thinking.origin).toEqual({
      format: "openai",
      provider: "vllm",
      field: "reasoning",
      model: "Qwen/Qwen3-8B",
    });
    expect(response.usage).toEqual({ inputTokens: 12, outputTokens: 9 });
    expect(response.stopReason).toEqual({ unified: "end_turn", raw: "stop" });
  });

  test("Ollama-style parallel calls sharing index 0 are two calls", () => {
    const events = run(scripted("openai-ollama-parallel-index0.sse"));
    expect(shape(events)).toEqual([
      ["tool", "call_a1", "get_weather", { city: "Paris" }],
      ["tool", "call_b2", "get_time", { zone: "CET" }],
    ]);
    expect(accumulate(events).stopReason.unified).toBe("tool_use");
  });

  test("a continuation that repeats type and sends name '' does not rename; first index may be 1", () => {
    const sse =
      chunk({ tool_calls: [{ index: 1, id: "t1", type: "function", function: { name: "search", arguments: "" } }] }) +
      chunk({ tool_calls: [{ index: 1, type: "function", function: { name: "", arguments: '{"q":' } }] }) +
      chunk({ tool_calls: [{ index: 1, function: { arguments: '"x"}' } }] });
    expect(shape(run(sse))).toEqual([["tool", "t1", "search", { q: "x" }]]);
  });

  test("MiniMax inline think then a text tool call", () => {
    const events = run(scripted("openai-minimax-inline-think-tool-call.sse"), { textToolCalls: "minimax" });
    const parts = shape(events);
    expect(parts[0]).toEqual(["thinking", "Need the weather."]);
    expect(parts.find((part) => part[0] === "tool")?.slice(2)).toEqual(["get_weather", { city: "Paris" }]);
  });

  test("GLM tool call emitted as text becomes a tool call after the prose", () => {
    const parts = shape(run(scripted("openai-glm-text-tool-call.sse"), { textToolCalls: "glm" }));
    expect(parts[0]).toEqual(["text", "Let me check."]);
    expect(parts[1]?.slice(2)).toEqual(["get_weather", { city: "Paris" }]);
  });

  test("a text tool call recovered from a reply that finished with 'stop' ends as tool_use", () => {
    const stop = `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`;
    const sse = `${chunk({ content: "Let me check." })}${stop}`;
    const glm = run(scripted("openai-glm-text-tool-call.sse"), { textToolCalls: "glm" });
    expect(accumulate(glm).stopReason).toEqual({ unified: "tool_use", raw: "stop" });
    // Without a recovered call the same finish stays end_turn.
    expect(accumulate(run(`${sse}data: [DONE]\n\n`, { textToolCalls: "glm" })).stopReason.unified).toBe("end_turn");
  });

  test("a body that ends with neither [DONE] nor a finish_reason ends with an error, keeping what came", () => {
    const events = run(chunk({ content: "Partial" }));
    expect(events.at(-1)).toMatchObject({ type: "error", error: { type: "api_error" } });
    expect(events.some((event) => event.type === "finish")).toBe(false);
    expect(shape(events)).toEqual([["text", "Partial"]]);
    // A finish_reason without [DONE] (some servers omit it) is a complete answer.
    const stop = `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`;
    expect(run(chunk({ content: "Whole" }) + stop).at(-1)).toMatchObject({ type: "finish" });
  });

  test("an error chunk mid-stream ends the stream with an error event", () => {
    const events = run(scripted("openai-error-midstream.sse"));
    expect(events[events.length - 1]).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "upstream overloaded", status: 503 },
    });
    expect(events.filter((event) => event.type === "finish")).toEqual([]);
    expect(shape(events)).toEqual([["text", "Partial ans"]]);
  });

  test("an SSE error event maps its status", () => {
    const events = run(
      `${chunk({ content: "a" })}event: error\ndata: {"error":{"message":"slow down","type":"rate_limit_exceeded"}}\n\n`,
    );
    expect(events.at(-1)).toEqual({
      type: "error",
      error: { type: "rate_limit_error", message: "slow down", status: 429 },
    });
  });

  test("usage on the finish chunk, in x_groq, and cached tokens", () => {
    const finish = `data: ${JSON.stringify({ id: "c", model: "m", choices: [{ index: 0, delta: {}, finish_reason: "length" }], x_groq: { usage: { prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 60 } } } })}\n\n`;
    const events = run(chunk({ content: "x" }) + finish);
    expect(events.at(-1)).toEqual({
      type: "finish",
      stopReason: { unified: "max_tokens", raw: "length" },
      usage: { inputTokens: 40, outputTokens: 7, cacheReadInputTokens: 60 },
    });
  });

  test("reasoning and reasoning_details with the same text are read once", () => {
    const sse =
      chunk({ reasoning: "abc", reasoning_details: [{ type: "reasoning.text", text: "abc", index: 0 }] }) +
      chunk({ content: "ok" });
    expect(shape(run(sse))).toEqual([
      ["thinking", "abc"],
      ["text", "ok"],
    ]);
  });

  test("unknown finish_reason maps to other with the raw value kept", () => {
    const sse = `data: ${JSON.stringify({ id: "c", model: "m", choices: [{ index: 0, delta: { content: "a" }, finish_reason: "eos_token" }] })}\n\n`;
    expect(accumulate(run(sse)).stopReason).toEqual({ unified: "other", raw: "eos_token" });
  });
});
