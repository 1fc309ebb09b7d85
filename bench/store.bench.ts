import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import type { Message, Part } from "../src/core/index.js";
import type { Store } from "../src/store/open-store.js";
import { openStore } from "../src/store/open-store.js";
import { startTestPostgres } from "../test/postgres-server.js";
import { type BenchSection, fixed, median, table } from "./harness.js";

/**
 * The store against the bare driver doing the same work: the same rows inserted in one transaction per
 * call, the same rows selected, parts serialized and parsed with JSON in both. What the ratio prices is
 * Parley's layer: sequence numbers taken in the transaction, message envelopes, validation, row grouping.
 */
const BATCH_MESSAGES = 20;
const STREAM_EVENTS = 640;
const STREAM_BATCH = 64;
const LOAD_MESSAGES = 10_000;

type Work = () => Promise<void>;

async function rateAsync(work: Work, ms: number): Promise<number> {
  const warmUntil = performance.now() + ms / 5;
  while (performance.now() < warmUntil) await work();
  let runs = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    await work();
    runs++;
    now = performance.now();
  }
  return (runs * 1000) / (now - start);
}

/** The harness's alternating rounds, for asynchronous work. */
async function sideBySideAsync(subject: Work, baseline: Work, rounds = 5, ms = 400) {
  const subjects: number[] = [];
  const baselines: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const s = await rateAsync(subject, ms);
    const b = await rateAsync(baseline, ms);
    subjects.push(s);
    baselines.push(b);
    ratios.push(s / b);
  }
  return { subject: median(subjects), baseline: median(baselines), ratio: median(ratios) };
}

function batch(offset: number): Message[] {
  return Array.from({ length: BATCH_MESSAGES }, (_, index): Message => {
    const n = offset + index;
    return n % 2 === 0
      ? { role: "user", parts: [{ type: "text", text: `question ${n} `.repeat(8) }] }
      : {
          role: "assistant",
          parts: [
            { type: "thinking", thinking: `reasoning ${n} `.repeat(12), signature: "EqQBCgIYAhIM1gbcDa9GJwZA" },
            { type: "text", text: `answer ${n} `.repeat(10) },
            { type: "tool_call", id: `call_${n}`, name: "read_file", input: { path: `src/file-${n}.ts` } },
          ],
        };
  });
}

const partsPerBatch = batch(0).reduce((sum, message) => sum + message.parts.length, 0);

interface Backend {
  name: string;
  store: Store;
  bare: {
    createConversation(id: string): Promise<void>;
    append(conversationId: string, seq: number, messages: Message[]): Promise<void>;
    stream(conversationId: string, seq: number): Promise<void>;
    load(conversationId: string): Promise<unknown>;
  };
  close(): Promise<void>;
}

async function measure(backend: Backend): Promise<Array<Array<string | number>>> {
  const { store, bare } = backend;
  const rows: Array<Array<string | number>> = [];

  const subjectConversation = (await store.conversations.create()).id;
  const bareConversation = `bare-${Date.now()}`;
  await bare.createConversation(bareConversation);
  let bareSeq = 0;
  let offset = 0;
  const nextBatch = () => {
    offset += BATCH_MESSAGES;
    return batch(offset);
  };
  const append = await sideBySideAsync(
    async () => void (await store.conversations.append(subjectConversation, nextBatch())),
    async () => {
      await bare.append(bareConversation, bareSeq, nextBatch());
      bareSeq += BATCH_MESSAGES;
    },
  );
  rows.push([
    backend.name,
    `append (${BATCH_MESSAGES} messages per call), parts/s`,
    fixed(append.subject * partsPerBatch, 0),
    fixed(append.baseline * partsPerBatch, 0),
    fixed(append.ratio),
  ]);

  const stream = await sideBySideAsync(
    async () => {
      const writer = await store.conversations.startMessage(subjectConversation, "assistant");
      writer.push({ type: "block-start", index: 0, part: { type: "text", text: "" } });
      for (let event = 1; event <= STREAM_EVENTS; event++) {
        writer.push({ type: "text-delta", index: 0, text: "token " });
        if (event % STREAM_BATCH === 0) await writer.flush();
      }
      await writer.complete();
    },
    async () => bare.stream(bareConversation, bareSeq++),
  );
  rows.push([
    backend.name,
    `streaming (${STREAM_EVENTS} deltas, a write per ${STREAM_BATCH}), events/s`,
    fixed(stream.subject * STREAM_EVENTS, 0),
    fixed(stream.baseline * STREAM_EVENTS, 0),
    fixed(stream.ratio),
  ]);

  const big = (await store.conversations.create()).id;
  for (let start = 0; start < LOAD_MESSAGES; start += 500) {
    await store.conversations.append(
      big,
      Array.from({ length: 25 }, (_, index) => batch(start + index * BATCH_MESSAGES)).flat(),
    );
  }
  const load = await sideBySideAsync(
    async () => void (await store.conversations.load(big)),
    async () => void (await bare.load(big)),
    5,
    1500,
  );
  rows.push([
    backend.name,
    `load a ${LOAD_MESSAGES.toLocaleString("en")}-message conversation, ms`,
    fixed(1000 / load.subject, 1),
    fixed(1000 / load.baseline, 1),
    fixed(load.ratio),
  ]);
  return rows;
}

