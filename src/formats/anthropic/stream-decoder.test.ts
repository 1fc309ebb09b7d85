import { describe, expect, test } from "vitest";
import type { StreamEvent } from "../../core/stream-events.js";
import { accumulate } from "../../stream/accumulate.js";
import { parseSse, type SseMessage } from "../../stream/sse.js";
import { createAnthropicStreamDecoder } from "./stream-decoder.js";
import { corpusStreams, referenceMessage, sseMessagesOf } from "./test-support/corpus.js";
import { anthropicResponseToCore } from "./to-core.js";

function decodeAll(messages: SseMessage[]): StreamEvent[] {
  const decoder = createAnthropicStreamDecoder();
  return [...messages.flatMap((message) => decoder.push(message)), ...decoder.finish()];
}

function sse(...payloads: object[]): SseMessage[] {
  return payloads.map((payload) => ({ event: (payload as { type: string }).type, data: JSON.stringify(payload) }));
}

const START = {
  type: "message_start",
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-x",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 10, cache_read_input_tokens: 4, output_tokens: 1, service_tier: "standard" },
  },
};

describe("anthropic stream decoder on recorded traffic", () => {
  for (const file of corpusStreams()) {
    test(`${file.name}: streaming equals non-streaming`, () => {
      const messages = sseMessagesOf(file);
      const events = decodeAll(messages);
      expect(events.some((event) => event.type === "error")).toBe(false);
      expect(events.at(-1)?.type).toBe("finish");
      const streamed = accumulate(events);
      const expected = anthropicResponseToCore(referenceMessage(messages));
      expect(streamed.message.parts).toEqual(expected.message.parts);
      expect(streamed.stopReason).toEqual(expected.stopReason);
      expect(streamed.stopSequence).toEqual(expected.stopSequence);
      expect(streamed.usage).toEqual(expected.usage);
      expect(streamed.id).toBe(expected.id);
      expect(streamed.model).toBe(expected.model);
    });
  }

  test("thinking keeps its text and real signature, and is marked as Anthropic's", () => {
    const file = corpusStreams().find((candidate) => candidate.name.endsWith("claude-sonnet-4-thinking-tool-use.sse"));
    const response = accumulate(decodeAll(sseMessagesOf(file!)));
    const [thinking, call] = response.message.parts;
    expect(thinking).toMatchObject({ type: "thinking", origin: { format: "anthropic" } });
    expect(thinking?.type === "thinking" && thinking.thinking.startsWith("The user is asking")).toBe(true);
    expect(thinking?.type === "thinking" && thinking.signature?.startsWith("EtYDCkYI")).toBe(true);
    expect(call).toMatchObject({ type: "tool_call", name: "weather", input: { location: "Florence, Italy" } });
    expect(response.stopReason).toEqual({ unified: "tool_use", raw: "tool_use" });
  });

  test("a compatible server's restated input tokens win over message_start's", () => {
    const file = corpusStreams().find((candidate) => candidate.name.startsWith("anthropic-compat/"));
    const response = accumulate(decodeAll(sseMessagesOf(file!)));
    expect(response.usage).toEqual({ inputTokens: 61, outputTokens: 2 });
    expect(response.message.parts).toEqual([{ type: "text", text: "pong" }]);
  });

  test("redacted thinking arrives whole, web search blocks stay opaque with their streamed input", () => {
    const streams = corpusStreams();
    const redacted = accumulate(decodeAll(sseMessagesOf(streams.find((f) => f.name.includes("redacted-thinking"))!)));
    expect(redacted.message.parts.map((part) => part.type)).toEqual(["redacted_thinking", "redacted_thinking", "text"]);
    const search = accumulate(decodeAll(sseMessagesOf(streams.find((f) => f.name.includes("4-web-search"))!)));
    const [serverToolUse, result] = search.message.parts;
    expect(serverToolUse).toMatchObject({ type: "opaque", format: "anthropic", block: { type: "server_tool_use" } });
    expect(
      serverToolUse?.type === "opaque" && (serverToolUse.block as { input: { query: string } }).input.query,
    ).toMatch(/tokyo/i);
    expect(result).toMatchObject({ type: "opaque", block: { type: "web_search_tool_result" } });
    const cited = search.message.parts.filter((part) => part.type === "text" && part.extra?.anthropic?.citations);
    expect(cited.length).toBeGreaterThan(0);
  });
});

describe("anthropic stream decoder on edge cases", () => {
  test("pings and unknown event types are skipped, padded JSON is fine", () => {
    const messages: SseMessage[] = [
      ...sse(START),
      { event: "ping", data: '{"type": "ping"}   ' },
      { event: "future_event", data: '{"type":"future_event","x":1}' },
      ...sse(
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "hi" } },
        { type: "content_block_stop", index: 0 },
        { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } },
        { type: "message_stop" },
      ),
    ];
    const events = decodeAll(messages);
    expect(events.map((event) => event.type)).toEqual([
      "message-start",
      "block-start",
      "text-delta",
      "block-end",
      "finish",
    ]);
    expect(events[0]).toEqual({
      type: "message-start",
      id: "msg_1",
      model: "claude-x",
      usage: { inputTokens: 10, cacheReadInputTokens: 4, outputTokens: 1 },
      extra: { anthropic: { usage: { service_tier: "standard" } } },
    });
    expect(events.at(-1)).toEqual({
      type: "finish",
      stopReason: { unified: "end_turn", raw: "end_turn" },
      stopSequence: null,
      usage: { inputTokens: 10, cacheReadInputTokens: 4, outputTokens: 5 },
    });
  });

  test("signature_delta replaces, an empty first input fragment is kept, unknown deltas are opaque", () => {
    const events = decodeAll(
      sse(
        START,
        { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hmm" } },
        { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "first" } },
        { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "second" } },
        { type: "content_block_stop", index: 0 },
        { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "t1", name: "f", input: {} } },
        { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "" } },
        { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"a":' } },
        { type: "content_block_delta", index: 1, delta: { type: "future_delta", value: 1 } },
        { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "1}" } },
        { type: "content_block_stop", index: 1 },
        { type: "message_delta", delta: { stop_reason: "something_new" }, usage: { output_tokens: 9 } },
        { type: "message_stop" },
      ),
    );
    expect(events).toContainEqual({ type: "opaque-delta", index: 1, delta: { type: "future_delta", value: 1 } });
    const response = accumulate(events);
    expect(response.message.parts).toEqual([
      { type: "thinking", thinking: "hmm", signature: "second", origin: { format: "anthropic" } },
      { type: "tool_call", id: "t1", name: "f", input: { a: 1 } },
    ]);
    expect(response.stopReason).toEqual({ unified: "other", raw: "something_new" });
  });

  test("an error event ends the stream with a core error carrying its status", () => {
    const events = decodeAll([
      ...sse(START),
      ...parseSse(
        'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n',
      ),
      ...sse({ type: "message_stop" }),
    ]);
    expect(events.at(-1)).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded", status: 529 },
    });
    expect(events.filter((event) => event.type === "finish")).toEqual([]);
  });

  test("a stream cut before message_stop ends in an error, an unstarted one in nothing", () => {
    const cut = decodeAll(
      sse(START, { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    );
    expect(cut.at(-1)).toMatchObject({ type: "error", error: { type: "api_error" } });
    expect(decodeAll([])).toEqual([]);
  });

  test("a payload that is not JSON becomes an error value, not an exception", () => {
    const events = decodeAll([...sse(START), { event: "content_block_delta", data: "{not json" }]);
    expect(events.at(-1)).toMatchObject({ type: "error", error: { type: "api_error" } });
  });
});
