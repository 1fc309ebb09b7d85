import { Worker, type WorkerOptions } from "node:worker_threads";

/**
 * A worker thread of this package's own (the trace writer, the tokenizer), with node's flags as the process was
 * started with, where a worker takes them: `--cpu-prof` profiles it too, a loader loads it. A flag a worker
 * refuses (`--trace-gc`, `--input-type` of a program run with `-e`...) made the constructor throw, and the
 * gateway run as `node --trace-gc parley.js serve` went down on its first traced request; such a start falls
 * back to no flags at all.
 */
export function startWorkerThread(script: string | URL, options: WorkerOptions = {}): Worker {
  const execArgv = process.execArgv.filter((flag) => !flag.startsWith("--input-type"));
  try {
    return new Worker(script, { ...options, execArgv });
  } catch (error) {
    if ((error as { code?: string }).code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw error;
    return new Worker(script, { ...options, execArgv: [] });
  }
}
