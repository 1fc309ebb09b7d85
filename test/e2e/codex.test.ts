import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { decodeOriginSignature } from "../../src/core/index.js";
import type { RunningGateway } from "../../src/gateway/server.js";
import { type ProxiedExchange, type RecordingProxy, startRecordingProxy } from "../support/claude-code.js";
import { CODEX_VERSION, type CodexRun, ensureCodex, runCodex } from "../support/codex.js";
import { startTestGateway } from "../support/gateway-harness.js";
import {
  anthropicFrames,
  openaiFrames,
  type RecordedRequest,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../support/scripted-upstream.js";

/**
 * The Codex CLI itself (installed on demand into a cache folder) run headless with `codex exec` against the gateway's
 * `POST /v1/responses`, offline: a scripted upstream that thinks, asks it to run two shell commands one after the
 * other, then answers in text. Once on an OpenAI-compatible Chat upstream, once on an Anthropic one; every upstream
 * request must carry the whole conversation so far, each earlier turn's reasoning in the field it came in.
 */

type Json = Record<string, unknown>;

const THOUGHTS = [
  "The user wants two commands run. I start with the first.",
  "The first printed its word; now the second.",
  "Both ran; I can answer.",
];
const COMMANDS = ["echo parley-codex-one", "echo parley-codex-two"];
const FINAL = "Both commands ran: they printed parley-codex-one and parley-codex-two.";
const PROMPT = "Run `echo parley-codex-one`, then `echo parley-codex-two`, and tell me what they printed.";

interface CodexWorld {
  upstream: ScriptedUpstream;
  gateway: RunningGateway;
  proxy: RecordingProxy;
  run: CodexRun;
}

async function startCodexWorld(kind: "openai" | "anthropic", answer: (turn: number) => string[]): Promise<CodexWorld> {
  const binary = await ensureCodex();
  const upstream = await startScriptedUpstream(kind);
  // The turn is told by how many command results the request carries.
  upstream.fallback = (request) => ({ kind: "sse", frames: answer(toolResultCount(request)) });
  const gateway = await startTestGateway({
    providers: { scripted: { upstream, type: kind, ...(kind === "openai" ? { preset: "deepseek" } : {}) } },
    routes: [{ match: "*", provider: "scripted", model: "scripted-model" }],
  });
  const proxy = await startRecordingProxy(gateway.url);
  const run = await runCodex({ binary, baseUrl: `${proxy.url}/v1`, model: "codex-e2e-model", prompt: PROMPT });
  return { upstream, gateway, proxy, run };
}

async function closeCodexWorld(world: CodexWorld | undefined): Promise<void> {
  await world?.proxy.close();
  await world?.gateway.close();
  await world?.upstream.close();
}

function toolResultCount(request: RecordedRequest): number {
  const messages = ((request.body as { messages?: Json[] } | undefined)?.messages ?? []) as Json[];
  let count = 0;
  for (const message of messages) {
    if (message.role === "tool") count++;
    if (Array.isArray(message.content))
      count += (message.content as Json[]).filter((block) => block.type === "tool_result").length;
  }
  return count;
}

/** Chat chunks: reasoning, then a command to run (turns 0 and 1) or the answer (turn 2). */
function chatTurn(turn: number): string[] {
  const chunk = (delta: Json, finish: string | null = null) => ({
    id: `chatcmpl-${turn}`,
    object: "chat.completion.chunk",
    created: 1,
    model: "scripted-model",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const thought = THOUGHTS[turn]!;
  const command = COMMANDS[turn];
  const chunks = [
    chunk({ role: "assistant", content: null, reasoning_content: thought.slice(0, 10) }),
    chunk({ reasoning_content: thought.slice(10) }),
    ...(command === undefined
      ? [chunk({ content: FINAL.slice(0, 20) }), chunk({ content: FINAL.slice(20) }), chunk({}, "stop")]
      : [
          chunk({
            tool_calls: [
              {
                index: 0,
                id: `call_codex_${turn}`,
                type: "function",
                function: { name: "exec_command", arguments: "" },
              },
            ],
          }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ cmd: command }) } }] }),
          chunk({}, "tool_calls"),
        ]),
    {
      ...chunk({}),
      choices: [],
      usage: { prompt_tokens: 100 + turn, completion_tokens: 20, total_tokens: 120 + turn },
    },
  ];
  return openaiFrames(chunks);
}

