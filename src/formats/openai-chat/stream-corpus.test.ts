import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { ConversationResponse, StreamEvent } from "../../core/index.js";
import { foldEvents } from "../../stream/accumulate.js";
import { SseDecoder } from "../../stream/sse.js";
import { createOpenAIStreamDecoder } from "./stream-decoder.js";
import { rebuildResponse } from "./test-support/chunks.js";
import { openaiResponseToCore } from "./to-core.js";
import type { OpenAIMessage } from "./wire-types.js";

const fixtures = new URL("../../../test/fixtures/", import.meta.url);
const folders = [
  "alibaba",
  "anthropic-openai-compat",
  "avian",
  "azure",
  "cerebras",
  "deepseek",
  "groq",
  "huggingface",
].concat(["llamacpp", "mistral", "openai", "openrouter", "vercel-gateway", "xai", "zai"]);
const files = folders.flatMap((folder) =>
  readdirSync(new URL(`${folder}/`, fixtures)).map((name) => `${folder}/${name}`),
);
const read = (file: string) => readFileSync(new URL(file, fixtures), "utf8");

/** Each stream as SSE text; a `.chunks.jsonl` holds the data lines alone (cerebras' holds two answers). */
function streamsOf(file: string): string[] {
  const text = read(file);
  if (file.endsWith(".sse")) return [text];
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  const starts = lines.flatMap((line, index) =>
    index > 0 && JSON.parse(line).choices?.[0]?.delta?.role ? [index] : [],
  );
  const cut =
    file.startsWith("cerebras/") && starts[0] !== undefined
      ? [lines.slice(0, starts[0]), lines.slice(starts[0])]
      : [lines];
  return cut.map((group) => group.map((line) => `data: ${line}\n\n`).join(""));
}

function decode(pieces: Array<string | Uint8Array>): StreamEvent[] {
  const sse = new SseDecoder();
  const decoder = createOpenAIStreamDecoder();
  const events: StreamEvent[] = [];
  for (const piece of pieces) for (const message of sse.push(piece)) events.push(...decoder.push(message));
  for (const message of sse.finish()) events.push(...decoder.push(message));
  events.push(...decoder.finish());
  return events;
}

function dataChunks(sse: string): unknown[] {
  const out: unknown[] = [];
  const decoder = new SseDecoder();
  for (const message of [...decoder.push(sse), ...decoder.finish()]) {
    if (message.data !== "[DONE]" && message.event !== "error") out.push(JSON.parse(message.data));
  }
  return out;
}

/** What the wire said, independent of the decoder: reasoning and answer text, tool calls, usage. */
function wireTotals(chunks: unknown[]) {
  const whole = rebuildResponse(chunks);
  const message: OpenAIMessage = whole.choices[0]?.message ?? { role: "assistant" };
  const contentText = Array.isArray(message.content)
    ? message.content.map((part) => (typeof part.text === "string" ? part.text : thinkingText(part.thinking))).join("")
    : (message.content ?? "");
  const reasoning = message.reasoning_content ?? message.reasoning ?? "";
  const toolCalls = message.tool_calls ?? [];
  // Whitespace alone beside reasoning or tool calls opens no text block (Avian sends some after its calls).
  const answerText = contentText.trim() === "" && (reasoning !== "" || toolCalls.length > 0) ? "" : contentText;
  return { whole, text: (reasoning + answerText).replace(/<\/?think>/g, ""), toolCalls };
}

function thinkingText(thinking: unknown): string {
  return Array.isArray(thinking) ? thinking.map((item: { text?: string }) => item.text ?? "").join("") : "";
}

function carried(response: ConversationResponse) {
  let text = "";
  const toolCalls: Array<{ id: string; name: string; input: unknown }> = [];
  for (const part of response.message.parts) {
    if (part.type === "text") text += part.text;
    else if (part.type === "thinking") text += part.thinking;
    else if (part.type === "tool_call") toolCalls.push({ id: part.id, name: part.name, input: part.input });
  }
  return { text, toolCalls };
}

/**
 * Streams that send something after a tool call (Vercel's Gemini: encrypted reasoning details; Avian: a
 * whitespace content delta). The stream keeps that order; a whole response cannot say it, so these two
 * paths differ there by design. Whitespace alone after the calls opens no text block: it goes, where the
 * whole answer has it at the end of its text (and nowhere when that text is whitespace alone too).
 */
const detailsAfterToolCall = new Set([
  "vercel-gateway/gemini-3-pro-thinking-tool-call.sse",
  "avian/kimi-k2.5-parallel-tools.sse",
]);

const streamFiles = files.filter((file) => file.endsWith(".sse") || file.endsWith(".chunks.jsonl"));

describe("every OpenAI-format corpus stream", () => {
  test.each(streamFiles)("%s decodes without losing reasoning, text, tool calls or usage", (file) => {
    for (const sse of streamsOf(file)) {
      const events = decode([sse]);
      // Some recorded streams end in an upstream error: what came before it is read all the same.
      const streamed = foldEvents(events).answer;
      const wire = wireTotals(dataChunks(sse));
      const got = carried(streamed);
      if (detailsAfterToolCall.has(file)) expect(got.text.trimEnd()).toBe(wire.text.trimEnd());
      else expect(got.text).toBe(wire.text);
      expect(got.toolCalls).toEqual(
        wire.toolCalls.map((call: { id: string; function: { name: string; arguments: string } }) => ({
          id: call.id,
          name: call.function.name,
          input: call.function.arguments === "" ? {} : JSON.parse(call.function.arguments),
        })),
      );
      const last = events[events.length - 1]!;
      if (last.type === "finish" && wire.whole.usage) {
        expect(last.usage.outputTokens).toBe(wire.whole.usage.completion_tokens);
        expect(last.usage.inputTokens + (last.usage.cacheReadInputTokens ?? 0)).toBe(wire.whole.usage.prompt_tokens);
      }
      if (!detailsAfterToolCall.has(file)) {
        const whole = openaiResponseToCore(wire.whole).value;
        expect(streamed.message).toEqual(whole.message);
        if (last.type === "finish") expect({ ...streamed, extra: undefined }).toEqual({ ...whole, extra: undefined });
      }
    }
  });

  test.each(streamFiles)("%s gives the same answer however its bytes are cut", (file) => {
    const sse = streamsOf(file)[0]!;
    const bytes = new TextEncoder().encode(sse);
    const reference = foldEvents(decode([bytes]));
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, bytes.length - 1) }), { maxLength: 40 }),
        (cuts) => {
          const sorted = [...cuts].sort((a, b) => a - b);
          const pieces = [0, ...sorted].map((start, index) => bytes.slice(start, sorted[index] ?? bytes.length));
          expect(foldEvents(decode(pieces))).toEqual(reference);
        },
      ),
      { numRuns: 15 },
    );
  });
});

describe("every OpenAI-format corpus body", () => {
  test.each(files.filter((file) => file.endsWith(".json")))("%s converts", (file) => {
    const body = JSON.parse(read(file));
    if (body.error !== undefined || body.choices === undefined) return;
    const { value } = openaiResponseToCore(body);
    const message = body.choices[0].message;
    const got = carried(value);
    const reasoning = message.reasoning_content ?? message.reasoning ?? "";
    expect(got.text).toBe((reasoning + (message.content ?? "")).replace(/<\/?think>/g, ""));
    expect(got.toolCalls.map((call) => call.id)).toEqual(
      (message.tool_calls ?? []).map((call: { id: string }) => call.id),
    );
    expect(value.usage.outputTokens).toBe(body.usage.completion_tokens);
  });
});
