import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { StreamEvent } from "../core/stream-events.js";
import { accumulate } from "./accumulate.js";
import { coalesceDeltas } from "./coalesce.js";

const start: StreamEvent = { type: "message-start", id: "msg_1", model: "m" };
const finish: StreamEvent = {
  type: "finish",
  stopReason: { unified: "tool_use", raw: "tool_calls" },
  stopSequence: null,
  usage: { inputTokens: 3, outputTokens: 8 },
};

/** `items` cut at the given points (taken modulo its length + 1); pieces may be empty, as upstream deltas can be. */
function cutAt<T extends string | StreamEvent[]>(items: T, cuts: number[]): T[] {
  const points = cuts.map((cut) => cut % (items.length + 1)).sort((a, b) => a - b);
  const out: T[] = [];
  let from = 0;
  for (const to of [...points, items.length]) {
    out.push(items.slice(from, to) as T);
    from = to;
  }
  return out;
}

/** Text cut into 1 to 6 pieces at random places. */
const pieces = fc
  .tuple(fc.string({ unit: "binary", maxLength: 40 }), fc.array(fc.nat(), { maxLength: 5 }))
  .map(([text, cuts]) => cutAt(text, cuts));

const block = fc.oneof(
  fc.record({ kind: fc.constant("text" as const), pieces }),
  fc.record({ kind: fc.constant("thinking" as const), pieces, signatures: fc.array(fc.string(), { maxLength: 2 }) }),
  fc.record({
    kind: fc.constant("tool" as const),
    input: fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), fc.integer(), fc.boolean())),
    cuts: fc.array(fc.nat(), { maxLength: 5 }),
  }),
);

/** A valid canonical stream for a message of random blocks, every delta cut at random. */
const stream = fc.array(block, { maxLength: 6 }).map((blocks) => {
  const events: StreamEvent[] = [start];
  blocks.forEach((spec, index) => {
    if (spec.kind === "text") {
      events.push({ type: "block-start", index, part: { type: "text", text: "" } });
      for (const text of spec.pieces) events.push({ type: "text-delta", index, text });
    } else if (spec.kind === "thinking") {
      events.push({ type: "block-start", index, part: { type: "thinking", thinking: "" } });
      for (const thinking of spec.pieces) events.push({ type: "thinking-delta", index, thinking });
      for (const signature of spec.signatures) events.push({ type: "signature", index, signature });
    } else {
      events.push({ type: "block-start", index, part: { type: "tool_call", id: `t${index}`, name: "f", input: {} } });
      for (const partialJson of cutAt(JSON.stringify(spec.input), spec.cuts))
        events.push({ type: "tool-input-delta", index, partialJson });
    }
    events.push({ type: "block-end", index });
  });
  events.push(finish);
  return events;
});

const mergeable = new Set(["text-delta", "thinking-delta", "tool-input-delta"]);

describe("coalesceDeltas", () => {
  test("joins runs of the same delta for the same block, and nothing else", () => {
    const events: StreamEvent[] = [
      start,
      { type: "block-start", index: 0, part: { type: "thinking", thinking: "" } },
      { type: "thinking-delta", index: 0, thinking: "用户" },
      { type: "thinking-delta", index: 0, thinking: "用中文说" },
      { type: "signature", index: 0, signature: "a" },
      { type: "signature", index: 0, signature: "b" },
      { type: "block-end", index: 0 },
      { type: "block-start", index: 1, part: { type: "text", text: "" } },
      { type: "text-delta", index: 1, text: "你" },
      { type: "text-delta", index: 1, text: "好" },
      { type: "text-delta", index: 1, text: " 👋" },
      { type: "block-end", index: 1 },
      finish,
    ];
    const before = structuredClone(events);
    expect(coalesceDeltas(events)).toEqual([
      start,
      { type: "block-start", index: 0, part: { type: "thinking", thinking: "" } },
      { type: "thinking-delta", index: 0, thinking: "用户用中文说" },
      { type: "signature", index: 0, signature: "a" },
      { type: "signature", index: 0, signature: "b" },
      { type: "block-end", index: 0 },
      { type: "block-start", index: 1, part: { type: "text", text: "" } },
      { type: "text-delta", index: 1, text: "你好 👋" },
      { type: "block-end", index: 1 },
      finish,
    ]);
    expect(events).toEqual(before);
  });

  test("returns its input as it is when nothing merges", () => {
    const events: StreamEvent[] = [
      { type: "text-delta", index: 0, text: "a" },
      { type: "thinking-delta", index: 0, thinking: "b" },
      { type: "text-delta", index: 1, text: "c" },
    ];
    expect(coalesceDeltas(events)).toBe(events);
    expect(coalesceDeltas([])).toEqual([]);
  });

  test("property: per batch, the accumulated message is unchanged and no mergeable neighbours remain", () => {
    fc.assert(
      fc.property(stream, fc.array(fc.nat(), { maxLength: 8 }), (events, cuts) => {
        const before = JSON.stringify(events);
        // Batches as upstream reads cut them (an empty batch included).
        const coalesced = cutAt(events, cuts).flatMap((batch) => {
          const out = coalesceDeltas(batch);
          for (let i = 1; i < out.length; i++) {
            const [a, b] = [out[i - 1]!, out[i]!];
            const joinable = mergeable.has(a.type) && a.type === b.type && "index" in a && "index" in b;
            expect(joinable && a.index === b.index).toBe(false);
          }
          return out;
        });
        expect(accumulate(coalesced)).toEqual(accumulate(events));
        expect(JSON.stringify(events)).toBe(before);
      }),
      { numRuns: 300 },
    );
  });
});