/** Anthropic events: a signed thinking block, then a command to run or the answer. */
function anthropicTurn(turn: number): string[] {
  const thought = THOUGHTS[turn]!;
  const command = COMMANDS[turn];
  const events: Array<{ type: string } & Json> = [
    {
      type: "message_start",
      message: {
        id: `msg_codex_${turn}`,
        type: "message",
        role: "assistant",
        model: "scripted-model",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 100 + turn, output_tokens: 1 },
      },
    },
    { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: thought } },
    { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: `EqSignedTurn${turn}==` } },
    { type: "content_block_stop", index: 0 },
  ];
  if (command === undefined) {
    events.push(
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: FINAL } },
      { type: "content_block_stop", index: 1 },
    );
  } else {
    events.push(
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: `toolu_codex_${turn}`, name: "exec_command", input: {} },
      },
      {
        type: "content_block_delta",
        index: 1,
        delta: { type: "input_json_delta", partial_json: JSON.stringify({ cmd: command }) },
      },
      { type: "content_block_stop", index: 1 },
    );
  }
  events.push(
    {
      type: "message_delta",
      delta: { stop_reason: command === undefined ? "end_turn" : "tool_use", stop_sequence: null },
      usage: { output_tokens: 20 },
    },
    { type: "message_stop" },
  );
  return anthropicFrames(events);
}

/**
 * The first two requests of each release, recorded in `test/fixtures/codex/codex-<version>-turn-<n>.request.json`
 * with the run's throwaway home folder replaced by `/home/user`. Record (or re-record) with
 * `PARLEY_RECORD_CODEX=1 npx vitest run test/e2e/codex.test.ts`.
 */
const recordingCodex = process.env.PARLEY_RECORD_CODEX === "1";

function codexFixtureUrl(turn: number): URL {
  return new URL(`../fixtures/codex/codex-${CODEX_VERSION}-turn-${turn}.request.json`, import.meta.url);
}

function asFixture(body: unknown): Json {
  const home = /(?:\/[\w.-]+)*\/parley-codex-home-[A-Za-z0-9]+/g;
  return JSON.parse(JSON.stringify(body).replace(home, "/home/user")) as Json;
}

/** What a translator depends on: the body's fields, its items' kinds, its tools' kinds and names. */
function codexRequestShape(body: Json): Json {
  const input = (body.input ?? []) as Json[];
  const tools = (body.tools ?? []) as Json[];
  return {
    fields: Object.keys(body).sort(),
    items: input.map((item) => `${item.type ?? "message"}:${item.role ?? ""}`),
    tools: tools.map((tool) => `${tool.type}:${tool.name ?? ""}`),
  };
}

function describeRun(run: CodexRun): string {
  return `exit ${run.code}; stderr:\n${run.stderr.slice(-2_000)}\nstdout tail:\n${run.stdout.slice(-3_000)}`;
}

/** What Codex printed: it ran both commands, showed the reasoning and gave the answer. */
function expectCompletedLoop(run: CodexRun): void {
  expect(run.code, describeRun(run)).toBe(0);
  expect(run.lastMessage, describeRun(run)).toBe(FINAL);
  const items = run.events.map((event) => event.item as Json | undefined).filter((item) => item !== undefined);
  const commands = items.filter((item) => item.type === "command_execution" && item.status === "completed");
  expect(commands.map((item) => item.aggregated_output)).toEqual(["parley-codex-one\n", "parley-codex-two\n"]);
  const reasoning = items.filter((item) => item.type === "reasoning").map((item) => item.text);
  expect(reasoning).toEqual(THOUGHTS);
}

/** What Codex sent: three turns, each after the first echoing the earlier reasoning items sealed by Parley. */
function expectCodexEchoedReasoning(exchanges: ProxiedExchange[], origin: (turn: number) => Json): void {
  const posts = exchanges.filter((exchange) => exchange.method === "POST" && exchange.path === "/v1/responses");
  expect(posts.map((exchange) => exchange.status)).toEqual([200, 200, 200]);
  const last = (posts[2]!.body as { input: Json[] }).input;
  const reasoning = last.filter((item) => item.type === "reasoning");
  expect(reasoning.map((item) => (item.summary as Json[])[0]?.text)).toEqual(THOUGHTS.slice(0, 2));
  reasoning.forEach((item, turn) => {
    const { binding, ...where } = decodeOriginSignature(item.encrypted_content as string) ?? { format: "openai" };
    expect(where).toEqual(origin(turn));
    // reasoning a named provider made also names its key, by a short hash
    if (where.provider !== undefined) expect(binding).toMatch(/^[\w-]{16}$/);
  });
  const outputs = last.filter((item) => item.type === "function_call_output").map((item) => String(item.output));
  expect(outputs).toHaveLength(2);
  expect(outputs[0]).toContain("parley-codex-one");
  expect(outputs[1]).toContain("parley-codex-two");
}

