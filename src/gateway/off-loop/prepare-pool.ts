import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { InvalidRequestError, ParleyError } from "../../core/index.js";
import { startWorkerThread } from "../../store/worker-thread.js";
import type { GatewayConfig } from "../config/types.js";
import { AnsweredError } from "../http/answered-error.js";
import type { PlanInput, PlannedBody, PrepareJob, ReadInput, ReadSummary, ThreadError, ViewInput } from "./protocol.js";

/**
 * Large requests are prepared off the event loop.
 *
 * Reading, converting, repairing and encoding a request costs time and memory in proportion to its size: a
 * 24.8 MiB Chat request of 800,000 messages took 5.5 s of the event loop (0.3 s parsing, 1.5-2.5 s validation and
 * conversion, 0.5-2 s repair, 1.2-2 s encoding, 0.15-0.4 s serialising, most of it garbage collection), and no other
 * request, `/health` included, was answered meanwhile. A body over `OFF_LOOP_BODY_CHARACTERS` is therefore read and
 * planned on a prepare thread: the event loop gets back a summary (model, stream flag, tools and settings, lossy
 * report, token estimate), routes it and fits it as any request, and the thread plans it for the provider chosen
 * and sends back the upstream body text and the repair and lossy reports. A small body costs less than the
 * crossing (two messages and a copy of the text each way), so it stays on the loop.
 *
 * Memory: at most `threads` requests are held in their parsed form at once, one per thread, each within the
 * thread's heap ceiling (`PREPARE_HEAP_MB`); a request that needs more is a 413, and the thread is replaced. Up to
 * `MAX_WAITING` more wait their turn as text (at most `limits.maxBodyBytes` each); past that a request is refused
 * at once with `overloaded_error`, as a server at capacity answers.
 *
 * The inspector's views of large traces (`view`) are built on the same threads, in the same bound: a view is work in
 * proportion to its trace as a request is (a 38.8 MB trace's held the event loop 5.1 s).
 */

/** Bodies longer than this (in characters) are prepared on a thread; a 1 MiB body costs the loop about 0.1 s. */
export const OFF_LOOP_BODY_CHARACTERS = 1 << 20;
/**
 * The most prepare threads: one per core but the event loop's, at most this many. With two cores, two threads
 * starved the loop of its core (a `/health` answer took up to 1.8 s under four large requests); one left it free.
 */
export const MAX_PREPARE_THREADS = 4;
/** Requests waiting for a prepare thread beyond those being prepared; more are refused. */
export const MAX_WAITING = 8;
/**
 * A prepare thread's old-generation heap: a 24.8 MiB request of 800,000 messages peaked at about 1.1 GB (the parsed
 * body, the canonical history, its repaired copy, the encoded body and its text).
 */
export const PREPARE_HEAP_MB = 1536;

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** One thread: one request at a time, its jobs answered by id. */
class PrepareThread {
  readonly pending = new Map<number, Pending>();
  busy = false;
  dead = false;

  constructor(
    readonly worker: Worker,
    onExit: () => void,
  ) {
    worker.unref();
    worker.on("message", (reply: { id: number; result?: unknown; error?: ThreadError }) => {
      const job = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if (reply.error !== undefined) job?.reject(fromThread(reply.error));
      else job?.resolve(reply.result);
    });
    const stop = (error: Error) => {
      this.dead = true;
      for (const job of this.pending.values()) job.reject(error);
      this.pending.clear();
      onExit();
    };
    worker.on("error", (error: Error & { code?: string }) =>
      stop(
        error.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? new ParleyError(
              "request_too_large",
              `the request needs more than the ${PREPARE_HEAP_MB} MB one request may hold while it is converted`,
            )
          : error,
      ),
    );
    worker.on("exit", (code) => stop(new Error(`a prepare thread exited (${code})`)));
  }

  send<T>(job: PrepareJob): Promise<T> {
    if (this.dead) return Promise.reject(new Error("the prepare thread has exited"));
    return new Promise<T>((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(job.id, { resolve: resolve as (value: unknown) => void, reject });
      this.worker.postMessage(job);
    });
  }
}

