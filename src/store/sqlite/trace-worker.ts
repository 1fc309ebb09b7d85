import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import type { TraceRetentionPolicy } from "../types.js";
import { configureConnection } from "./connection.js";
import { type PackedTraces, unpackTraces } from "./trace-transfer.js";
import { SqliteTraces } from "./traces.js";

/**
 * The SQLite trace writer's thread: its own connection to the store's file, so that redacting, chunking,
 * compressing and every disk write of a trace happen off the gateway's event loop.
 */
export interface TraceWorkerData {
  path: string;
  retention: TraceRetentionPolicy;
  secrets: readonly string[];
}

export type TraceWorkerRequest =
  | { id: number; kind: "write"; packed: PackedTraces }
  | { id: number; kind: "prune"; policy: TraceRetentionPolicy }
  | { id: number; kind: "close" };

export type TraceWorkerReply = { id: number; result: unknown } | { id: number; error: string };

const port = parentPort!;
const data = workerData as TraceWorkerData;
const database = new Database(data.path);
configureConnection(database);
const traces = new SqliteTraces(database, data.retention, data.secrets);

port.on("message", (request: TraceWorkerRequest) => {
  let reply: TraceWorkerReply;
  try {
    reply = { id: request.id, result: handle(request) };
  } catch (error) {
    reply = { id: request.id, error: (error as Error).message };
  }
  port.postMessage(reply);
  if (request.kind === "close") port.close();
});

function handle(request: TraceWorkerRequest): unknown {
  switch (request.kind) {
    case "write":
      return traces.write(unpackTraces(request.packed));
    case "prune":
      return traces.prune(request.policy);
    case "close":
      database.close();
      return undefined;
    default:
      return request satisfies never;
  }
}
