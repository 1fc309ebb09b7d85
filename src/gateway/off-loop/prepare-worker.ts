import { parentPort, workerData } from "node:worker_threads";
import type { GatewayConfig } from "../config/types.js";
import { AnsweredError } from "../http/answered-error.js";
import { buildView } from "../inspector/build-view.js";
import { countRequestTokens, planRequest, type ReadRequest, readRequest, ThreadProviders } from "./prepare.js";
import type { PrepareJob, ThreadError } from "./protocol.js";

/**
 * A prepare thread (see `prepare-pool.ts`): one request at a time, read, then planned for the provider the event
 * loop routed it to. The read request is held here between the two, and dropped once planned or released. Between
 * requests it builds the inspector's views of large traces.
 */

const providers = new ThreadProviders(workerData as GatewayConfig);
const held = new Map<number, ReadRequest>();

async function run(job: PrepareJob): Promise<unknown> {
  switch (job.kind) {
    case "read": {
      held.clear();
      const read = readRequest(job);
      if ("onLoop" in read) return read;
      held.set(job.id, read.request);
      return read.summary;
    }
    case "plan": {
      const request = heldRequest(job.id);
      // A request sent again (reasoning refused) is planned again: it is held until released.
      return planRequest(request, providers, job);
    }
    case "count":
      return countRequestTokens(heldRequest(job.id));
    case "release":
      held.delete(job.id);
      return undefined;
    case "view":
      // An inspector view of a large trace (`src/gateway/inspector/routes.ts`), on its own: no request is held.
      return buildView(job);
    default:
      throw new Error(`unknown job ${(job as { kind: string }).kind}`);
  }
}

function heldRequest(id: number): ReadRequest {
  const request = held.get(id);
  if (request === undefined) throw new Error(`request ${id} is not held`);
  return request;
}

function threadError(error: unknown): ThreadError {
  const thrown = error as Partial<ThreadError> & { message?: string };
  const crossing: ThreadError = { name: thrown.name ?? "Error", message: String(thrown.message ?? error) };
  if (typeof thrown.type === "string") crossing.type = thrown.type;
  if (typeof thrown.status === "number") crossing.status = thrown.status;
  if (typeof thrown.path === "string") crossing.path = thrown.path;
  if (error instanceof AnsweredError && error.details !== undefined) crossing.details = error.details;
  return crossing;
}

parentPort?.on("message", (job: PrepareJob) => {
  run(job).then(
    // A view's bytes cross without a copy.
    (result) =>
      parentPort?.postMessage(
        { id: job.id, result },
        result instanceof Uint8Array ? [result.buffer as ArrayBuffer] : [],
      ),
    (error: unknown) => parentPort?.postMessage({ id: job.id, error: threadError(error) }),
  );
});
