import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RunningGateway } from "../../src/gateway/server.js";
import {
  CLAUDE_CODE_VERSIONS,
  type ClaudeCodeRun,
  ensureClaudeCode,
  type ProxiedExchange,
  type RecordingProxy,
  runClaudeCode,
  startRecordingProxy,
} from "../support/claude-code.js";
import {
  claudeCodeFixtureFile,
  fixtureFromExchange,
  readClaudeCodeFixture,
  recordingClaudeCode,
  requestShape,
  writeClaudeCodeFixture,
} from "../support/claude-code-fixtures.js";
import { startTestGateway } from "../support/gateway-harness.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../support/scripted-upstream.js";
import { type ChatMessage, fixtureJson } from "./e2e-support.js";

/**
 * Claude Code releases (installed on demand into a cache folder), each run headless and offline against the
 * gateway through the same tool loop: a scripted OpenAI-compatible upstream asks it to run `echo parley-e2e`,
 * then answers in text. One release from before 2.1.150, one from after 2.1.154, and the newest, since each
 * release adds roles, blocks and fields. A machine where a release cannot be installed fails here, saying why.
 */

const UPSTREAM_MODEL = "scripted-upstream-model";
const turn = fixtureJson<{ toolCall: unknown[]; finalText: unknown[] }>("scripted/claude-code-bash-turn.json");

function carriesToolResult(request: { body: unknown }): boolean {
  const messages = ((request.body as { messages?: ChatMessage[] } | undefined)?.messages ?? []) as ChatMessage[];
  return messages.some((message) => message.role === "tool" && JSON.stringify(message.content).includes("parley-e2e"));
}

interface Session {
  run: ClaudeCodeRun;
  upstream: ScriptedUpstream;
  gateway: RunningGateway;
  proxy: RecordingProxy;
}

async function runSession(version: string): Promise<Session> {
  const binary = await ensureClaudeCode(version);
  const upstream = await startScriptedUpstream("openai");
  upstream.fallback = (request) => ({
    kind: "sse",
    frames: openaiFrames(carriesToolResult(request) ? turn.finalText : turn.toolCall),
  });
  const gateway = await startTestGateway({
    providers: { scripted: { upstream, type: "openai" } },
    routes: [{ match: "claude-*", provider: "scripted", model: UPSTREAM_MODEL }],
  });
  const proxy = await startRecordingProxy(gateway.url);
  const run = await runClaudeCode({
    binary,
    baseUrl: proxy.url,
    prompt: "Run the shell command `echo parley-e2e` and tell me what it printed.",
  });
  return { run, upstream, gateway, proxy };
}

const messagePosts = (session: Session) =>
  session.proxy.exchanges.filter((exchange) => exchange.method === "POST" && exchange.path.startsWith("/v1/messages"));

for (const version of CLAUDE_CODE_VERSIONS) {
  describe(`Claude Code ${version}, headless and offline, through the gateway`, () => {
    let session: Session;

    beforeAll(async () => {
      // The CLI runs once per release (it is the slow part); each test reads a different side of that run.
      session = await runSession(version);
    }, 20 * 60_000);

    afterAll(async () => {
      await session?.proxy.close();
      await session?.gateway.close();
      await session?.upstream.close();
    });

    test("runs the upstream's Bash tool call, sends the result back and completes the turn", () => {
      const { run, upstream } = session;
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
      expect(messages.find((message) => message.role === "tool")).toMatchObject({
        tool_call_id: "call_parley_bash_1",
      });
      // The thinking Claude Code kept (signed by Parley) went back to the upstream inline, where it came from.
      expect(String(assistant?.content)).toContain(
        "<think>The user asks me to run a shell command. I will use Bash.</think>",
      );
      for (const request of upstream.requests) expect((request.body as { model: string }).model).toBe(UPSTREAM_MODEL);
    });

    test("every request it sent was accepted, and what the upstream cannot take was reported", () => {
      const posts = messagePosts(session);
      expect(posts.length).toBeGreaterThanOrEqual(2);
      const describe = (exchange: ProxiedExchange) => `${exchange.method} ${exchange.path} -> ${exchange.status}`;
      for (const exchange of posts) expect(exchange.status, describe(exchange)).toBe(200);
      expect(posts.every((exchange) => exchange.path.includes("beta=true"))).toBe(true);
      const lossy = posts.map((exchange) => String(exchange.responseHeaders["x-parley-lossy"] ?? ""));
      expect(lossy.every((header) => header.length > 0)).toBe(true);
    });

    test("the answer names the model Claude Code asked for, not the upstream's", () => {
      const asked = (messagePosts(session)[0]?.body as { model?: string } | undefined)?.model;
      expect(asked).toMatch(/^claude-/);
      // Every assistant message Claude Code printed carries the model of the gateway's answer.
      const assistantModels = session.run.events
        .filter((event) => event.type === "assistant")
        .map((event) => (event.message as { model?: string }).model);
      expect(assistantModels.length).toBeGreaterThan(0);
      for (const model of assistantModels) expect(model).toBe(asked);
    });

    test(`its first request has the shape recorded in test/fixtures/claude-code/${version}.first-request.json`, () => {
      const first = messagePosts(session)[0]!;
      const live = fixtureFromExchange(version, first, session.run.home);
      if (recordingClaudeCode) writeClaudeCodeFixture(live);
      const recorded = readClaudeCodeFixture(version);
      expect(
        recorded,
        `no recorded first request of ${version} at ${claudeCodeFixtureFile(version)}; record it with PARLEY_RECORD_CLAUDE_CODE=1`,
      ).toBeDefined();
      // A release whose requests changed shape since its fixture was recorded: record it again.
      expect(requestShape(live)).toEqual(requestShape(recorded!));
    });
  });
}
