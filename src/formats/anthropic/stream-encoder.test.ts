import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { cutAt } from "../../../test/support/cut.js";
import { decodeOriginSignature } from "../../core/reasoning-origin.js";
import type { StreamEvent } from "../../core/stream-events.js";
import { accumulate } from "../../stream/accumulate.js";
import { parseSse, SseDecoder, type SseMessage } from "../../stream/sse.js";
import { createAnthropicStreamDecoder } from "./stream-decoder.js";
import { createAnthropicStreamEncoder } from "./stream-encoder.js";
import { corpusStreams, sseMessagesOf } from "./test-support/corpus.js";

function decodeAll(messages: SseMessage[]): StreamEvent[] {
  const decoder = createAnthropicStreamDecoder();
  return [...messages.flatMap((message) => decoder.push(message)), ...decoder.finish()];
}

function encodeAll(events: StreamEvent[], options?: { model?: string; id?: string }): string {
  const encoder = createAnthropicStreamEncoder(options);
  return events.map((event) => encoder.encode(event)).join("");
}

/** Feeds bytes cut at the given points (mid-line, mid-character) through the shared SSE decoder. */
function splitDecode(bytes: Uint8Array, cuts: number[]): SseMessage[] {
  const decoder = new SseDecoder();
  const messages: SseMessage[] = [];
  for (const piece of cutAt(bytes, cuts)) messages.push(...decoder.push(piece));
  return [...messages, ...decoder.finish()];
}

/** Anthropic's documented event order; returns the first broken rule, or undefined. */
function orderViolation(messages: SseMessage[]): string | undefined {
  const events = messages.map((message) => ({ name: message.event, payload: JSON.parse(message.data) }));
  let state: "before" | "message" | "block" | "delta" | "stopped" = "before";
  let expectedIndex = 0;
  let openIndex = -1;
  for (const { name, payload } of events) {
    if (name !== payload.type) return `event name ${name} differs from type ${payload.type}`;
    if (name === "ping") continue;
    if (name === "error") return state === "stopped" ? "error after message_stop" : undefined;
    switch (name) {
      case "message_start":
        if (state !== "before") return "message_start twice";
        state = "message";
        break;
      case "content_block_start":
        if (state !== "message") return `content_block_start in state ${state}`;
        if (payload.index !== expectedIndex) return `index ${payload.index}, expected ${expectedIndex}`;
        openIndex = expectedIndex++;
        state = "block";
        break;
      case "content_block_delta":
        if (state !== "block" || payload.index !== openIndex)
          return `delta for ${payload.index} while ${openIndex} open`;
        break;
      case "content_block_stop":
        if (state !== "block" || payload.index !== openIndex)
          return `stop for ${payload.index} while ${openIndex} open`;
        state = "message";
        break;
      case "message_delta":
        if (state !== "message" && state !== "delta") return `message_delta in state ${state}`;
        if (typeof payload.usage?.output_tokens !== "number") return "message_delta without output_tokens";
        state = "delta";
        break;
      case "message_stop":
        if (state !== "delta") return "message_stop without message_delta";
        state = "stopped";
        break;
      default:
        return `unknown event ${name}`;
    }
  }
  return state === "stopped" ? undefined : `stream ended in state ${state}`;
}

describe("anthropic stream encoder on recorded traffic", () => {
  for (const file of corpusStreams()) {
    test(`${file.name}: encode(decode(sse)) re-decodes to the same message however it is cut`, () => {
      const events = decodeAll(sseMessagesOf(file));
      const expected = accumulate(events);
      const text = encodeAll(events);
      const bytes = new TextEncoder().encode(text);
      expect(orderViolation(parseSse(text))).toBeUndefined();
      fc.assert(
        fc.property(fc.array(fc.nat({ max: bytes.length }), { maxLength: 40 }), (cuts) => {
          const again = accumulate(decodeAll(splitDecode(bytes, cuts)));
          expect(again).toEqual(expected);
        }),
        { numRuns: 25 },
      );
    });
  }
});

