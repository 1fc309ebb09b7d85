import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RunningGateway } from "../../src/gateway/server.js";
import { CLAUDE_CODE_VERSION, ensureClaudeCode, runClaudeCode } from "../support/claude-code.js";
import { CODEX_VERSION, ensureCodex, runCodex } from "../support/codex.js";
import { startTestGateway } from "../support/gateway-harness.js";
import {
  type GeminiChatServer,
  type GeminiChatTurn,
  geminiChatServer,
  playTurns,
} from "../support/gemini-openai-server.js";
import { SKIP } from "../support/gemini-server.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../support/scripted-upstream.js";

/**
 * Claude Code and Codex, headless and offline, on Gemini 3 through Google's OpenAI-compatible endpoint (the
 * `gemini-openai` preset): a scripted endpoint that answers as Google's does (signatures in `extra_content`, calls
 * streamed without `index`) and refuses a current turn's call without its signature. It asks each agent to run two
 * commands one after the other, then answers; each agent's history must bring the endpoint's signatures back to it,
 * each on exactly its call, turn after turn.
 */

// biome-ignore lint/suspicious/noExplicitAny: assertions walk parsed JSON of any shape
type Json = any;

const FINAL = "Both commands ran: they printed parley-gemini-one and parley-gemini-two.";
const PROMPT = "Run `echo parley-gemini-one`, then `echo parley-gemini-two`, and tell me what they printed.";

function turns(call: (command: string) => { name: string; args: Json }): GeminiChatTurn[] {
  return [
    { calls: [call("echo parley-gemini-one")] },
    { text: "Now the second.", calls: [call("echo parley-gemini-two")] },
    { text: FINAL },
  ];
}

interface World {
  upstream: ScriptedUpstream;
  server: GeminiChatServer;
  gateway: RunningGateway;
}

async function startWorld(script: GeminiChatTurn[], match: string): Promise<World> {
  const upstream = await startScriptedUpstream("openai");
  const server = geminiChatServer("google", "google-key");
  playTurns(upstream, server, script);
  const gateway = await startTestGateway({
    providers: { google: { upstream, type: "openai", preset: "gemini-openai", apiKey: "google-key" } },
    routes: [{ match, provider: "google", model: "gemini-3-pro-preview" }],
  });
  return { upstream, server, gateway };
}

/** The last request that reached the third turn: both calls signed as the endpoint signed them, nothing of Parley's. */
function expectSignaturesBack(world: World): void {
  expect(world.server.refused.map((refusal) => refusal.message)).toEqual([]);
  const last = world.upstream.requests.at(-1)!.body as Json;
  const calls = (last.messages as Json[])
    .filter((message) => message.role === "assistant" && message.tool_calls !== undefined)
    .flatMap((message) => message.tool_calls as Json[]);
  const issued = (turn: number) =>
    [...world.server.issued].find((signature) => signature.includes(`turn${turn}/call0`));
  expect(calls.map((call) => call.extra_content?.google?.thought_signature)).toEqual([issued(0), issued(1)]);
  expect(JSON.stringify(last)).not.toContain("parley.v1.");
  expect(JSON.stringify(last)).not.toContain(SKIP);
}

describe(`Claude Code ${CLAUDE_CODE_VERSION}, headless, through the gateway to Gemini's OpenAI-compatible endpoint`, () => {
  let world: World | undefined;
  let home: string | undefined;
  let run: Awaited<ReturnType<typeof runClaudeCode>>;
  beforeAll(async () => {
    const binary = await ensureClaudeCode();
    world = await startWorld(
      turns((command) => ({ name: "Bash", args: { command, description: "Print a marker" } })),
      "claude-*",
    );
    home = mkdtempSync(join(tmpdir(), "parley-claude-home-"));
    run = await runClaudeCode({ binary, baseUrl: world.gateway.url, prompt: PROMPT, home, timeoutMs: 180_000 });
  }, 20 * 60_000);
  afterAll(async () => {
    await world?.gateway.close();
    await world?.upstream.close();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  });

  test("runs both commands and answers, the endpoint's signatures back on their calls", () => {
    const context = `exit ${run.code}; stderr:\n${run.stderr.slice(-2_000)}\nstdout tail:\n${run.stdout.slice(-3_000)}`;
    expect(run.code, context).toBe(0);
    expect(run.result, context).toMatchObject({ type: "result", subtype: "success", is_error: false });
    expect(String(run.result?.result)).toContain(FINAL);
    expectSignaturesBack(world!);
  });
});

describe(`Codex ${CODEX_VERSION}, headless, through the gateway to Gemini's OpenAI-compatible endpoint`, () => {
  let world: World | undefined;
  let run: Awaited<ReturnType<typeof runCodex>>;
  beforeAll(async () => {
    const binary = await ensureCodex();
    world = await startWorld(
      turns((command) => ({ name: "exec_command", args: { cmd: command } })),
      "*",
    );
    run = await runCodex({ binary, baseUrl: `${world.gateway.url}/v1`, model: "codex-e2e-model", prompt: PROMPT });
  }, 20 * 60_000);
  afterAll(async () => {
    await world?.gateway.close();
    await world?.upstream.close();
  });

  test("runs both commands and completes the turn, the endpoint's signatures back on their calls", () => {
    const context = `exit ${run.code}; stderr:\n${run.stderr.slice(-2_000)}\nstdout tail:\n${run.stdout.slice(-3_000)}`;
    expect(run.code, context).toBe(0);
    expect(run.lastMessage, context).toBe(FINAL);
    expectSignaturesBack(world!);
  });
});
