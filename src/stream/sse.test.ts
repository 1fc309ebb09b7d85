import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { cutAt } from "../../test/support/cut.js";
import { formatSse, parseSse, SseDecoder } from "./sse.js";

describe("SseDecoder", () => {
  test("reads events, names, comments and [DONE]", () => {
    const text = ': OPENROUTER PROCESSING\n\nevent: ping\ndata: {"type":"ping"}\n\ndata: {"a":1}\n\ndata: [DONE]\n\n';
    expect(parseSse(text)).toEqual([
      { event: "ping", data: '{"type":"ping"}' },
      { data: '{"a":1}' },
      { data: "[DONE]" },
    ]);
  });

  test("flushes a last event without its blank line", () => {
    expect(parseSse('data: {"x":"y"}')).toEqual([{ data: '{"x":"y"}' }]);
  });

  test("gives the same events however the bytes are split, multi-byte characters included", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "grapheme", maxLength: 20 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (payloads, cuts) => {
          const text = payloads.map((payload) => formatSse("e", JSON.stringify(payload))).join("");
          const bytes = new TextEncoder().encode(text);
          const decoder = new SseDecoder();
          const events = [];
          for (const piece of cutAt(bytes, cuts)) events.push(...decoder.push(piece));
          events.push(...decoder.finish());
          expect(events.map((event) => JSON.parse(event.data))).toEqual(payloads);
        },
      ),
    );
  });
});
