import { BODY_SLOTS } from "../trace-prepare.js";
import type { TraceRecord } from "../types.js";

/**
 * A batch of traces as it crosses to the writer's thread: the bodies' UTF-8 bytes in one buffer that is
 * transferred, not copied, and the rest (ids, numbers, reports) cloned. Cloning the bodies as strings cost the
 * event loop several times more (measured: about 50 µs a trace of 15 KB, against a few).
 */
export interface PackedTraces {
  traces: Array<Omit<TraceRecord, (typeof BODY_SLOTS)[number]> & { bodies: Array<number | string | null> }>;
  bytes: ArrayBuffer;
}

/** A body's place in `bytes` is its length there; a string that UTF-8 cannot carry goes as itself. */
export function packTraces(batch: readonly TraceRecord[]): { packed: PackedTraces; transfer: ArrayBuffer[] } {
  let total = 0;
  const traces = batch.map((trace) => {
    const { clientRequest, upstreamRequest, upstreamResponse, clientResponse, ...rest } = trace;
    const bodies = [clientRequest, upstreamRequest, upstreamResponse, clientResponse].map(
      (body): number | string | null => {
        if (body === undefined || body === null) return null;
        const text = typeof body === "string" ? body : JSON.stringify(body);
        if (!(text as unknown as { isWellFormed(): boolean }).isWellFormed()) return text;
        const length = Buffer.byteLength(text);
        total += length;
        return length;
      },
    );
    return { ...rest, bodies };
  });
  const bytes = Buffer.allocUnsafeSlow(total);
  let offset = 0;
  batch.forEach((trace, index) => {
    traces[index]!.bodies.forEach((body, slot) => {
      if (typeof body !== "number") return;
      bytes.write(trace[BODY_SLOTS[slot]!] as string, offset);
      offset += body;
    });
  });
  const buffer = bytes.buffer as ArrayBuffer;
  return { packed: { traces, bytes: buffer }, transfer: [buffer] };
}

export function unpackTraces(packed: PackedTraces): TraceRecord[] {
  const bytes = Buffer.from(packed.bytes);
  let offset = 0;
  return packed.traces.map(({ bodies, ...rest }) => {
    const trace = rest as TraceRecord;
    bodies.forEach((body, slot) => {
      if (body === null) return;
      if (typeof body === "string") {
        trace[BODY_SLOTS[slot]!] = body;
        return;
      }
      trace[BODY_SLOTS[slot]!] = bytes.toString("utf8", offset, offset + body);
      offset += body;
    });
    return trace;
  });
}