function sqliteBackend(folder: string): Promise<Backend> {
  const path = join(folder, "bench.db");
  return openStore(`sqlite:${path}`, { traceRetention: false }).then((store) => {
    const database = new Database(path);
    database.pragma("journal_mode = WAL");
    database.pragma("synchronous = NORMAL");
    const insertConversation = database.prepare(
      "INSERT INTO conversations (id, created_at, metadata) VALUES (?, ?, '{}')",
    );
    const insertMessage = database.prepare(
      "INSERT INTO messages (conversation_id, seq, role, complete, created_at, extra) VALUES (?, ?, ?, ?, ?, '{}')",
    );
    const insertPart = database.prepare("INSERT INTO parts (message_id, position, part) VALUES (?, ?, ?)");
    const upsertPart = database.prepare(
      "INSERT INTO parts (message_id, position, part) VALUES (?, ?, ?) ON CONFLICT (message_id, position) DO UPDATE SET part = excluded.part",
    );
    const markComplete = database.prepare("UPDATE messages SET complete = 1 WHERE id = ?");
    const select = database.prepare(
      "SELECT m.seq, p.part FROM messages m LEFT JOIN parts p ON p.message_id = m.id WHERE m.conversation_id = ? ORDER BY m.seq, p.position",
    );
    const transaction = <T>(work: () => T) => database.transaction(work).immediate();
    return {
      name: "SQLite",
      store,
      bare: {
        async createConversation(id) {
          insertConversation.run(id, new Date().toISOString());
        },
        async append(conversationId, seq, messages) {
          const createdAt = new Date().toISOString();
          transaction(() => {
            messages.forEach((message, index) => {
              const { lastInsertRowid } = insertMessage.run(
                conversationId,
                -1 - seq - index,
                message.role,
                1,
                createdAt,
              );
              message.parts.forEach((part, position) => {
                insertPart.run(lastInsertRowid, position, JSON.stringify(part));
              });
            });
          });
        },
        async stream(conversationId, seq) {
          const { lastInsertRowid } = transaction(() =>
            insertMessage.run(conversationId, -1_000_000 - seq, "assistant", 0, new Date().toISOString()),
          );
          let text = "";
          for (let event = 1; event <= STREAM_EVENTS; event++) {
            text += "token ";
            if (event % STREAM_BATCH === 0) {
              const part = JSON.stringify({ type: "text", text });
              transaction(() => upsertPart.run(lastInsertRowid, 0, part));
            }
          }
          transaction(() => markComplete.run(lastInsertRowid));
        },
        async load(conversationId) {
          return groupParts(select.all(conversationId) as Array<{ seq: number; part: string | null }>);
        },
      },
      async close() {
        database.close();
        await store.close();
      },
    };
  });
}

