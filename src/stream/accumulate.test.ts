import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { IncompleteStreamError } from "../core/errors.js";
import { encodeOriginSignature } from "../core/reasoning-origin.js";
import type { StreamEvent } from "../core/stream-events.js";
import { createAnthropicStreamDecoder } from "../formats/anthropic/stream-decoder.js";
import { accumulate, createAccumulator, foldEvents, parseToolInput, StreamOrderError } from "./accumulate.js";
import { parseSse } from "./sse.js";

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected it to throw");
}

const start: StreamEvent = { type: "message-start", id: "msg_1", model: "m", usage: { inputTokens: 3 } };
const finish: StreamEvent = {
  type: "finish",
  stopReason: { unified: "end_turn", raw: "end_turn" },
  stopSequence: null,
  usage: { inputTokens: 3, outputTokens: 8 },
};

describe("accumulate", () => {
  test("folds blocks in order, signatures replace, tool input parses at block end", () => {
    const response = accumulate([
      start,
      { type: "block-start", index: 0, part: { type: "thinking", thinking: "" } },
      { type: "thinking-delta", index: 0, thinking: "a" },
      { type: "thinking-delta", index: 0, thinking: "b" },
      { type: "signature", index: 0, signature: "old" },
      { type: "signature", index: 0, signature: "new" },
      { type: "block-end", index: 0 },
      { type: "block-start", index: 1, part: { type: "text", text: "" } },
      { type: "text-delta", index: 1, text: "hello " },
      { type: "text-delta", index: 1, text: "world" },
      { type: "block-end", index: 1 },
      { type: "block-start", index: 2, part: { type: "tool_call", id: "t", name: "f", input: {} } },
      { type: "tool-input-delta", index: 2, partialJson: '{"q": "x", ' },
      { type: "tool-input-delta", index: 2, partialJson: '"n": [1, 2]}' },
      { type: "block-end", index: 2 },
      finish,
    ]);
    expect(response).toEqual({
      id: "msg_1",
      model: "m",
      message: {
        role: "assistant",
        parts: [
          { type: "thinking", thinking: "ab", signature: "new" },
          { type: "text", text: "hello world" },
          { type: "tool_call", id: "t", name: "f", input: { q: "x", n: [1, 2] } },
        ],
      },
      stopReason: { unified: "end_turn", raw: "end_turn" },
      stopSequence: null,
      usage: { inputTokens: 3, outputTokens: 8 },
    });
  });

  test("a Parley envelope as signature sets the thinking origin", () => {
    const origin = { format: "openai" as const, provider: "kimi", field: "reasoning" as const };
    const response = accumulate([
      start,
      { type: "block-start", index: 0, part: { type: "thinking", thinking: "t" } },
      { type: "signature", index: 0, signature: encodeOriginSignature(origin) },
      { type: "block-end", index: 0 },
      finish,
    ]);
    expect(response.message.parts[0]).toMatchObject({ type: "thinking", origin });
  });

  test("invalid tool JSON keeps the raw text and gets a repaired input, or {} when beyond repair", () => {
    expect(parseToolInput('{"city": "Paris"')).toEqual({ input: { city: "Paris" }, rawInput: '{"city": "Paris"' });
    expect(parseToolInput("{}")).toEqual({ input: {} });
    const broken = parseToolInput("}}}{{{:::");
    expect(broken.rawInput).toBe("}}}{{{:::");
    expect(broken.input).toEqual({});
    const response = accumulate([
      start,
      { type: "block-start", index: 0, part: { type: "tool_call", id: "t", name: "f", input: {} } },
      { type: "tool-input-delta", index: 0, partialJson: "{'a': 1,}" },
      { type: "block-end", index: 0 },
      finish,
    ]);
    expect(response.message.parts[0]).toEqual({
      type: "tool_call",
      id: "t",
      name: "f",
      input: { a: 1 },
      rawInput: "{'a': 1,}",
    });
  });

  test("citations_delta adds citations to its text block; server tools take streamed input", () => {
    const citation = { type: "web_search_result_location", url: "https://example.org" };
    const response = accumulate([
      start,
      {
        type: "block-start",
        index: 0,
        part: {
          type: "opaque",
          format: "anthropic",
          block: { type: "server_tool_use", id: "s", name: "web_search", input: {} },
        },
      },
      { type: "tool-input-delta", index: 0, partialJson: '{"query":"q"}' },
      { type: "block-end", index: 0 },
      { type: "block-start", index: 1, part: { type: "text", text: "" } },
      { type: "opaque-delta", index: 1, delta: { type: "citations_delta", citation } },
      { type: "text-delta", index: 1, text: "cited" },
      { type: "block-end", index: 1 },
      finish,
    ]);
    expect(response.message.parts).toEqual([
      {
        type: "opaque",
        format: "anthropic",
        block: { type: "server_tool_use", id: "s", name: "web_search", input: { query: "q" } },
      },
      { type: "text", text: "cited", extra: { anthropic: { citations: [citation] } } },
    ]);
  });

  test("a snapshot is a valid partial message and later events do not change it", () => {
    const accumulator = createAccumulator();
    accumulator.push(start);
    accumulator.push({ type: "block-start", index: 0, part: { type: "text", text: "" } });
    accumulator.push({ type: "text-delta", index: 0, text: "par" });
    const early = accumulator.snapshot();
    accumulator.push({ type: "text-delta", index: 0, text: "tial" });
    accumulator.push({ type: "block-end", index: 0 });
    accumulator.push({ type: "block-start", index: 1, part: { type: "tool_call", id: "t", name: "f", input: {} } });
    accumulator.push({ type: "tool-input-delta", index: 1, partialJson: '{"path": "/tm' });
    const later = accumulator.snapshot();
    expect(early.message.parts).toEqual([{ type: "text", text: "par" }]);
    expect(early.stopReason).toEqual({ unified: "other", raw: null });
    expect(later.message.parts[1]).toMatchObject({ type: "tool_call", input: { path: "/tm" } });
    expect(accumulator.ended).toBe(false);
  });

  test("an error event ends the stream and keeps what came before", () => {
    const accumulator = createAccumulator();
    accumulator.push(start);
    accumulator.push({ type: "block-start", index: 0, part: { type: "text", text: "so far" } });
    accumulator.push({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    expect(accumulator.ended).toBe(true);
    expect(accumulator.error).toEqual({ type: "overloaded_error", message: "Overloaded" });
    expect(accumulator.snapshot().message.parts).toEqual([{ type: "text", text: "so far" }]);
    expect(() => accumulator.push(finish)).toThrow(/after the stream ended/);
  });

  describe("an interrupted answer never reads as a finished one", () => {
    const textSoFar: StreamEvent[] = [
      start,
      { type: "block-start", index: 0, part: { type: "text", text: "" } },
      { type: "text-delta", index: 0, text: "half an ans" },
    ];

    test("a stream ending in an upstream error throws IncompleteStreamError with the error and the partial answer", () => {
      const error = { type: "overloaded_error", message: "Overloaded", status: 529 };
      const thrown = catchError(() => accumulate([...textSoFar, { type: "error", error }]));
      expect(thrown).toBeInstanceOf(IncompleteStreamError);
      expect(thrown).toMatchObject({ reason: "error", type: "overloaded_error", status: 529, streamError: error });
      expect((thrown as IncompleteStreamError).partial.message.parts).toEqual([{ type: "text", text: "half an ans" }]);
      expect((thrown as Error).message).toMatch(/Overloaded/);
    });

    test("events that stop before finish (the decoder's finish() forgotten) throw, reason unfinished", () => {
      const thrown = catchError(() => accumulate(textSoFar));
      expect(thrown).toMatchObject({ name: "IncompleteStreamError", reason: "unfinished", type: "api_error" });
      expect((thrown as Error).message).toMatch(/finish\(\)/);
      expect((thrown as IncompleteStreamError).partial.message.parts).toEqual([{ type: "text", text: "half an ans" }]);
      expect(catchError(() => accumulate([]))).toBeInstanceOf(IncompleteStreamError);
    });

    test("a cut stream, whose decoder's finish() reports the cut, throws with that error", () => {
      const decoder = createAnthropicStreamDecoder();
      const events = parseSse(
        'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":1}}}\n\n' +
          'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
          'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"cut he"}}\n\n',
      ).flatMap((message) => decoder.push(message));
      expect(catchError(() => accumulate(events))).toMatchObject({ reason: "unfinished" });
      const thrown = catchError(() => accumulate([...events, ...decoder.finish()]));
      expect(thrown).toMatchObject({ reason: "error", message: expect.stringMatching(/ended before message_stop/) });
      expect((thrown as IncompleteStreamError).partial.message.parts).toEqual([{ type: "text", text: "cut he" }]);
    });

    test("the accumulator's result() says the same; a finished stream gives its answer", () => {
      const accumulator = createAccumulator();
      for (const event of textSoFar) accumulator.push(event);
      expect(() => accumulator.result()).toThrow(IncompleteStreamError);
      accumulator.push({ type: "block-end", index: 0 });
      accumulator.push(finish);
      expect(accumulator.result().stopReason.unified).toBe("end_turn");
    });

    test("foldEvents folds whatever came and hands the error over as a value", () => {
      const error = { type: "api_error", message: "boom" };
      const folded = foldEvents([...textSoFar, { type: "error", error }]);
      expect(folded.error).toEqual(error);
      expect(folded.answer.message.parts).toEqual([{ type: "text", text: "half an ans" }]);
    });
  });

  const orderCases: Array<[string, StreamEvent[], RegExp]> = [
    [
      "delta before any block",
      [start, { type: "text-delta", index: 0, text: "x" }],
      /text-delta for block 0, but no block is open/,
    ],
    [
      "delta for a closed block",
      [
        start,
        { type: "block-start", index: 0, part: { type: "text", text: "" } },
        { type: "block-end", index: 0 },
        { type: "text-delta", index: 0, text: "x" },
      ],
      /no block is open/,
    ],
    [
      "delta for another block",
      [
        start,
        { type: "block-start", index: 0, part: { type: "text", text: "" } },
        { type: "text-delta", index: 1, text: "x" },
      ],
      /block 0 is the open one/,
    ],
    [
      "wrong delta type",
      [
        start,
        { type: "block-start", index: 0, part: { type: "text", text: "" } },
        { type: "thinking-delta", index: 0, thinking: "x" },
      ],
      /which is text/,
    ],
    ["index gap", [start, { type: "block-start", index: 1, part: { type: "text", text: "" } }], /block 0 was expected/],
    [
      "overlapping blocks",
      [
        start,
        { type: "block-start", index: 0, part: { type: "text", text: "" } },
        { type: "block-start", index: 1, part: { type: "text", text: "" } },
      ],
      /while block 0 is open/,
    ],
    [
      "event before message-start",
      [{ type: "block-start", index: 0, part: { type: "text", text: "" } }],
      /before message-start/,
    ],
    [
      "finish with a block open",
      [start, { type: "block-start", index: 0, part: { type: "text", text: "" } }, finish],
      /finish while block 0 is open/,
    ],
  ];
  for (const [name, events, message] of orderCases) {
    test(`rejects ${name}`, () => {
      expect(() => accumulate(events)).toThrow(StreamOrderError);
      expect(() => accumulate(events)).toThrow(message);
    });
  }

  for (const [name, events] of orderCases) {
    test(`the lenient form absorbs ${name}, keeping the text`, () => {
      const accumulator = createAccumulator({ lenient: true });
      for (const event of events) accumulator.push(event);
      const parts = accumulator.snapshot().message.parts;
      const texts = events.flatMap((event) => (event.type === "text-delta" ? [event.text] : []));
      for (const text of texts) expect(JSON.stringify(parts)).toContain(text);
    });
  }

  test("the lenient form opens a missing block for its delta and closes an open one at finish", () => {
    const accumulator = createAccumulator({ lenient: true });
    accumulator.push(start);
    accumulator.push({ type: "thinking-delta", index: 0, thinking: "orphan" });
    accumulator.push({ type: "block-start", index: 1, part: { type: "tool_call", id: "t", name: "f", input: {} } });
    accumulator.push({ type: "tool-input-delta", index: 1, partialJson: '{"a":1' });
    accumulator.push(finish);
    accumulator.push({ type: "text-delta", index: 2, text: "after the end" });
    expect(accumulator.snapshot().message.parts).toEqual([
      { type: "thinking", thinking: "orphan" },
      { type: "tool_call", id: "t", name: "f", input: { a: 1 }, rawInput: '{"a":1' },
    ]);
  });

  test("tracked changes: the parts touched since the last take, as they read now", () => {
    const accumulator = createAccumulator({ trackChanges: true });
    accumulator.push(start);
    accumulator.push({ type: "block-start", index: 0, part: { type: "text", text: "" } });
    accumulator.push({ type: "text-delta", index: 0, text: "a" });
    expect(accumulator.takeChanges()).toEqual([{ position: 0, part: { type: "text", text: "a" } }]);
    expect(accumulator.takeChanges()).toEqual([]);
    accumulator.push({ type: "block-end", index: 0 });
    accumulator.push({ type: "block-start", index: 1, part: { type: "tool_call", id: "t", name: "f", input: {} } });
    accumulator.push({ type: "tool-input-delta", index: 1, partialJson: '{"path": "/tm' });
    expect(accumulator.takeChanges()).toEqual([
      { position: 0, part: { type: "text", text: "a" } },
      {
        position: 1,
        part: { type: "tool_call", id: "t", name: "f", input: { path: "/tm" }, rawInput: '{"path": "/tm' },
      },
    ]);
    accumulator.restoreChanges([1]);
    accumulator.push({ type: "tool-input-delta", index: 1, partialJson: 'p"}' });
    accumulator.push({ type: "block-end", index: 1 });
    expect(accumulator.takeChanges()).toEqual([
      { position: 1, part: { type: "tool_call", id: "t", name: "f", input: { path: "/tmp" } } },
    ]);
    // Without tracking nothing is remembered.
    expect(createAccumulator().takeChanges()).toEqual([]);
  });

  test("text cut into any pieces accumulates to the same text", () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 20 }), (pieces) => {
        const events: StreamEvent[] = [start, { type: "block-start", index: 0, part: { type: "text", text: "" } }];
        for (const text of pieces) events.push({ type: "text-delta", index: 0, text });
        events.push({ type: "block-end", index: 0 }, finish);
        expect(accumulate(events).message.parts).toEqual([{ type: "text", text: pieces.join("") }]);
      }),
    );
  });
});
