import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../support/scripted-upstream.js";

/**
 * Scale-out: two `parley serve` processes share one PostgreSQL server (a schema of their own on the server the
 * test run starts). Stateful turns run concurrently through both, on the same conversation and on different
 * ones; every message must come back whole, once, in an order both processes agree on.
 */

const main = new URL("../../src/cli/main.ts", import.meta.url).pathname;
const serverUrl = inject("postgresUrl");
const schema = `parley_scaleout_${randomBytes(6).toString("hex")}`;
const admin = new pg.Pool({ connectionString: serverUrl, max: 1 });

interface Gateway {
  child: ChildProcessWithoutNullStreams;
  url: string;
  exit: Promise<number | null>;
}

let upstream: ScriptedUpstream;
let gateways: Gateway[] = [];

function lastUserText(body: unknown): string {
  const messages = (body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  const user = [...messages].reverse().find((message) => message.role === "user");
  return typeof user?.content === "string" ? user.content : JSON.stringify(user?.content);
}

/** The answer names the question it answers, in several frames, so each stored answer can be checked whole. */
function answerFrames(question: string): string[] {
  const chunk = (delta: object, finish: string | null = null) => ({
    id: "chatcmpl-scaleout",
    object: "chat.completion.chunk",
    created: 1,
    model: "scaleout-model",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  return openaiFrames([
    chunk({ reasoning_content: `thinking about ${question}` }),
    ...["answer ", "to ", question].map((content) => chunk({ content })),
    { ...chunk({}, "stop"), usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 } },
  ]);
}

function startGateway(storeUrl: string): Promise<Gateway> {
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
    const timer = setTimeout(() => reject(new Error(`gateway did not start: ${stderr}`)), 30_000);
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

async function json(url: string, method: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await request(url, {
    method: method as "GET" | "POST",
    headers: { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
}

async function streamedTurn(gateway: Gateway, conversationId: string, question: string): Promise<string> {
  const response = await request(`${gateway.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-parley-conversation-id": conversationId },
    body: JSON.stringify({
      model: "any-model",
      max_tokens: 64,
      stream: true,
      messages: [{ role: "user", content: question }],
    }),
  });
  const text = await response.body.text();
  expect(response.statusCode, text).toBe(200);
  expect(text).toContain('"type":"message_stop"');
  return text;
}

beforeAll(async () => {
  await admin.query(`CREATE SCHEMA ${schema}`);
  const storeUrl = new URL(serverUrl);
  storeUrl.searchParams.set("options", `-c search_path=${schema}`);
  upstream = await startScriptedUpstream("openai");
  upstream.fallback = (recorded) => ({
    kind: "sse",
    frames: answerFrames(lastUserText(recorded.body)),
    frameDelayMs: 5,
  });
  // Both start at once: the schema migration must run once, whichever wins.
  gateways = await Promise.all([startGateway(storeUrl.toString()), startGateway(storeUrl.toString())]);
}, 60_000);

afterAll(async () => {
  for (const gateway of gateways) gateway.child.kill("SIGTERM");
  const codes = await Promise.all(gateways.map((gateway) => gateway.exit));
  await upstream?.close();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
  expect(codes).toEqual([0, 0]);
});

describe("two gateway processes on one PostgreSQL", () => {
  test("concurrent stateful turns on the same and on different conversations never interleave or collide", async () => {
    const [a, b] = gateways as [Gateway, Gateway];
    const created = await json(`${a.url}/v1/conversations`, "POST", {});
    expect(created.status).toBe(201);
    const shared = created.body.id as string;
    const own = await Promise.all(
      [a, b].map(async (gateway) => (await json(`${gateway.url}/v1/conversations`, "POST", {})).body.id as string),
    );

    const rounds = 6;
    const questions: Array<{ gateway: Gateway; conversation: string; question: string }> = [];
    for (let round = 0; round < rounds; round++) {
      questions.push({ gateway: a, conversation: shared, question: `shared-a-${round}` });
      questions.push({ gateway: b, conversation: shared, question: `shared-b-${round}` });
      questions.push({ gateway: a, conversation: own[0]!, question: `own-a-${round}` });
      questions.push({ gateway: b, conversation: own[1]!, question: `own-b-${round}` });
    }
    // Each gateway runs its turns one after another per conversation, both gateways at the same time.
    const lanes = new Map<string, typeof questions>();
    for (const entry of questions) {
      const lane = `${entry.gateway.url} ${entry.conversation}`;
      lanes.set(lane, [...(lanes.get(lane) ?? []), entry]);
    }
    await Promise.all(
      [...lanes.values()].map(async (lane) => {
        for (const entry of lane) await streamedTurn(entry.gateway, entry.conversation, entry.question);
      }),
    );

    type Stored = { role: string; content: unknown };
    const load = async (gateway: Gateway, id: string) =>
      (await json(`${gateway.url}/v1/conversations/${id}`, "GET")).body.messages as Stored[];

    // Both processes read the same conversation, message for message.
    const sharedFromA = await load(a, shared);
    expect(await load(b, shared)).toEqual(sharedFromA);

    for (const [id, prefixes] of [
      [shared, ["shared-a-", "shared-b-"]],
      [own[0]!, ["own-a-"]],
      [own[1]!, ["own-b-"]],
    ] as const) {
      const messages = await load(a, id);
      const users = messages.filter((message) => message.role === "user").map((message) => message.content);
      const expected = prefixes.flatMap((prefix) => Array.from({ length: rounds }, (_, round) => `${prefix}${round}`));
      // Every question stored exactly once, whole.
      expect([...users].sort()).toEqual([...expected].sort());
      const answers = messages.filter((message) => message.role === "assistant");
      expect(answers).toHaveLength(expected.length);
      for (const answer of answers) {
        // Each answer is one message holding its own thinking and text, never parts of another turn.
        const [thinking, text] = answer.content as Array<{ type: string; thinking?: string; text?: string }>;
        expect(thinking?.type).toBe("thinking");
        expect(text?.type).toBe("text");
        expect(thinking?.thinking).toBe(`thinking about ${text?.text?.replace(/^answer to /, "")}`);
        expect(expected).toContain(text?.text?.replace(/^answer to /, ""));
      }
      // On a conversation of its own, each turn lands in order: question, then its answer.
      if (prefixes.length === 1) {
        const flat = messages.map((message) =>
          message.role === "user"
            ? message.content
            : (message.content as Array<{ text?: string }>)[1]?.text?.replace(/^answer to /, ""),
        );
        expect(flat).toEqual(expected.flatMap((question) => [question, question]));
      }
    }
  }, 120_000);
});