async function postgresBackend(url: string): Promise<Backend> {
  const store = await openStore(url, { traceRetention: false });
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const transaction = async <T>(work: (client: pg.PoolClient) => Promise<T>) => {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } finally {
      client.release();
    }
  };
  const upsert = `INSERT INTO parts (message_id, position, part) VALUES ($1, $2, $3)
    ON CONFLICT (message_id, position) DO UPDATE SET part = excluded.part`;
  return {
    name: "PostgreSQL",
    store,
    bare: {
      async createConversation(id) {
        await pool.query("INSERT INTO conversations (id, created_at, metadata) VALUES ($1, now(), '{}')", [id]);
      },
      async append(conversationId, seq, messages) {
        await transaction(async (client) => {
          const inserted = await client.query(
            `INSERT INTO messages (conversation_id, seq, role, complete, created_at, extra)
             SELECT $1, t.seq, t.role, true, now(), '{}' FROM unnest($2::integer[], $3::text[]) AS t (seq, role) RETURNING id`,
            [conversationId, messages.map((_, index) => -1 - seq - index), messages.map((message) => message.role)],
          );
          const ids: string[] = [];
          const positions: number[] = [];
          const parts: string[] = [];
          messages.forEach((message, index) => {
            message.parts.forEach((part: Part, position) => {
              ids.push(inserted.rows[index].id);
              positions.push(position);
              parts.push(JSON.stringify(part));
            });
          });
          await client.query(
            "INSERT INTO parts (message_id, position, part) SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[])",
            [ids, positions, parts],
          );
        });
      },
      async stream(conversationId, seq) {
        const inserted = await pool.query(
          "INSERT INTO messages (conversation_id, seq, role, complete, created_at, extra) VALUES ($1, $2, 'assistant', false, now(), '{}') RETURNING id",
          [conversationId, -1_000_000 - seq],
        );
        const id = inserted.rows[0].id;
        let text = "";
        for (let event = 1; event <= STREAM_EVENTS; event++) {
          text += "token ";
          if (event % STREAM_BATCH === 0) await pool.query(upsert, [id, 0, JSON.stringify({ type: "text", text })]);
        }
        await pool.query("UPDATE messages SET complete = true WHERE id = $1", [id]);
      },
      async load(conversationId) {
        const result = await pool.query(
          "SELECT m.seq, p.part FROM messages m LEFT JOIN parts p ON p.message_id = m.id WHERE m.conversation_id = $1 ORDER BY m.seq, p.position",
          [conversationId],
        );
        return groupParts(result.rows);
      },
    },
    async close() {
      await pool.end();
      await store.close();
    },
  };
}

/** What any loader must do at least: parse each part and group the parts by message. */
function groupParts(rows: Array<{ seq: number; part: string | null }>): unknown[][] {
  const messages: unknown[][] = [];
  let seq: number | undefined;
  for (const row of rows) {
    if (row.seq !== seq) {
      messages.push([]);
      seq = row.seq;
    }
    if (row.part !== null) messages.at(-1)!.push(JSON.parse(row.part));
  }
  return messages;
}

export default async function storeBench(): Promise<BenchSection> {
  const folder = mkdtempSync(join(tmpdir(), "parley-bench-"));
  const rows: Array<Array<string | number>> = [];
  const sqlite = await sqliteBackend(folder);
  rows.push(...(await measure(sqlite)));
  await sqlite.close();

  const external = process.env.PARLEY_BENCH_POSTGRES_URL;
  const server = external ? undefined : await startTestPostgres();
  const postgres = await postgresBackend(external ?? server!.url);
  rows.push(...(await measure(postgres)));
  await postgres.close();
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });

  return {
    title: "Conversation store",
    markdown: [
      table(["backend", "workload", "Parley", "bare driver", "ratio (target ≥ 0.7)"], rows),
      "",
      "Parley: `appendMessages`, the streaming writer (`push`, a forced `flush` every " +
        `${STREAM_BATCH} events, \`complete\`) and \`loadConversation\`. Bare driver: the same tables, the same rows in ` +
        "one transaction per call (PostgreSQL: the same `unnest` inserts), the same select with each part parsed. " +
        "Ratio is Parley's rate over the bare driver's (for load, the bare time over Parley's); above 1 means Parley " +
        "was faster in that run. PostgreSQL runs on a local embedded server unless `PARLEY_BENCH_POSTGRES_URL` is set.",
    ].join("\n"),
  };
}
