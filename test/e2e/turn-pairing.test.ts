import { type ChildProcess, type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { openStore } from "../../src/store/open-store.js";

/**
 * A stored turn's question and answer are adjacent whatever other writers do (contract invariant 17): two gateways,
 * each a process of its own, run streamed turns at once on one conversation, on one PostgreSQL and on one SQLite
 * file. Every question must be followed at once by its own answer.
 *
 * The turns overlap for real. Each question is ~200 KB (a file an agent pasted, a tool's output), so that storing it
 * takes a while; the upstream holds a round's answers until all its turns, from both gateways, have been asked, so
 * that their questions are stored at the same moment, and then streams each answer a character at a time; the next
 * round's questions are asked while those answers are being written.
 *
 * On SQLite that is not quite enough: better-sqlite3 runs a call's statements synchronously, so a store that wrote
 * the question and then the answer's row in a second transaction (as the gateway once did) had them parted only
 * when another connection took the write lock in the microseconds between the two. A third process does what any
 * other writer on the file may do: it takes the write lock the moment another connection releases it, and holds it
 * 2 ms. With startMessage reverted to two transactions, the SQLite test found 3-11 of its 48 questions parted from
 * their answers in each of 14 runs (without the third process 0-6, and none in 1 run of 12); the PostgreSQL one
 * found all 48 parted.
 */

const main = new URL("../../src/cli/main.ts", import.meta.url).pathname;
const TURNS_PER_GATEWAY = 8;
const QUESTION_BYTES = 200_000;
/** Rounds of turns, each round's questions asked while the round before it is being answered. */
const ROUNDS = 3;
/** A round's answers are released once all its turns have reached the upstream (or after this long, if some never do). */
const RELEASE_ANYWAY_MS = 20_000;

let roundsAsked = 0;
let upstream: Server;
let upstreamUrl: string;
const rounds = new Map<string, { arrived: number; released: Promise<void>; release: () => void }>();

/** A round's turns: counted as they reach the upstream, answered once all of them have. */
function round(name: string) {
  let entry = rounds.get(name);
  if (entry === undefined) {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
      setTimeout(resolve, RELEASE_ANYWAY_MS).unref();
    });
    entry = { arrived: 0, released, release };
    rounds.set(name, entry);
  }
  return entry;
}

/** The upstream: answers "answer to q-R-G-N" a character per frame, once every turn of round R is waiting. */
function answer(req: IncomingMessage, res: ServerResponse): void {
  let text = "";
  req.on("data", (chunk: Buffer) => {
    text += chunk.toString();
  });
  req.on("end", async () => {
    if (req.method !== "POST") {
      res.writeHead(200, { "content-type": "application/json" }).end('{"object":"list","data":[]}');
      return;
    }
    const messages = (JSON.parse(text) as { messages: Array<{ role: string; content: unknown }> }).messages;
    const question = /^(q-[^-]+)-\d-\d+/.exec(String(messages.at(-1)?.content));
    const turns = round(question?.[1] ?? "?");
    if (++turns.arrived === 2 * TURNS_PER_GATEWAY) turns.release();
    await turns.released;
    res.writeHead(200, { "content-type": "text/event-stream" });
    const frame = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    for (const character of `answer to ${question?.[0]}`) {
      if (res.destroyed) return;
      res.write(frame({ content: character }));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    res.end(`${frame({}, "stop")}data: [DONE]\n\n`);
  });
}

beforeAll(async () => {
  upstream = createServer(answer);
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

interface ChildGateway {
  child: ChildProcessWithoutNullStreams;
  url: string;
  exit: Promise<number | null>;
}

function startChildGateway(storeUrl: string): Promise<ChildGateway> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", main, "serve", "--port", "0", "--store", storeUrl, "--upstream", upstreamUrl],
    { env: { ...process.env, PARLEY_LOG_LEVEL: "silent" } },
  );
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start: ${stderr}`)), 60_000);
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /parley listening on (http:\/\/\S+)\n/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]!, exit });
      }
    });
    child.on("exit", (code) => reject(new Error(`gateway exited ${code}: ${stderr}`)));
  });
}

/**
 * Another writer on the SQLite file: whenever it finds the write lock taken, it takes it the moment it is released
 * and holds it 2 ms. (Without a stack trace a refused try costs a few microseconds, so it wins the lock well within
 * the time a caller takes to begin its next transaction.)
 */
async function startLockTaker(path: string): Promise<ChildProcess> {
  const script = `
    const Database = require("better-sqlite3");
    const database = new Database(process.argv[1]);
    database.pragma("busy_timeout = 0");
    Error.stackTraceLimit = 0;
    const cell = new Int32Array(new SharedArrayBuffer(4));
    const busy = (error) => String(error.code).startsWith("SQLITE_BUSY");
    const begin = () => {
      try {
        database.exec("BEGIN IMMEDIATE");
        return true;
      } catch (error) {
        if (busy(error)) return false;
        throw error;
      }
    };
    process.stdout.write("ready\\n");
    for (;;) {
      if (begin()) {
        database.exec("ROLLBACK");
        Atomics.wait(cell, 0, 0, 0.05);
        continue;
      }
      while (!begin());
      Atomics.wait(cell, 0, 0, 2);
      database.exec("COMMIT");
    }`;
  const child = spawn(process.execPath, ["-e", script, path], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise((resolve, reject) => {
    child.stdout.once("data", resolve);
    child.once("exit", (code) => reject(new Error(`the lock taker exited (${code})`)));
  });
  return child;
}

async function streamedTurn(url: string, conversationId: string, question: string): Promise<void> {
  const response = await request(`${url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-parley-conversation-id": conversationId },
    body: JSON.stringify({ model: "m", max_tokens: 64, stream: true, messages: [{ role: "user", content: question }] }),
  });
  const text = await response.body.text();
  expect(response.statusCode, text).toBe(200);
  expect(text).toContain('"type":"message_stop"');
}

