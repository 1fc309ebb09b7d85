// The writer of the trace floor (trace-floor.ts): one SQLite connection with Parley's writer pragmas, one row per
// trace, one transaction per batch. A request equal to the previous trace's is not stored again (a history sent
// again is kept once); an answer of 4 KB or more is deflated (level 1), as Parley's writer does, a smaller one goes
// raw. Nothing redacted, chunked, counted or pruned.
import { parentPort, workerData } from "node:worker_threads";
import { deflateRawSync } from "node:zlib";
import Database from "better-sqlite3";

const database = new Database(workerData.path);
database.pragma("journal_mode = WAL");
database.pragma("synchronous = OFF");
database.exec(
  "CREATE TABLE traces (id TEXT PRIMARY KEY, fields TEXT, client_request BLOB, upstream_request BLOB, upstream_response BLOB, client_response BLOB)",
);
const insert = database.prepare("INSERT INTO traces VALUES (?, ?, ?, ?, ?, ?)");
let previous = [Buffer.alloc(0), Buffer.alloc(0)];
const answer = (bytes) => (bytes.length >= 4096 ? deflateRawSync(bytes, { level: 1 }) : bytes);

const write = database.transaction((batch) => {
  let offset = 0;
  batch.fields.forEach((fields, index) => {
    const bodies = batch.lengths[index].map((length) => {
      const body = Buffer.from(batch.bytes, offset, length);
      offset += length;
      return body;
    });
    const requests = [0, 1].map((slot) => (bodies[slot].equals(previous[slot]) ? null : bodies[slot]));
    previous = [Buffer.from(bodies[0]), Buffer.from(bodies[1])];
    insert.run(fields.id, JSON.stringify(fields), requests[0], requests[1], answer(bodies[2]), answer(bodies[3]));
  });
});

// The batch's buffer goes back for the next one, as Parley's writer does.
parentPort.on("message", (batch) => {
  write(batch);
  parentPort.postMessage(batch.bytes, [batch.bytes]);
});
