import type { QueuedTrace, TraceFields } from "../traces/trace-queue.js";
import type { TraceRetentionPolicy } from "../traces/trace-store.js";

/**
 * A batch of traces as it crosses to the writer's thread: the bodies' UTF-8 bytes in one buffer that is
 * transferred, not copied, and the rest (ids, numbers, reports) cloned. Cloning the bodies as strings cost the
 * event loop several times more (measured: about 50 µs a trace of 15 KB, against a few).
 */
export interface PackedTraces {
  fields: TraceFields[];
  /** Per trace and body slot: the body's length in `bytes`, the text itself (UTF-8 cannot carry it) or null. */
  bodies: Array<Array<number | string | null>>;
  bytes: ArrayBuffer;
}

/**
 * Packs a batch into `spare` (a buffer the writer gave back) when it is large enough, else into a new one a
 * little larger than needed. A batch's buffer handed back and forth spares the allocation, and the writer's
 * thread no longer holds buffers it is done with until its own garbage collector runs (a few MB each, tens
 * of MB of the process's memory between two of its collections).
 */
export function packTraces(
  batch: readonly QueuedTrace[],
  spare?: ArrayBuffer,
): { packed: PackedTraces; transfer: ArrayBuffer[] } {
  let total = 0;
  for (const trace of batch) {
    for (const body of trace.bodies) if (body !== undefined && typeof body !== "string") total += body.length;
  }
  const bytes =
    spare !== undefined && spare.byteLength >= total
      ? Buffer.from(spare)
      : Buffer.allocUnsafeSlow(Math.ceil(total * 1.25));
  let offset = 0;
  const bodies = batch.map((trace) =>
    trace.bodies.map((body): number | string | null => {
      if (body === undefined) return null;
      if (typeof body === "string") return body;
      bytes.set(body, offset);
      offset += body.length;
      return body.length;
    }),
  );
  const buffer = bytes.buffer as ArrayBuffer;
  return { packed: { fields: batch.map((trace) => trace.fields), bodies, bytes: buffer }, transfer: [buffer] };
}

export function unpackTraces(packed: PackedTraces): QueuedTrace[] {
  let offset = 0;
  return packed.fields.map((fields, index) => ({
    fields,
    bodies: packed.bodies[index]!.map((body) => {
      if (body === null) return undefined;
      if (typeof body === "string") return body;
      const view = new Uint8Array(packed.bytes, offset, body);
      offset += body;
      return view;
    }),
  }));
}

/** What the writer's thread is started with. */
export interface TraceWorkerData {
  path: string;
  retention: TraceRetentionPolicy;
  secrets: readonly string[];
}

export type TraceWorkerRequest =
  | { id: number; kind: "write"; packed: PackedTraces }
  | { id: number; kind: "prune"; policy: TraceRetentionPolicy }
  | { id: number; kind: "close" };

/** A write's reply carries its batch's buffer back (`spare`), for the next batch. */
export type TraceWorkerReply = { id: number; result: unknown; spare?: ArrayBuffer } | { id: number; error: string };
