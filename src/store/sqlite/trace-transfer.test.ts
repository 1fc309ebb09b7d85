import { describe, expect, test } from "vitest";
import type { QueuedTrace } from "../traces/trace-queue.js";
import { packTraces, unpackTraces } from "./trace-transfer.js";

const queued = (id: string, bodies: QueuedTrace["bodies"]): QueuedTrace => ({
  fields: { id, requestId: `req-${id}`, createdAt: "2026-01-01T00:00:00.000Z", route: "/v1/messages" } as never,
  bodies,
});
const bytes = (text: string) => new Uint8Array(Buffer.from(text, "utf8"));

describe("trace batches crossing to the writer", () => {
  test("pack into the buffer the writer gave back when it is large enough, and unpack every body exactly", () => {
    const first = [queued("a", [bytes("client é"), bytes("upstream"), undefined, "lone \ud800"])];
    const { packed, transfer } = packTraces(first);
    // Room to spare: the next batch of about this size fits in it.
    expect(packed.bytes.byteLength).toBeGreaterThan(Buffer.byteLength("client éupstream"));
    expect(transfer).toEqual([packed.bytes]);
    const second = [queued("b", [bytes("two"), undefined, bytes("answer"), undefined])];
    const again = packTraces(second, packed.bytes);
    expect(again.packed.bytes).toBe(packed.bytes);
    const [unpacked] = unpackTraces(again.packed);
    expect(unpacked!.bodies.map((body) => (body instanceof Uint8Array ? Buffer.from(body).toString() : body))).toEqual([
      "two",
      undefined,
      "answer",
      undefined,
    ]);
    const [firstUnpacked] = unpackTraces(packTraces(first).packed);
    expect(firstUnpacked!.bodies[3]).toBe("lone \ud800");
    expect(Buffer.from(firstUnpacked!.bodies[0] as Uint8Array).toString()).toBe("client é");
  });

  test("a spare too small for the batch is left for a new buffer", () => {
    const small = packTraces([queued("a", [bytes("x"), undefined, undefined, undefined])]).packed.bytes;
    const large = [queued("b", [bytes("y".repeat(10_000)), undefined, undefined, undefined])];
    const { packed } = packTraces(large, small);
    expect(packed.bytes).not.toBe(small);
    expect(Buffer.from(unpackTraces(packed)[0]!.bodies[0] as Uint8Array).toString()).toBe("y".repeat(10_000));
  });
});
