import { describe, expect, test } from "vitest";
import { type QueuedTrace, TraceQueue, type TraceSink } from "./trace-queue.js";
import type { TraceRecord } from "./trace-store.js";

/** A sink that reads every body only after a delay, as a writer thread busy with the batch before would. */
class SlowSink implements TraceSink {
  readonly seen = new Map<string, string[]>();
  batches = 0;

  async write(traces: readonly QueuedTrace[]): Promise<Array<string | undefined>> {
    this.batches++;
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (const trace of traces) {
      this.seen.set(
        trace.fields.id,
        trace.bodies.map((body) => (body instanceof Uint8Array ? Buffer.from(body).toString("utf8") : String(body))),
      );
    }
    return traces.map(() => undefined);
  }
}

const record = (index: number): TraceRecord => ({
  id: `t${index}`,
  requestId: `r${index}`,
  createdAt: "2026-01-01T00:00:00.000Z",
  route: "POST /v1/messages",
  // ~60 KB a trace: a 1 MB segment holds a few traces, so segments are filled, freed and filled again.
  clientRequest: `${index}:${"a".repeat(20_000)}é`,
  upstreamRequest: `${index}:${"b".repeat(20_000)}`,
  upstreamResponse: `${index}:${"c".repeat(10_000)}`,
  clientResponse: `${index}:${"d".repeat(10_000)}`,
  lossy: [],
  repair: [],
  timings: {},
});

describe("trace queue", () => {
  test("bodies read by the sink are those queued, while segments are reused across many batches", async () => {
    const sink = new SlowSink();
    const queue = new TraceQueue(sink, { batchTraces: 7, delayMs: 1 });
    const written: Array<Promise<void>> = [];
    for (let index = 0; index < 300; index++) {
      written.push(queue.enqueue(record(index)));
      // Queued between batches too: a segment in use must never be filled again.
      if (index % 13 === 0) await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await Promise.all(written);
    await queue.close();
    expect(sink.batches).toBeGreaterThan(20);
    for (let index = 0; index < 300; index++) {
      const expected = record(index);
      expect(sink.seen.get(`t${index}`)).toEqual([
        expected.clientRequest,
        expected.upstreamRequest,
        expected.upstreamResponse,
        expected.clientResponse,
      ]);
    }
  });
});