describe(`Codex CLI ${CODEX_VERSION}, headless, through the gateway to a Chat upstream`, () => {
  let world: CodexWorld | undefined;
  beforeAll(async () => {
    world = await startCodexWorld("openai", chatTurn);
  }, 20 * 60_000);
  afterAll(() => closeCodexWorld(world));

  test("runs the two commands the upstream asked for, with its reasoning shown, and completes the turn", () => {
    expectCompletedLoop(world!.run);
    expectCodexEchoedReasoning(world!.proxy.exchanges, () => ({
      format: "openai",
      provider: "scripted",
      field: "reasoning_content",
      model: "scripted-model",
    }));
  });

  test(`its first two requests have the shapes recorded in test/fixtures/codex/codex-${CODEX_VERSION}-turn-*`, () => {
    const posts = world!.proxy.exchanges.filter((exchange) => exchange.method === "POST");
    for (const turn of [1, 2]) {
      const live = asFixture(posts[turn - 1]!.body);
      const file = codexFixtureUrl(turn);
      if (recordingCodex) writeFileSync(file, `${JSON.stringify(live, null, 2)}\n`);
      expect(existsSync(file), `no recorded request ${turn}; record it with PARLEY_RECORD_CODEX=1`).toBe(true);
      const recorded = JSON.parse(readFileSync(file, "utf8")) as Json;
      // A release whose requests changed shape since its fixture was recorded: record it again.
      expect(codexRequestShape(live)).toEqual(codexRequestShape(recorded));
    }
  });

  test("every upstream request keeps the conversation whole, each turn's reasoning on its tool call", () => {
    const requests = world!.upstream.requests.map((request) => request.body as { messages: Json[]; model: string });
    expect(requests).toHaveLength(3);
    for (const request of requests) expect(request.model).toBe("scripted-model");
    for (let turn = 1; turn < 3; turn++) {
      const before = requests[turn - 1]!.messages;
      const now = requests[turn]!.messages;
      // What came before is all there, unchanged, followed by the answer and its command's result.
      expect(now.slice(0, before.length)).toEqual(before);
      expect(now.slice(before.length)).toEqual([
        {
          role: "assistant",
          reasoning_content: THOUGHTS[turn - 1],
          tool_calls: [
            {
              id: `call_codex_${turn - 1}`,
              type: "function",
              function: { name: "exec_command", arguments: JSON.stringify({ cmd: COMMANDS[turn - 1] }) },
            },
          ],
        },
        expect.objectContaining({ role: "tool", tool_call_id: `call_codex_${turn - 1}` }),
      ]);
      expect(String(now.at(-1)!.content)).toContain(COMMANDS[turn - 1]!.slice(5));
    }
    // Codex's instructions arrive as its developer messages did, in place, as system messages.
    expect(requests[0]!.messages[0]).toMatchObject({ role: "system" });
    expect(requests[0]!.messages.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: PROMPT }] });
  });
});

describe(`Codex CLI ${CODEX_VERSION}, headless, through the gateway to an Anthropic upstream`, () => {
  let world: CodexWorld | undefined;
  beforeAll(async () => {
    world = await startCodexWorld("anthropic", anthropicTurn);
  }, 20 * 60_000);
  afterAll(() => closeCodexWorld(world));

  test("runs the two commands the upstream asked for, with its reasoning shown, and completes the turn", () => {
    expectCompletedLoop(world!.run);
    // Anthropic's signature rides sealed in the envelope, for Anthropic alone.
    expectCodexEchoedReasoning(world!.proxy.exchanges, (turn) => ({
      format: "anthropic",
      field: "thinking",
      sealed: `EqSignedTurn${turn}==`,
    }));
  });

  test("every upstream request keeps the conversation whole, each signed thinking block exactly as it came", () => {
    const requests = world!.upstream.requests.map((request) => request.body as { messages: Json[]; system: unknown });
    expect(requests).toHaveLength(3);
    for (const request of requests) expect(request.system).toBeDefined();
    for (let turn = 1; turn < 3; turn++) {
      const before = requests[turn - 1]!.messages;
      const now = requests[turn]!.messages;
      expect(now.slice(0, before.length)).toEqual(before);
      expect(now.slice(before.length)).toEqual([
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: THOUGHTS[turn - 1], signature: `EqSignedTurn${turn - 1}==` },
            {
              type: "tool_use",
              id: `toolu_codex_${turn - 1}`,
              name: "exec_command",
              input: { cmd: COMMANDS[turn - 1] },
            },
          ],
        },
        {
          role: "user",
          content: [expect.objectContaining({ type: "tool_result", tool_use_id: `toolu_codex_${turn - 1}` })],
        },
      ]);
    }
  });
});
