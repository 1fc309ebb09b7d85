import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RunningGateway } from "../../src/gateway/server.js";
import {
  type ClaudeCodeRun,
  ensureClaudeCode,
  type ProxiedExchange,
  type RecordingProxy,
  runClaudeCode,
  startRecordingProxy,
} from "../support/claude-code.js";
import { startTestGateway } from "../support/gateway-harness.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../support/scripted-upstream.js";
import { type ChatMessage, fixtureJson } from "./e2e-support.js";

/**
 * The Claude Code CLI itself (installed on demand into a cache folder) run headless against the gateway, with a
 * scripted OpenAI-compatible upstream that asks it to run `echo parley-e2e` and then answers in text. A machine
 * where the CLI cannot be installed fails here, saying why.
 */

const UPSTREAM_MODEL = "scripted-upstream-model";
const turn = fixtureJson<{ toolCall: unknown[]; finalText: unknown[] }>("scripted/claude-code-bash-turn.json");

let run: ClaudeCodeRun;
let upstream: ScriptedUpstream;
let gateway: RunningGateway;
let proxy: RecordingProxy;

function carriesToolResult(request: { body: unknown }): boolean {
  const messages = ((request.body as { messages?: ChatMessage[] } | undefined)?.messages ?? []) as ChatMessage[];
  return messages.some((message) => message.role === "tool" && JSON.stringify(message.content).includes("parley-e2e"));
}

beforeAll(async () => {
  const binary = await ensureClaudeCode();
  upstream = await startScriptedUpstream("openai");
  upstream.fallback = (request) => ({
    kind: "sse",
    frames: openaiFrames(carriesToolResult(request) ? turn.finalText : turn.toolCall),
  });
  gateway = await startTestGateway({
    providers: { scripted: { upstream, type: "openai" } },
    routes: [{ match: "claude-*", provider: "scripted", model: UPSTREAM_MODEL }],
  });
  proxy = await startRecordingProxy(gateway.url);
  // The CLI runs once (it is the slow part); each test reads a different side of that run.
  run = await runClaudeCode({
    binary,
    baseUrl: proxy.url,
    prompt: "Run the shell command `echo parley-e2e` and tell me what it printed.",
  });
}, 20 * 60_000);

afterAll(async () => {
  await proxy?.close();
  await gateway?.close();
  await upstream?.close();
});

describe("Claude Code 2.1.330, headless, through the gateway", () => {
  test("runs the upstream's Bash tool call, sends the result back and completes the turn", () => {
    const context = `exit ${run.code}; stderr:\n${run.stderr.slice(-2_000)}\nstdout tail:\n${run.stdout.slice(-2_000)}`;
    expect(run.code, context).toBe(0);
    expect(run.result, context).toMatchObject({ type: "result", subtype: "success", is_error: false });
    expect(String(run.result?.result)).toContain("parley-e2e");

    // The upstream saw the tool result on the request after the tool call, in OpenAI's shape.
    const withResult = upstream.requests.filter(carriesToolResult);
    expect(withResult.length).toBeGreaterThanOrEqual(1);
    const messages = (withResult[0]!.body as { messages: ChatMessage[] }).messages;
    const assistant = messages.find((message) => message.role === "assistant" && Array.isArray(message.tool_calls));
    expect(assistant?.tool_calls).toEqual([
      expect.objectContaining({ id: "call_parley_bash_1", function: expect.objectContaining({ name: "Bash" }) }),
    ]);
    expect(messages.find((message) => message.role === "tool")).toMatchObject({ tool_call_id: "call_parley_bash_1" });
    // The thinking Claude Code kept (signed by Parley) went back to the upstream inline, where it came from.
    expect(String(assistant?.content)).toContain(
      "<think>The user asks me to run a shell command. I will use Bash.</think>",
    );
    for (const request of upstream.requests) expect((request.body as { model: string }).model).toBe(UPSTREAM_MODEL);
  });

  test("what Claude Code sent was accepted: ?beta=true, a system message in place, adaptive thinking", () => {
    const posts = proxy.exchanges.filter(
      (exchange) => exchange.method === "POST" && exchange.path.startsWith("/v1/messages"),
    );
    expect(posts.length).toBeGreaterThanOrEqual(2);
    const describe = (exchange: ProxiedExchange) => `${exchange.method} ${exchange.path} -> ${exchange.status}`;
    for (const exchange of posts) expect(exchange.status, describe(exchange)).toBe(200);
    expect(posts.every((exchange) => exchange.path.includes("beta=true"))).toBe(true);
    const bodies = posts.map((exchange) => exchange.body as Record<string, unknown>);
    expect(bodies.some((body) => (body.messages as ChatMessage[]).some((message) => message.role === "system"))).toBe(
      true,
    );
    expect(bodies.some((body) => (body.thinking as { type?: string } | undefined)?.type === "adaptive")).toBe(true);
    // The fields an OpenAI-compatible upstream cannot take were dropped and said so.
    const lossy = posts.map((exchange) => String(exchange.responseHeaders["x-parley-lossy"] ?? ""));
    expect(lossy.some((header) => header.length > 0)).toBe(true);
  });

  test("the answer names the model Claude Code asked for, not the upstream's", () => {
    const first = proxy.exchanges.find((exchange) => exchange.method === "POST");
    const asked = (first?.body as { model?: string } | undefined)?.model;
    expect(asked).toMatch(/^claude-/);
    // Every assistant message Claude Code printed carries the model of the gateway's answer.
    const assistantModels = run.events
      .filter((event) => event.type === "assistant")
      .map((event) => (event.message as { model?: string }).model);
    expect(assistantModels.length).toBeGreaterThan(0);
    for (const model of assistantModels) expect(model).toBe(asked);
  });
});
