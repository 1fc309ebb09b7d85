import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { redactionTriggers } from "../../src/store/traces/redact.js";
import { fixed, median } from "../harness.js";

/** A trace's four bodies, in Parley's order: client request, upstream request, upstream answer, client answer. */
export type TraceBodies = readonly [string, string, string, string];

const BATCH = 32;

/** Traces a kept floor holds before it deletes the oldest: Parley's default `traces.maxCount`. */
const KEPT_BOUND = 10_000;

export interface TraceFloorOptions {
  /**
   * The floor with what issue 12's other points and the security promise ask of every trace, each done the least
   * way (see trace-floor-worker.mjs): the redaction scan of the bodies stored, the indexes `parley trace show`
   * and the list need, the byte count, and the oldest deleted as the newest come (measured once the bound is
   * reached, as a gateway that has run for a while is).
   */
  kept?: boolean;
}

/**
 * The least a trace of these bodies can cost a gateway that keeps it in SQLite off its event loop, in CPU µs per
 * trace of this whole process (this thread, the writer's, V8's helpers): per trace, the four bodies encoded to
 * UTF-8 into one buffer and a few fields, handed in batches of 32 (about what Parley's 10 ms gathers at the bench's
 * rates) to a worker thread that inserts a row each (trace-floor-worker.mjs). A request equal to the previous
 * trace's is not stored again, an answer of 4 KB or more is deflated. Median of three rounds. `triggered`: bodies
 * the kept floor's scan found a trigger in (each would be redacted on top).
 */
export async function traceFloor(
  bodies: TraceBodies,
  options: TraceFloorOptions = {},
  traces = 16_000,
): Promise<{ micros: number; triggered: number }> {
  const folder = mkdtempSync(join(tmpdir(), "parley-trace-floor-"));
  const worker = new Worker(new URL("./trace-floor-worker.mjs", import.meta.url), {
    workerData: {
      path: join(folder, "floor.db"),
      kept: options.kept === true,
      triggers: redactionTriggers([]).words.source,
      bound: KEPT_BOUND,
    },
  });
  try {
    const write = batchWriter(worker, bodies);
    const warmUp = options.kept === true ? KEPT_BOUND + 2_000 : 2_000;
    for (let sent = 0; sent < warmUp; sent += BATCH) await write();
    const rounds: number[] = [];
    for (let round = 0; round < 3; round++) {
      const before = process.cpuUsage();
      for (let sent = 0; sent < traces; sent += BATCH) await write();
      const used = process.cpuUsage(before);
      rounds.push((used.user + used.system) / traces);
    }
    return { micros: median(rounds), triggered: await write() };
  } finally {
    await worker.terminate();
    rmSync(folder, { recursive: true, force: true });
  }
}

/** A function that sends one batch and resolves, once it is written, to the writer's count of triggered bodies. */
function batchWriter(worker: Worker, bodies: TraceBodies): () => Promise<number> {
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
      const serial = (next++).toString(16).padStart(32, "0");
      fields.push({
        id: `trace_${serial}`,
        requestId: `req_${serial}`,
        createdAt: new Date().toISOString(),
        route: "POST /v1/messages",
        status: 200,
        durationMs: 0.61,
        inputTokens: 1812,
        outputTokens: 64,
      });
    }
    const reply = new Promise<{ bytes: ArrayBuffer; triggered: number }>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    worker.postMessage({ fields, lengths, bytes: bytes.buffer }, [bytes.buffer as ArrayBuffer]);
    const { bytes: returned, triggered } = await reply;
    spare = returned;
    worker.removeAllListeners("error");
    return triggered;
  };
}

/** The floors of a trace, µs per trace by mode: bare, and kept (see `TraceFloorOptions`). */
export interface TraceFloors {
  json: number;
  stream: number;
  kept: { json: number; stream: number };
  /** Bodies the kept floor's redaction scan found a trigger in (each would be redacted on top). */
  triggered: number;
}

export interface TraceFloorFigures {
  floor: TraceFloors;
  /** Medians of the cells, CPU ms per request. */
  parley: { json: number; stream: number };
  off: { json: number; stream: number };
  bareJson: number;
  /** µs per json request of the translation's JSON work and of the log line (peer.bench.ts's `jsonFloor`). */
  translation: number;
}

type Mode = "json" | "stream";

/** What the floors say of the traces-off and bare-proxy targets, for docs/benchmarks.md. */
export function traceFloorReport(figures: TraceFloorFigures): string {
  const { floor, parley, off } = figures;
  const withFloor = (mode: Mode, micros = floor[mode]) => (off[mode] + micros / 1000) / off[mode];
  const withKept = (mode: Mode) => withFloor(mode, floor.kept[mode]);
  const times = (mode: Mode, micros: number) => ((parley[mode] - off[mode]) * 1000) / micros;
  const gateway = (figures.bareJson + (figures.translation + floor.json) / 1000) / figures.bareJson;
  const against = (ratio: (mode: Mode) => number, mode: Mode) =>
    `${ratio(mode) <= 1.15 ? "above" : "below"} it for ${mode}`;
  return [
    "The floor of a trace: the least work that keeps a trace of these bodies in SQLite off the event loop",
    "(`bench/support/trace-floor.ts`: the four bodies encoded into one buffer, handed to a worker thread in batches",
    "of 32, a row each, a request equal to the previous trace's not stored again, an answer of 4 KB or more deflated;",
    `nothing redacted, chunked, counted or pruned), measured in the benchmark's own process: ${fixed(floor.json, 1)} µs a json`,
    `request, ${fixed(floor.stream, 1)} µs a stream. Added to traces off's CPU here, that is ${fixed(withFloor("json"))}x traces off`,
    `(json) and ${fixed(withFloor("stream"))}x (stream): the 1.15 target is ${against(withFloor, "json")}, ${against(withFloor, "stream")}.`,
    "The same floor with what the issue's other points and the security promise ask of every trace, each the least",
    "way: the redaction scan of every body stored (Parley's own trigger search), the indexes that find a trace by",
    "request id and list by time, its bytes counted, and, once the default bound of 10,000 traces is reached, the",
    `oldest deleted as the newest come: ${fixed(floor.kept.json, 1)} µs a json request, ${fixed(floor.kept.stream, 1)} µs a stream, ${fixed(withKept("json"))}x and`,
    `${fixed(withKept("stream"))}x traces off: the 1.15 target is ${against(withKept, "json")}, ${against(withKept, "stream")}${
      floor.triggered > 0 ? ` (${floor.triggered} bodies would be redacted on top)` : ""
    }.`,
    `Parley's traces cost ${fixed((parley.json - off.json) * 1000, 0)} and ${fixed((parley.stream - off.stream) * 1000, 0)} µs (the cells above), ${fixed(times("json", floor.kept.json), 1)} and ${fixed(times("stream", floor.kept.stream), 1)} times the kept`,
    "floor: what they do beyond it is the content-defined chunks and their hashes, the tenant, conversation and",
    "losses indexes, the reports, the retention's bookkeeping, and on the request thread the capture of the",
    "answers and their loss report. With the translation's floor above, a gateway that translates, logs and keeps",
    `these traces (the bare floor) is at ${fixed(gateway)}x the bare proxy per json request before it converts, validates or routes`,
    `anything: ${
      gateway > 1.3
        ? "the 1.3x target for the default config is below this floor."
        : `the 1.3x target leaves ${fixed((1.3 - gateway) * figures.bareJson * 1000, 0)} µs for the rest.`
    }`,
  ].join("\n");
}