describe("anthropic stream encoder", () => {
  const start: StreamEvent = { type: "message-start", id: "chatcmpl-1", model: "qwen3", usage: { inputTokens: 7 } };
  const finish: StreamEvent = {
    type: "finish",
    stopReason: { unified: "tool_use", raw: "tool_calls" },
    usage: { inputTokens: 7, outputTokens: 30, cacheReadInputTokens: 2 },
  };

  test("signs unsigned thinking with its origin before content_block_stop, streams tool input", () => {
    const origin = { format: "openai" as const, provider: "deepseek", field: "reasoning_content" as const };
    const text = encodeAll([
      start,
      { type: "block-start", index: 0, part: { type: "thinking", thinking: "", origin } },
      { type: "thinking-delta", index: 0, thinking: "let me see" },
      { type: "block-end", index: 0 },
      { type: "block-start", index: 1, part: { type: "tool_call", id: "call_1", name: "f", input: {} } },
      { type: "tool-input-delta", index: 1, partialJson: '{"x":' },
      { type: "tool-input-delta", index: 1, partialJson: "1}" },
      { type: "block-end", index: 1 },
      finish,
    ]);
    const messages = parseSse(text);
    expect(orderViolation(messages)).toBeUndefined();
    const payloads = messages.map((message) => JSON.parse(message.data));
    const signature = payloads.find((payload) => payload.delta?.type === "signature_delta");
    expect(decodeOriginSignature(signature.delta.signature)).toEqual(origin);
    expect(payloads[payloads.indexOf(signature) + 1]).toEqual({ type: "content_block_stop", index: 0 });
    const response = accumulate(decodeAll(messages));
    expect(response.message.parts[1]).toEqual({ type: "tool_call", id: "call_1", name: "f", input: { x: 1 } });
    const delta = payloads.find((payload) => payload.type === "message_delta");
    expect(delta).toEqual({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { input_tokens: 7, cache_read_input_tokens: 2, output_tokens: 30 },
    });
  });

  test.each([
    ['{"x": 1}', '{"x": 1}'],
    ["not json", '{"value":"not json"}'],
    ['{"a": 1}}', '{"a":1}'],
    ['{"a":"hel', '{"a":"hel"}'],
    ["[1,2]", '{"value":[1,2]}'],
  ])("tool input %s goes out whole at the block's end as %s, an object an Anthropic client can parse", (raw, sent) => {
    const cut = Math.ceil(raw.length / 2);
    const text = encodeAll([
      start,
      { type: "block-start", index: 0, part: { type: "tool_call", id: "call_1", name: "f", input: {} } },
      { type: "tool-input-delta", index: 0, partialJson: raw.slice(0, cut) },
      { type: "tool-input-delta", index: 0, partialJson: raw.slice(cut) },
      { type: "block-end", index: 0 },
      finish,
    ]);
    const deltas = parseSse(text)
      .map((message) => JSON.parse(message.data))
      .filter((payload) => payload.delta?.type === "input_json_delta");
    expect(deltas.map((payload) => payload.delta.partial_json)).toEqual([sent]);
  });

  test.each(["claude-sonnet-4-web-search.sse", "claude-sonnet-4.5-pause-turn-web-search.sse"])(
    "%s: the final message_delta comes back as it came, server_tool_use and stop_details included",
    (name) => {
      const sse = readFileSync(new URL(`../../../test/fixtures/anthropic/${name}`, import.meta.url), "utf8");
      const finalDelta = (text: string) =>
        JSON.parse(parseSse(text).find((message) => message.event === "message_delta")!.data);
      expect(finalDelta(encodeAll(decodeAll(parseSse(sse))))).toEqual(finalDelta(sse));
    },
  );

  test("the model override and id show in message_start, with a placeholder output count", () => {
    const text = encodeAll([start, finish], { model: "claude-sonnet-4-5", id: "msg_parley" });
    const first = JSON.parse(parseSse(text)[0]!.data);
    expect(first.message).toMatchObject({
      id: "msg_parley",
      model: "claude-sonnet-4-5",
      content: [],
      stop_reason: null,
    });
    expect(first.message.usage).toEqual({ input_tokens: 7, output_tokens: 1 });
  });

  test("blocks Anthropic cannot show are skipped and indexes stay consecutive", () => {
    const text = encodeAll([
      start,
      { type: "block-start", index: 0, part: { type: "opaque", format: "openai", block: { foo: 1 } } },
      { type: "opaque-delta", index: 0, delta: { type: "x" } },
      { type: "block-end", index: 0 },
      { type: "block-start", index: 1, part: { type: "text", text: "whole" } },
      { type: "block-end", index: 1 },
      finish,
    ]);
    const messages = parseSse(text);
    expect(orderViolation(messages)).toBeUndefined();
    expect(accumulate(decodeAll(messages)).message.parts).toEqual([{ type: "text", text: "whole" }]);
  });

  test("a signature-only thinking block after the text goes out only if another block follows it", () => {
    const signed = (index: number): StreamEvent[] => [
      { type: "block-start", index, part: { type: "thinking", thinking: "" } },
      { type: "signature", index, signature: "sig" },
      { type: "block-end", index },
    ];
    const text: StreamEvent[] = [
      { type: "block-start", index: 0, part: { type: "text", text: "The answer." } },
      { type: "block-end", index: 0 },
    ];
    // The answer ends with its text, the block clients read as the answer.
    const ending = parseSse(encodeAll([start, ...text, ...signed(1), finish]));
    expect(orderViolation(ending)).toBeUndefined();
    expect(accumulate(decodeAll(ending)).message.parts).toEqual([{ type: "text", text: "The answer." }]);
    // Before a call, it keeps its place.
    const call: StreamEvent[] = [
      { type: "block-start", index: 2, part: { type: "tool_call", id: "t", name: "f", input: {} } },
      { type: "block-end", index: 2 },
    ];
    const before = parseSse(encodeAll([start, ...text, ...signed(1), ...call, finish]));
    expect(orderViolation(before)).toBeUndefined();
    expect(accumulate(decodeAll(before)).message.parts.map((part) => part.type)).toEqual([
      "text",
      "thinking",
      "tool_call",
    ]);
    expect(accumulate(decodeAll(before)).message.parts[1]).toMatchObject({ thinking: "", signature: "sig" });
  });

  test("a mid-stream error ends the stream; nothing is written after it", () => {
    const encoder = createAnthropicStreamEncoder();
    const head =
      encoder.encode(start) + encoder.encode({ type: "block-start", index: 0, part: { type: "text", text: "" } });
    const error = encoder.error({ type: "overloaded_error", message: "Overloaded" });
    expect(parseSse(error)).toEqual([
      { event: "error", data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' },
    ]);
    expect(encoder.encode(finish)).toBe("");
    expect(encoder.ping()).toBe("");
    expect(orderViolation(parseSse(head + error))).toBeUndefined();
  });

  test("a source that skips message-start still gets one, and an open block is closed at finish", () => {
    const text = encodeAll([{ type: "block-start", index: 0, part: { type: "text", text: "" } }, finish]);
    expect(orderViolation(parseSse(text))).toBeUndefined();
    expect(JSON.parse(parseSse(text)[0]!.data).message.id).toMatch(/^msg_[0-9a-f]{24}$/);
  });

  test("encoding is fast (well under 0.03 ms per event)", () => {
    const events = decodeAll(sseMessagesOf(corpusStreams().find((file) => file.name.includes("pause-turn"))!));
    // the best of several rounds, so that a busy machine does not fail the test
    let best = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 5; round++) {
      const began = performance.now();
      for (let repeat = 0; repeat < 10; repeat++) encodeAll(events);
      best = Math.min(best, (performance.now() - began) / (10 * events.length));
    }
    expect(best).toBeLessThan(0.03);
  });
});
