import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Worker } from "node:worker_threads";
import type { QueuedTrace, TraceSink } from "../traces/trace-queue.js";
import type { TraceRetentionPolicy } from "../traces/trace-store.js";
import { startWorkerThread } from "../worker-thread.js";
import {
  type PackedTraces,
  packTraces,
  type TraceWorkerData,
  type TraceWorkerReply,
  type TraceWorkerRequest,
} from "./trace-transfer.js";

type Call =
  | { kind: "write"; packed: PackedTraces }
  | { kind: "prune"; policy: TraceRetentionPolicy }
  | { kind: "close" };

const WRITER_YOUNG_GENERATION_MB = 8;

/** A batch buffer larger than this (a batch of very long histories) is let go rather than kept for the next. */
const MAX_SPARE_BYTES = 16 * 1024 * 1024;

/**
 * The SQLite trace writer seen from the store: a worker thread (started on the first write) that owns a
 * connection of its own. A worker that dies fails what it held; the next write starts another.
 */
export class SqliteTraceWorker implements TraceSink {
  private worker: Worker | undefined;
  private nextId = 0;
  /** Set by `close`: the worker stays referenced until it exits, or a script ending in `await close()` ends first. */
  private closing = false;
  private readonly calls = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  /** The last batch's buffer, given back by the writer. */
  private spare: ArrayBuffer | undefined;

  constructor(private readonly data: TraceWorkerData) {}

  get running(): boolean {
    return this.worker !== undefined;
  }

  write(traces: readonly QueuedTrace[]): Promise<Array<string | undefined>> {
    const { packed, transfer } = packTraces(traces, this.spare);
    this.spare = undefined;
    return this.call({ kind: "write", packed }, transfer) as Promise<Array<string | undefined>>;
  }

  prune(policy: TraceRetentionPolicy): Promise<number> {
    return this.call({ kind: "prune", policy }) as Promise<number>;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (worker === undefined) return;
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    this.closing = true;
    await this.call({ kind: "close" }).catch(() => worker.terminate());
    await exited;
    this.closing = false;
  }

  private call(call: Call, transfer: ArrayBuffer[] = []): Promise<unknown> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    // Held open only while it owes an answer: an idle writer does not keep the process alive.
    if (this.calls.size === 0) worker.ref();
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      worker.postMessage({ ...call, id } satisfies TraceWorkerRequest, transfer);
    });
  }

  private start(): Worker {
    const { script, options } = workerScript();
    const worker = startWorkerThread(script, {
      ...options,
      workerData: this.data,
      // V8 grows a busy isolate's young generation to 48 MB; the writer's garbage is a batch's worth. Measured
      // under the bench's json and stream loads, side by side (8 reps): 16 MB held ~25 MB less than 48, and 8 MB
      // ~10 MB less than 16 (its new space resident at 8.4 against 16.8 MB), the writer's CPU within the noise, the
      // 1.4 MB request's too. At 4 MB more of each batch outlived a scavenge: old space grew by as much.
      resourceLimits: { maxYoungGenerationSizeMb: WRITER_YOUNG_GENERATION_MB },
    });
    worker.unref();
    worker.on("message", (reply: TraceWorkerReply) => {
      const call = this.calls.get(reply.id);
      if (call === undefined) return;
      this.calls.delete(reply.id);
      if (this.calls.size === 0 && !this.closing) worker.unref();
      if ("error" in reply) {
        call.reject(new Error(reply.error));
        return;
      }
      if (reply.spare !== undefined && reply.spare.byteLength <= MAX_SPARE_BYTES) this.spare = reply.spare;
      call.resolve(reply.result);
    });
    const fail = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const call of this.calls.values()) call.reject(error);
      this.calls.clear();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`the trace writer stopped (exit code ${code})`)));
    this.worker = worker;
    return worker;
  }
}

/**
 * Where the worker's module is: beside this one, in the compiled package (`dist/store/sqlite/`) as beside the
 * bundled CLI (`dist/`, built there by scripts/bundle-cli.mjs), as the tokenizer's thread is found; or
 * (running from the TypeScript sources, as the tests do) the source itself through tsx.
 */
function workerScript(): { script: string | URL; options: { eval?: boolean } } {
  const here = import.meta.url;
  if (here.endsWith(".ts")) {
    const source = JSON.stringify(new URL("./trace-worker.ts", here).href);
    const bootstrap = `(async () => { const { register } = await import("tsx/esm/api"); register(); await import(${source}); })();`;
    return { script: bootstrap, options: { eval: true } };
  }
  const compiled = new URL("./trace-worker.js", here);
  if (!existsSync(fileURLToPath(compiled))) throw new Error("the trace writer's module (trace-worker.js) is missing");
  return { script: compiled, options: {} };
}
