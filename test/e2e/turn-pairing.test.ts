import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { startTestGateway } from "../support/gateway-harness.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../support/scripted-upstream.js";

/**
 * A stored turn's question and answer are adjacent whatever other writers do (contract invariant 17): two gateways,
 * each a process of its own, run streamed turns at once on one conversation, on one PostgreSQL and on one SQLite
 * file. Every question must be followed at once by its own answer.
 */

const main = new URL("../../src/cli/main.ts", import.meta.url).pathname;
const TURNS_PER_GATEWAY = 8;

let upstream: ScriptedUpstream;

function lastUserText(body: unknown): string {
  const messages = (body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  const user = [...messages].reverse().find((message) => message.role === "user");
  return typeof user?.content === "string" ? user.content : JSON.stringify(user?.content);
}

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  let turn = 0;
  upstream.fallback = (recorded) => {
    const chunk = (delta: object, finish: string | null = null) => ({
      id: "c",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    return {
      kind: "sse",
      frames: openaiFrames([
        ...["answer ", "to ", lastUserText(recorded.body)].map((content) => chunk({ content })),
        chunk({}, "stop"),
      ]),
      // Turns of different lengths, so that they start and end in every order.
      frameDelayMs: 5 + (turn++ % 7) * 7,
    };
  };
});

afterAll(async () => {
  await upstream.close();
});

interface ChildGateway {
  child: ChildProcessWithoutNullStreams;
  url: string;
  exit: Promise<number | null>;
}

function startChildGateway(storeUrl: string): Promise<ChildGateway> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", main, "serve", "--port", "0", "--store", storeUrl, "--upstream", upstream.baseUrl],
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
async function expectPairedTurns(storeUrl: string): Promise<void> {
  const inProcess = await startTestGateway({
    providers: { local: { type: "openai", upstream } },
    file: { store: storeUrl },
  });
  const child = await startChildGateway(storeUrl);
  try {
    const { id } = await inProcess.state.store!.conversations.create();
    const questions = [inProcess.url, child.url].flatMap((url, gateway) =>
      Array.from({ length: TURNS_PER_GATEWAY }, (_, number) => ({ url, question: `q-${gateway}-${number}` })),
    );
    await Promise.all(questions.map(({ url, question }) => streamedTurn(url, id, question)));

    const loaded = (await inProcess.state.store!.conversations.load(id))!;
    const texts = loaded.map((stored) => {
      const part = stored.message.parts[0];
      return `${stored.message.role}: ${part?.type === "text" ? part.text : JSON.stringify(part)}`;
    });
    expect(texts).toHaveLength(questions.length * 2);
    for (let index = 0; index < texts.length; index += 2) {
      const question = /^user: (q-\d-\d+)$/.exec(texts[index]!)?.[1];
      expect(question, texts.join("\n")).toBeDefined();
      expect(texts[index + 1], texts.join("\n")).toBe(`assistant: answer to ${question}`);
    }
    expect(new Set(texts).size).toBe(texts.length);
    expect(loaded.every((stored) => stored.complete)).toBe(true);
  } finally {
    child.child.kill("SIGTERM");
    expect(await child.exit).toBe(0);
    await inProcess.close();
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

  test("on one SQLite file, each question is followed by its own answer", async () => {
    const folder = mkdtempSync(join(tmpdir(), "parley-pairing-"));
    try {
      await expectPairedTurns(`sqlite:${join(folder, "parley.db")}`);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 120_000);
});
