import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { configureConnection } from "./driver.js";
import { SqliteTraceTables } from "./trace-tables.js";
import {
  type TraceWorkerData,
  type TraceWorkerReply,
  type TraceWorkerRequest,
  unpackTraces,
} from "./trace-transfer.js";

/**
 * The SQLite trace writer's thread: its own connection to the store's file, so that redacting, chunking,
 * compressing and every disk write of a trace happen off the gateway's event loop.
 */
const port = parentPort!;
const data = workerData as TraceWorkerData;
const database = new Database(data.path);
configureConnection(database);
// This connection only writes traces. No sync at all: a trace may be lost to a power cut (never to a process
// crash: the log is written before COMMIT returns), which traces can afford. A page cache of 4 MB holds the
// hot index leaves; no memory map, whose touched pages counted in the process's RSS for the file's size.
database.pragma("synchronous = OFF");
database.pragma(`cache_size = ${-4 * 1024}`);
database.pragma("mmap_size = 0");
database.pragma("wal_autocheckpoint = 4000");
const traces = new SqliteTraceTables(database, data.retention, data.secrets);

port.on("message", (request: TraceWorkerRequest) => {
  let reply: TraceWorkerReply;
  try {
    reply = { id: request.id, result: handle(request) };
  } catch (error) {
    reply = { id: request.id, error: (error as Error).message };
  }
  // Written (or failed) and nothing here holds a view of its bytes any more: the buffer goes back.
  if (request.kind === "write" && "result" in reply) {
    reply.spare = request.packed.bytes;
    port.postMessage(reply, [request.packed.bytes]);
  } else {
    port.postMessage(reply);
  }
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
