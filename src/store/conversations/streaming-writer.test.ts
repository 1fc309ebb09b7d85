import { describe, expect, test } from "vitest";
import type { PartChange } from "./part-builder.js";
import { createStreamingWriter, type MessageSink } from "./streaming-writer.js";

function recordingSink(): MessageSink & { writes: Array<{ changes: readonly PartChange[]; complete: boolean }> } {
  const writes: Array<{ changes: readonly PartChange[]; complete: boolean }> = [];
  return {
    writes,
    async writeParts(changes, complete) {
      writes.push({ changes, complete });
    },
  };
}

const start = { type: "block-start", index: 0, part: { type: "text", text: "" } } as const;

describe("streaming writer", () => {
  test("writes in batches by event count, never one write per token", async () => {
    const sink = recordingSink();
    const writer = createStreamingWriter({
      seq: 7,
      role: "assistant",
      createdAt: "now",
      sink,
      policy: { intervalMs: 60_000, maxEvents: 64 },
    });
    writer.push(start);
    for (let token = 0; token < 1000; token++) {
      writer.push({ type: "text-delta", index: 0, text: "x" });
      // Tokens arrive over time, one network read at a time.
      if (token % 8 === 7) await new Promise((resolve) => setImmediate(resolve));
    }
    const stored = await writer.complete();
    expect(sink.writes.length).toBeGreaterThanOrEqual(Math.floor(1001 / 64));
    expect(sink.writes.length).toBeLessThanOrEqual(Math.floor(1001 / 64) + 2);
    expect(sink.writes.at(-1)!.complete).toBe(true);
    expect(sink.writes.slice(0, -1).every((write) => !write.complete)).toBe(true);
    expect(stored).toEqual({
      seq: 7,
      message: { role: "assistant", parts: [{ type: "text", text: "x".repeat(1000) }] },
      complete: true,
      createdAt: "now",
    });
    // Each write carries only the part that changed, as its whole current text.
    expect(sink.writes[0]!.changes).toEqual([
      { position: 0, part: JSON.stringify({ type: "text", text: "x".repeat(64) }) },
    ]);
  });

  test("writes on a timer when events trickle in", async () => {
    const sink = recordingSink();
    const writer = createStreamingWriter({
      seq: 1,
      role: "assistant",
      createdAt: "now",
      sink,
      policy: { intervalMs: 20, maxEvents: 1000 },
    });
    writer.push(start);
    writer.push({ type: "text-delta", index: 0, text: "slow" });
    expect(sink.writes).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(sink.writes).toEqual([
      { changes: [{ position: 0, part: '{"type":"text","text":"slow"}' }], complete: false },
    ]);
    await writer.abort();
    expect(sink.writes).toHaveLength(1);
  });

  test("a failed write is retried by the next flush and reported to the caller", async () => {
    const writes: string[][] = [];
    let failNext = true;
    const writer = createStreamingWriter({
      seq: 1,
      role: "assistant",
      createdAt: "now",
      policy: { intervalMs: 60_000, maxEvents: 2 },
      sink: {
        async writeParts(changes) {
          if (failNext) {
            failNext = false;
            throw new Error("disk full");
          }
          writes.push(changes.map((change) => change.part));
        },
      },
    });
    writer.push(start);
    writer.push({ type: "text-delta", index: 0, text: "a" });
    await expect(writer.flush()).rejects.toThrow("disk full");
    writer.push({ type: "text-delta", index: 0, text: "b" });
    await writer.complete();
    expect(writes.flat().at(-1)).toBe('{"type":"text","text":"ab"}');
  });

  test("events pushed in one go are written together, not queued one write each", async () => {
    const sink = recordingSink();
    const writer = createStreamingWriter({
      seq: 1,
      role: "assistant",
      createdAt: "now",
      sink,
      policy: { intervalMs: 60_000, maxEvents: 4 },
    });
    writer.push(start);
    for (let token = 0; token < 400; token++) writer.push({ type: "text-delta", index: 0, text: "y" });
    await writer.complete();
    expect(sink.writes.length).toBeLessThanOrEqual(2);
  });

  test("events after complete are ignored", async () => {
    const sink = recordingSink();
    const writer = createStreamingWriter({ seq: 1, role: "assistant", createdAt: "now", sink });
    writer.push(start);
    await writer.complete();
    writer.push({ type: "text-delta", index: 0, text: "late" });
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(sink.writes).toHaveLength(1);
  });
});
