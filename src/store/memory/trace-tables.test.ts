import { describe, expect, test } from "vitest";
import { trace } from "../traces/contract.suite.js";
import { type QueuedTrace, traceFields } from "../traces/trace-queue.js";
import { MemoryTraceTables } from "./trace-tables.js";

const queued = (id: string, clientRequest: string): QueuedTrace => {
  const whole = { ...trace(id, "2026-01-01T00:00:00.000Z"), clientRequest };
  const bytes = (text: string | undefined) => (text === undefined ? undefined : Buffer.from(text, "utf8"));
  return {
    fields: traceFields(whole),
    bodies: [
      bytes(whole.clientRequest),
      bytes(whole.upstreamRequest),
      bytes(whole.upstreamResponse),
      bytes(whole.clientResponse),
    ],
  };
};

/** Runs `work` while counting the event loop turns (setImmediate callbacks) that ran meanwhile. */
async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let running = true;
  const spin = () => {
    if (!running) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  await work();
  running = false;
  return turns;
}

describe("memory store traces", () => {
  test("a batch of small traces is written in a slice or two, not a turn of the event loop per trace", async () => {
    // A slice long enough for the whole batch on a loaded machine: how many turns it takes is then up to the
    // writer, not to the machine's speed.
    const traces = new MemoryTraceTables({}, [], 5_000);
    const batch = Array.from({ length: 200 }, (_, index) => queued(`small-${index}`, `{"n":${index}}`));
    const turns = await turnsDuring(() => traces.write(batch));
    // A loop busy with requests ran a whole turn of I/O for each: 200 traces fell behind 16 clients.
    expect(turns).toBeLessThanOrEqual(1);
    expect(traces.usage().traces).toBe(200);
  });

  test("a batch of large bodies yields to the event loop between slices", async () => {
    const traces = new MemoryTraceTables({}, []);
    const noise = (seed: number) =>
      Array.from({ length: 40_000 }, (_, index) => ((index * 7919 + seed) % 65_521).toString(36)).join(",");
    const batch = Array.from({ length: 40 }, (_, index) => queued(`large-${index}`, noise(index)));
    const turns = await turnsDuring(() => traces.write(batch));
    expect(turns).toBeGreaterThan(1);
    expect(traces.usage().traces).toBe(40);
  });
});