/** An error from the thread as the class it was there, so that it reaches the client as it would have. */
function fromThread(error: ThreadError): Error {
  if (error.name === "InvalidRequestError") {
    const prefix = error.path === undefined ? "" : `${error.path}: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    return new InvalidRequestError(message, error.path);
  }
  if (error.type !== undefined && error.name === "AnsweredError") {
    return new AnsweredError(error.type as ParleyError["type"], error.message, {
      ...(error.status === undefined ? {} : { status: error.status }),
      ...(error.details === undefined ? {} : { details: error.details }),
    });
  }
  if (error.type !== undefined) {
    return new ParleyError(error.type as ParleyError["type"], error.message, {
      ...(error.status === undefined ? {} : { status: error.status }),
    });
  }
  return new Error(error.message);
}

/** A request being prepared on its thread, which it holds until `release`. */
export class PreparedRequest {
  private released = false;

  constructor(
    private readonly thread: PrepareThread,
    private readonly id: number,
    readonly summary: ReadSummary,
    private readonly free: () => void,
  ) {}

  /** The o200k_base count of the whole prompt (asked only when the estimate reaches the model's window). */
  countInputTokens(): Promise<number> {
    return this.thread.send<number>({ kind: "count", id: this.id });
  }

  plan(input: PlanInput): Promise<PlannedBody> {
    return this.thread.send<PlannedBody>({ kind: "plan", id: this.id, ...input });
  }

  /** Drops the request from its thread and frees the thread for the next; safe to call more than once. */
  release(): void {
    if (this.released) return;
    this.released = true;
    if (!this.thread.dead) this.thread.send({ kind: "release", id: this.id }).catch(() => undefined);
    this.free();
  }
}

export class PreparePool {
  private readonly threads: PrepareThread[] = [];
  private readonly waiting: Array<(thread: PrepareThread) => void> = [];
  private nextId = 0;

  constructor(
    private readonly config: GatewayConfig,
    readonly size = Math.max(1, Math.min(availableParallelism() - 1, MAX_PREPARE_THREADS)),
  ) {}

  /**
   * Reads a request on a thread. Undefined when the request needs what only the event loop has (a store, for
   * stored history or a kept answer; compaction), which then reads it itself.
   */
  async read(input: ReadInput): Promise<PreparedRequest | undefined> {
    const thread = await this.acquire();
    const id = this.nextId++;
    const free = () => this.hand(thread);
    try {
      const summary = await thread.send<ReadSummary | { onLoop: true }>({ kind: "read", id, ...input });
      if ("onLoop" in summary) {
        free();
        return undefined;
      }
      return new PreparedRequest(thread, id, summary, free);
    } catch (error) {
      free();
      throw error;
    }
  }

  /**
   * An inspector view of a large trace, built on a thread as a request is prepared, and in the same bound: one job a
   * thread, within its heap (a view that needs more is a 413, and the thread is replaced), the same queue. Returns
   * the view's JSON in UTF-8.
   */
  async view(input: ViewInput): Promise<Uint8Array> {
    const thread = await this.acquire();
    try {
      return await thread.send<Uint8Array>({ kind: "view", id: this.nextId++, ...input });
    } catch (error) {
      if (!(error instanceof ParleyError && error.type === "request_too_large")) throw error;
      throw new ParleyError(
        "request_too_large",
        `the view of this trace needs more than the ${PREPARE_HEAP_MB} MB a thread may hold; its bodies are in /raw`,
      );
    } finally {
      this.hand(thread);
    }
  }

  /** Stops every thread (the gateway's close). */
  async close(): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.worker.terminate()));
  }

  private acquire(): Promise<PrepareThread> {
    const idle = this.threads.find((thread) => !thread.busy && !thread.dead);
    if (idle !== undefined) {
      idle.busy = true;
      return Promise.resolve(idle);
    }
    if (this.threads.length < this.size) {
      const thread = this.start();
      thread.busy = true;
      return Promise.resolve(thread);
    }
    if (this.waiting.length >= MAX_WAITING) {
      return Promise.reject(
        new ParleyError("overloaded_error", "too many large requests at once; try again shortly", { status: 503 }),
      );
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** A thread done with its request goes to the next waiting one (a dead one's place to a new thread). */
  private hand(thread: PrepareThread): void {
    const next = this.waiting.shift();
    if (next === undefined) {
      thread.busy = false;
      return;
    }
    next(thread.dead ? this.start() : thread);
  }

  private start(): PrepareThread {
    const thread: PrepareThread = new PrepareThread(startPrepareWorker(this.config), () => {
      const index = this.threads.indexOf(thread);
      if (index >= 0) this.threads.splice(index, 1);
    });
    this.threads.push(thread);
    return thread;
  }
}

/** The compiled worker beside this module (or the CLI bundle's); from the TypeScript sources, through tsx. */
function startPrepareWorker(config: GatewayConfig): Worker {
  const options = { workerData: config, resourceLimits: { maxOldGenerationSizeMb: PREPARE_HEAP_MB } };
  const compiled = new URL("./prepare-worker.js", import.meta.url);
  if (existsSync(fileURLToPath(compiled))) return startWorkerThread(compiled, options);
  const source = new URL("./prepare-worker.ts", import.meta.url).href;
  const bootstrap = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

const pools = new WeakMap<object, PreparePool>();

/** The gateway's pool, started on its first large request. */
export function preparePool(state: { config: GatewayConfig }): PreparePool {
  let pool = pools.get(state);
  if (pool === undefined) {
    pool = new PreparePool(state.config);
    pools.set(state, pool);
  }
  return pool;
}
