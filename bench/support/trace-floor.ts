import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { fixed, median } from "../harness.js";

/** A trace's four bodies, in Parley's order: client request, upstream request, upstream answer, client answer. */
export type TraceBodies = readonly [string, string, string, string];

const BATCH = 32;

/**
 * The least a trace of these bodies can cost a gateway that keeps it in SQLite off its event loop, in CPU µs per
 * trace of this whole process (this thread, the writer's, V8's helpers): per trace, the four bodies encoded to
 * UTF-8 into one buffer and a few fields, handed in batches of 32 (about what Parley's 10 ms gathers at the bench's
 * rates) to a worker thread that inserts a row each (trace-floor-worker.mjs). A request equal to the previous
 * trace's is not stored again, an answer of 4 KB or more is deflated; nothing is redacted, chunked, counted or pruned.
 * Median of three rounds.
 */
export async function traceFloor(bodies: TraceBodies, traces = 16_000): Promise<number> {
  const folder = mkdtempSync(join(tmpdir(), "parley-trace-floor-"));
  const worker = new Worker(new URL("./trace-floor-worker.mjs", import.meta.url), {
    workerData: { path: join(folder, "floor.db") },
  });
  try {
    const write = batchWriter(worker, bodies);
    for (let sent = 0; sent < 2_000; sent += BATCH) await write();
    const rounds: number[] = [];
    for (let round = 0; round < 3; round++) {
      const before = process.cpuUsage();
      for (let sent = 0; sent < traces; sent += BATCH) await write();
      const used = process.cpuUsage(before);
      rounds.push((used.user + used.system) / traces);
    }
    return median(rounds);
  } finally {
    await worker.terminate();
    rmSync(folder, { recursive: true, force: true });
  }
}

function batchWriter(worker: Worker, bodies: TraceBodies): () => Promise<void> {
  const bytesPerTrace = bodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0);
  let spare: ArrayBuffer | undefined;
  let next = 0;
  return async () => {
    const bytes = spare === undefined ? Buffer.allocUnsafeSlow(bytesPerTrace * BATCH) : Buffer.from(spare);
    let offset = 0;
    const fields: unknown[] = [];
    const lengths: number[][] = [];
    for (let index = 0; index < BATCH; index++) {
      lengths.push(
        bodies.map((body) => {
          const written = bytes.write(body, offset, "utf8");
          offset += written;
          return written;
        }),
      );
      fields.push({
        id: `trace_${(next++).toString(16).padStart(32, "0")}`,
        requestId: "req_0192f3c4d5e6a7b8c9d0e1f2a3b4c5d6",
        createdAt: new Date().toISOString(),
        route: "POST /v1/messages",
        status: 200,
        durationMs: 0.61,
        inputTokens: 1812,
        outputTokens: 64,
      });
    }
    const reply = new Promise<ArrayBuffer>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    worker.postMessage({ fields, lengths, bytes: bytes.buffer }, [bytes.buffer as ArrayBuffer]);
    spare = await reply;
    worker.removeAllListeners("error");
  };
}

export interface TraceFloorFigures {
  /** µs per trace, by mode (`traceFloor`). */
  floor: { json: number; stream: number };
  /** Medians of the cells, CPU ms per request. */
  parley: { json: number; stream: number };
  off: { json: number; stream: number };
  bareJson: number;
  /** µs per json request of the translation's JSON work and of the log line (peer.bench.ts's `jsonFloor`). */
  translation: number;
}

/** What the floor says of the traces-off and bare-proxy targets, for docs/benchmarks.md. */
export function traceFloorReport(figures: TraceFloorFigures): string {
  const { floor, parley, off } = figures;
  const withFloor = (mode: "json" | "stream") => (off[mode] + floor[mode] / 1000) / off[mode];
  const times = (mode: "json" | "stream") => ((parley[mode] - off[mode]) * 1000) / floor[mode];
  const gateway = (figures.bareJson + (figures.translation + floor.json) / 1000) / figures.bareJson;
  const against = (mode: "json" | "stream") => `${withFloor(mode) <= 1.15 ? "above" : "below"} it for ${mode}`;
  return [
    "The floor of a trace: the least work that keeps a trace of these bodies in SQLite off the event loop",
    "(`bench/support/trace-floor.ts`: the four bodies encoded into one buffer, handed to a worker thread in batches",
    "of 32, a row each, a request equal to the previous trace's not stored again, an answer of 4 KB or more deflated;",
    `nothing redacted, chunked, counted or pruned), measured in the benchmark's own process: ${fixed(floor.json, 1)} µs a json`,
    `request, ${fixed(floor.stream, 1)} µs a stream. Added to traces off's CPU here, that is ${fixed(withFloor("json"))}x traces off`,
    `(json) and ${fixed(withFloor("stream"))}x (stream): the 1.15 target is ${against("json")}, ${against("stream")}. Parley's`,
    `traces cost ${fixed((parley.json - off.json) * 1000, 0)} and ${fixed((parley.stream - off.stream) * 1000, 0)} µs (the cells above), ${fixed(times("json"), 1)} and ${fixed(times("stream"), 1)} times it: what they do beyond`,
    "it is the redaction scan, the content-defined chunks and their hashes, the compression, the byte accounting",
    "and retention, and on the request thread the capture of the answers and their loss report. With the",
    `translation's floor above, a gateway that translates, logs and keeps these traces is at ${fixed(gateway)}x the bare proxy`,
    `per json request before it converts, validates or routes anything: ${
      gateway > 1.3
        ? "the 1.3x target for the default config is below this floor."
        : `the 1.3x target leaves ${fixed((1.3 - gateway) * figures.bareJson * 1000, 0)} µs for the rest.`
    }`,
  ].join("\n");
}