/** Both gateways' turns at once on one conversation; then every question is followed at once by its answer. */
async function expectPairedTurns(storeUrl: string, lockTaker?: string): Promise<void> {
  const gateways = await Promise.all([startChildGateway(storeUrl), startChildGateway(storeUrl)]);
  const store = await openStore(storeUrl, { traceRetention: false });
  let taker: ChildProcess | undefined;
  try {
    const { id } = await store.conversations.create();
    if (lockTaker !== undefined) taker = await startLockTaker(lockTaker);
    const filler = `\n${"lorem ipsum dolor sit amet ".repeat(QUESTION_BYTES / 27)}`;
    const turns: Array<Promise<void>> = [];
    for (let number = 0; number < ROUNDS; number++) {
      // A name of its own for each round of each test: the upstream counts the round's turns by it.
      const name = `q-r${roundsAsked++}`;
      for (const [gateway, { url }] of gateways.entries()) {
        for (let turn = 0; turn < TURNS_PER_GATEWAY; turn++)
          turns.push(streamedTurn(url, id, `${name}-${gateway}-${turn}${filler}`));
      }
      await round(name).released;
    }
    await Promise.all(turns);
    taker?.kill("SIGKILL");

    const loaded = (await store.conversations.load(id))!;
    const texts = loaded.map((stored) => {
      const part = stored.message.parts[0];
      const text = part?.type === "text" ? part.text : JSON.stringify(part);
      return `${stored.message.role}: ${stored.message.role === "user" ? text.split("\n")[0] : text}`;
    });
    expect(texts).toHaveLength(ROUNDS * 2 * TURNS_PER_GATEWAY * 2);
    for (let index = 0; index < texts.length; index += 2) {
      const question = /^user: (q-\w+-\d-\d+)$/.exec(texts[index]!)?.[1];
      expect(question, texts.join("\n")).toBeDefined();
      expect(texts[index + 1], texts.join("\n")).toBe(`assistant: answer to ${question}`);
    }
    expect(new Set(texts).size).toBe(texts.length);
    expect(loaded.every((stored) => stored.complete)).toBe(true);
  } finally {
    taker?.kill("SIGKILL");
    for (const { child } of gateways) child.kill("SIGTERM");
    for (const { exit } of gateways) expect(await exit).toBe(0);
    await store.close();
  }
}

describe("concurrent streamed turns on one conversation from two gateway processes", () => {
  test("on one PostgreSQL, each question is followed by its own answer", async () => {
    const serverUrl = inject("postgresUrl");
    const schema = `parley_pairing_${randomBytes(6).toString("hex")}`;
    const admin = new pg.Pool({ connectionString: serverUrl, max: 1 });
    await admin.query(`CREATE SCHEMA ${schema}`);
    try {
      const storeUrl = new URL(serverUrl);
      storeUrl.searchParams.set("options", `-c search_path=${schema}`);
      await expectPairedTurns(storeUrl.toString());
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  }, 120_000);

  test("on one SQLite file, with another writer taking the lock, each question is followed by its own answer", async () => {
    const folder = mkdtempSync(join(tmpdir(), "parley-pairing-"));
    try {
      const path = join(folder, "parley.db");
      await expectPairedTurns(`sqlite:${path}`, path);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 120_000);
});
