// The writer of the trace floor (trace-floor.ts): one SQLite connection with Parley's writer pragmas, one row per
// trace, one transaction per batch. A request equal to the previous trace's is not stored again (a history sent
// again is kept once); an answer of 4 KB or more is deflated (level 1), as Parley's writer does, a smaller one goes
// raw. Bare (`kept` false): nothing redacted, indexed, counted or pruned. Kept: what the other points ask
// of a trace on top, each the least way: the redaction scan of every body stored (Parley's own trigger search), the
// indexes that find a trace by request id and list by time, its bytes counted, and the oldest deleted as the newest
// come once the bound is reached.
import { parentPort, workerData } from "node:worker_threads";
import { deflateRawSync } from "node:zlib";
import Database from "better-sqlite3";

const { path, kept, triggers, bound } = workerData;
const database = new Database(path);
database.pragma("journal_mode = WAL");
database.pragma("synchronous = OFF");
database.exec(
  kept
    ? `CREATE TABLE traces (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, request_id TEXT NOT NULL,
         created_at TEXT NOT NULL, fields TEXT, bytes INTEGER NOT NULL, client_request BLOB, upstream_request BLOB,
         upstream_response BLOB, client_response BLOB);
       CREATE INDEX traces_request_id ON traces (request_id);
       CREATE INDEX traces_created_at ON traces (created_at, seq);
       CREATE TABLE totals (traces INTEGER NOT NULL, bytes INTEGER NOT NULL);
       INSERT INTO totals VALUES (0, 0);`
    : "CREATE TABLE traces (id TEXT PRIMARY KEY, fields TEXT, client_request BLOB, upstream_request BLOB, upstream_response BLOB, client_response BLOB)",
);
const insert = kept
  ? database.prepare(
      "INSERT INTO traces (id, request_id, created_at, fields, bytes, client_request, upstream_request, upstream_response, client_response) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
  : database.prepare("INSERT INTO traces VALUES (?, ?, ?, ?, ?, ?)");
const prune = kept ? database.prepare("DELETE FROM traces WHERE seq <= ? RETURNING bytes") : undefined;
const addTotals = kept ? database.prepare("UPDATE totals SET traces = traces + ?, bytes = bytes + ?") : undefined;
const words = kept ? new RegExp(triggers) : undefined;
let previous = [Buffer.alloc(0), Buffer.alloc(0)];
let lastSeq = 0;
/** Bodies whose scan found a trigger: they would be redacted on top (the report says if any did). */
let triggered = 0;
const scan = (bytes) => {
  if (words?.test(bytes.toString("latin1").toLowerCase())) triggered++;
  return bytes;
};
const answer = (bytes) => (bytes.length >= 4096 ? deflateRawSync(bytes, { level: 1 }) : bytes);

const write = database.transaction((batch) => {
  let offset = 0;
  let added = 0;
  batch.fields.forEach((fields, index) => {
    const bodies = batch.lengths[index].map((length) => {
      const body = Buffer.from(batch.bytes, offset, length);
      offset += length;
      return body;
    });
    const requests = [0, 1].map((slot) => (bodies[slot].equals(previous[slot]) ? null : scan(bodies[slot])));
    previous = [Buffer.from(bodies[0]), Buffer.from(bodies[1])];
    const answers = [answer(scan(bodies[2])), answer(scan(bodies[3]))];
    const text = JSON.stringify(fields);
    if (!kept) {
      insert.run(fields.id, text, requests[0], requests[1], answers[0], answers[1]);
      return;
    }
    const bytes = text.length + answers[0].length + answers[1].length + (requests[0]?.length ?? 0) + (requests[1]?.length ?? 0);
    added += bytes;
    lastSeq = Number(
      insert.run(fields.id, fields.requestId, fields.createdAt, text, bytes, requests[0], requests[1], answers[0], answers[1])
        .lastInsertRowid,
    );
  });
  if (!kept) return;
  let removed = 0;
  let freed = 0;
  for (const row of prune.all(lastSeq - bound)) {
    removed++;
    freed += row.bytes;
  }
  addTotals.run(batch.fields.length - removed, added - freed);
});

// The batch's buffer goes back for the next one, as Parley's writer does.
parentPort.on("message", (batch) => {
  write(batch);
  parentPort.postMessage({ bytes: batch.bytes, triggered }, [batch.bytes]);
});
