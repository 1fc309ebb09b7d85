import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import type { StreamEvent } from "../../core/index.js";
import { accumulate } from "../../stream/accumulate.js";
import { parseSse } from "../../stream/sse.js";
import { coreToOpenAIResponse } from "./from-core.js";
import { createOpenAIStreamDecoder } from "./stream-decoder.js";
import { createOpenAIStreamEncoder } from "./stream-encoder.js";

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/${name}`, import.meta.url), "utf8");

function decode(sse: string): StreamEvent[] {
  const decoder = createOpenAIStreamDecoder();
  return [...parseSse(sse).flatMap((message) => decoder.push(message)), ...decoder.finish()];
}

function encode(events: StreamEvent[], reasoning: "think-tags" | "reasoning_content" | "reasoning"): string {
  const encoder = createOpenAIStreamEncoder({
    model: "client-model",
    id: "chatcmpl-1",
    created: 1,
    reasoning,
    includeUsage: true,
  });
  return events.map((event) => encoder.encode(event)).join("") + encoder.done();
}

function visible(events: StreamEvent[]) {
  const response = accumulate(events);
  return {
    parts: response.message.parts.map((part) =>
      part.type === "thinking"
        ? { thinking: part.thinking }
        : part.type === "text"
          ? { text: part.text }
          : part.type === "tool_call"
            ? { id: part.id, name: part.name, input: part.input }
            : part.type,
    ),
    stopReason: response.stopReason.unified,
    usage: response.usage,
  };
}

describe("OpenAI stream encoder", () => {
  test.each([
    ["openrouter/kimi-k2.5-parallel-tools.sse", "reasoning"],
    ["zai/glm-4.7-flash-thinking-tool-call.sse", "reasoning_content"],
    ["deepseek/deepseek-reasoner-thinking.sse", "think-tags"],
    ["openai/gpt-5-parallel-tools.sse", "reasoning_content"],
  ] as const)("%s re-decodes to the same answer (%s)", (file, mode) => {
    const events = decode(fixture(file));
    expect(visible(decode(encode(events, mode)))).toEqual(visible(events));
  });

  test("tool call id and name only in the first delta; error and [DONE] framing", () => {
    const encoder = createOpenAIStreamEncoder({ model: "m", id: "x", created: 1 });
    const lines = [
      encoder.encode({ type: "message-start", id: "up", model: "u" }),
      encoder.encode({ type: "block-start", index: 0, part: { type: "tool_call", id: "c1", name: "f", input: {} } }),
      encoder.encode({ type: "tool-input-delta", index: 0, partialJson: '{"a"' }),
      encoder.encode({ type: "tool-input-delta", index: 0, partialJson: ":1}" }),
      encoder.encode({ type: "error", error: { type: "overloaded_error", message: "busy", status: 529 } }),
    ];
    const chunks = lines.slice(1, 4).map((line) => JSON.parse(line.slice("data: ".length)));
    expect(chunks[0].choices[0].delta.tool_calls[0]).toEqual({
      index: 0,
      id: "c1",
      type: "function",
      function: { name: "f", arguments: "" },
    });
    expect(chunks[1].choices[0].delta.tool_calls[0]).toEqual({ index: 0, function: { arguments: '{"a"' } });
    expect(lines[4]).toBe('data: {"error":{"message":"busy","type":"overloaded_error","code":529}}\n\n');
    expect(encoder.done()).toBe("data: [DONE]\n\n");
  });

  test('a call with no argument fragments gets "{}", or its whole input, never an empty string', () => {
    const encoder = createOpenAIStreamEncoder({ model: "m", id: "x", created: 1 });
    const argumentsOf = (events: StreamEvent[]) =>
      events
        .map((event) => encoder.encode(event))
        .filter((line) => line !== "")
        .map((line) => JSON.parse(line.slice("data: ".length)).choices[0].delta.tool_calls[0].function.arguments)
        .join("");
    const call = (index: number, input: unknown): StreamEvent => ({
      type: "block-start",
      index,
      part: { type: "tool_call", id: `c${index}`, name: "f", input },
    });
    encoder.encode({ type: "message-start", id: "up", model: "u" });
    expect(argumentsOf([call(0, {}), { type: "block-end", index: 0 }])).toBe("{}");
    expect(argumentsOf([call(1, { a: 1 }), { type: "block-end", index: 1 }])).toBe('{"a":1}');
    const streamed: StreamEvent[] = [call(2, {}), { type: "tool-input-delta", index: 2, partialJson: '{"b":2}' }];
    expect(argumentsOf([...streamed, { type: "block-end", index: 2 }])).toBe('{"b":2}');
  });

  test.each(["reasoning_content", "reasoning"] as const)(
    "several thinking blocks stream into %s as the whole answer joins them, text given at a block's start included",
    (field) => {
      const events: StreamEvent[] = [
        { type: "message-start", id: "m", model: "u" },
        { type: "block-start", index: 0, part: { type: "thinking", thinking: "A" } },
        { type: "block-end", index: 0 },
        { type: "block-start", index: 1, part: { type: "text", text: "" } },
        { type: "text-delta", index: 1, text: "t" },
        { type: "block-end", index: 1 },
        { type: "block-start", index: 2, part: { type: "thinking", thinking: "" } },
        { type: "thinking-delta", index: 2, thinking: "B" },
        { type: "block-end", index: 2 },
        {
          type: "finish",
          stopReason: { unified: "end_turn", raw: "end_turn" },
          usage: { inputTokens: 1, outputTokens: 1 },
        },
      ];
      const streamed = parseSse(encode(events, field))
        .filter((message) => message.data !== "[DONE]")
        .map((message) => JSON.parse(message.data).choices[0]?.delta?.[field] ?? "")
        .join("");
      const whole = coreToOpenAIResponse(accumulate(events), { reasoning: field }).value.choices[0]!.message;
      expect(streamed).toBe((whole as unknown as Record<string, string>)[field]);
      expect(streamed).toBe("A\n\nB");
    },
  );

  test("a start with no id (a source without one, or Parley's own) still gives every chunk the same id", () => {
    const encoder = createOpenAIStreamEncoder({ model: "m", created: 1 });
    const chunks = [
      encoder.encode({ type: "message-start", id: "", model: "u" }),
      encoder.encode({ type: "block-start", index: 0, part: { type: "text", text: "hi" } }),
    ].map((line) => JSON.parse(line.slice("data: ".length)) as { id: string });
    expect(chunks[0]!.id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
    expect(chunks[1]!.id).toBe(chunks[0]!.id);
  });
});
