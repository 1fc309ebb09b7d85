import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RunningGateway } from "../../src/gateway/server.js";
import {
  CLAUDE_CODE_VERSION,
  type ClaudeCodeRun,
  ensureClaudeCode,
  type RecordingProxy,
  runClaudeCode,
  startRecordingProxy,
} from "../support/claude-code.js";
import {
  fixtureFromExchange,
  namedClaudeCodeFixtureFile,
  readNamedClaudeCodeFixture,
  recordingClaudeCode,
  requestShape,
  writeClaudeCodeFixture,
} from "../support/claude-code-fixtures.js";
import { startTestGateway } from "../support/gateway-harness.js";
import {
  anthropicFrames,
  type RecordedRequest,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../support/scripted-upstream.js";

/**
 * Claude Code's newest request shapes, recorded from the real client (issue 31): the newest release, headless and
 * offline, through the gateway to a scripted Anthropic upstream, run so that it sends what a default headless run
 * against a custom base URL does not:
 *
 * - `_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL=1`: it treats the base URL as Anthropic's own API, and sends what it
 *   keeps for that: `cache_control.scope: "global"` on the static system blocks (beta `prompt-caching-scope`), and
 *   the `diagnostics` body field (`{previous_message_id}`, beta `cache-diagnosis`);
 * - `CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING=1`: `eager_input_streaming: true` on every tool (else only on a
 *   first-party API behind a feature flag, or on Bedrock and Vertex for the models that have it);
 * - `--output-format text`: a headless run that prints text (or JSON without `--verbose`) asks for
 *   `thinking.display: "omitted"`, and the scripted model answers as Anthropic does then, thinking blocks with a
 *   signature and no text, which Claude Code sends back as they came;
 * - an MCP server (`--mcp-config`, `test/support/mcp-tools-server.mjs`): its tools are deferred behind the tool
 *   search, and the scripted model's `ToolSearch` call is answered with `tool_reference` blocks inside the
 *   `tool_result`;
 * - `--input-format stream-json`, a second user message written while a tool runs: the user's mid-turn correction,
 *   which this release sends as a text block beside the tool result ("The user sent a new message while you were
 *   working: ..."), not as an in-sequence `system` message.
 *
 * Every request also carries the in-sequence `system` message with its own `output_config`. Each request reaches
 * the upstream as Claude Code sent it. `PARLEY_RECORD_CLAUDE_CODE=1` writes the last request of each run, redacted,
 * to `test/fixtures/claude-code/<version>.recorded-shapes.json` and `<version>.mid-turn-message.json`, which the
 * conversion checks of `src/gateway/gateway-claude-code-shapes.test.ts` read. Claude Code never sends a `betas` body
 * field here: its SDK turns the betas it is given (`CLAUDE_CODE_EXTRA_BODY`'s too) into the `anthropic-beta` header.
 */

// biome-ignore lint/suspicious/noExplicitAny: assertions walk parsed JSON of any shape
type Json = any;

const VERSION = CLAUDE_CODE_VERSION;
const COMMAND = "sleep 3; echo parley-shapes";
const FINAL = "It printed parley-shapes.";
const CORRECTION = "Only the unit tests, please; the e2e ones need a browser.";
const MCP_SERVER = fileURLToPath(new URL("../support/mcp-tools-server.mjs", import.meta.url));
const ENV = { _CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL: "1", CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING: "1" };

function toolResults(request: RecordedRequest): number {
  const messages = ((request.body as Json)?.messages ?? []) as Json[];
  return messages
    .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
    .filter((block: Json) => block.type === "tool_result").length;
}

/**
 * The scripted model: it thinks (a signature and no text, as Anthropic answers `display: "omitted"`), searches the
 * deferred tools, runs the command, then answers. A request that offers no Bash (a side request) gets a short text.
 */
function answer(request: RecordedRequest, index: number): string[] {
  const body = request.body as Json;
  const main = Array.isArray(body?.tools) && body.tools.some((tool: Json) => tool.name === "Bash");
  const blocks: Json[] = [];
  if (body?.thinking?.type === "adaptive" || body?.thinking?.type === "enabled")
    blocks.push({ type: "thinking", signature: `EqScriptedOmittedDisplay${index}==` });
  let stop = "end_turn";
  const done = toolResults(request);
  if (!main) blocks.push({ type: "text", text: "ok" });
  else if (done === 0) {
    blocks.push({ type: "tool_use", name: "ToolSearch", input: { query: "github issues", max_results: 2 } });
    stop = "tool_use";
  } else if (done === 1) {
    blocks.push({ type: "tool_use", name: "Bash", input: { command: COMMAND, description: "Print a marker" } });
    stop = "tool_use";
  } else blocks.push({ type: "text", text: FINAL });
  const events: Json[] = [
    {
      type: "message_start",
      message: {
        id: `msg_scripted_${index}`,
        type: "message",
        role: "assistant",
        model: body?.model ?? "claude",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 100, output_tokens: 1 },
      },
    },
  ];
  blocks.forEach((block, at) => {
    if (block.type === "thinking") {
      events.push(
        { type: "content_block_start", index: at, content_block: { type: "thinking", thinking: "", signature: "" } },
        { type: "content_block_delta", index: at, delta: { type: "signature_delta", signature: block.signature } },
      );
    } else if (block.type === "text") {
      events.push(
        { type: "content_block_start", index: at, content_block: { type: "text", text: "" } },
        { type: "content_block_delta", index: at, delta: { type: "text_delta", text: block.text } },
      );
    } else {
      const id = `toolu_scripted_${index}`;
      events.push(
        {
          type: "content_block_start",
          index: at,
          content_block: { type: "tool_use", id, name: block.name, input: {} },
        },
        {
          type: "content_block_delta",
          index: at,
          delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
        },
      );
    }
    events.push({ type: "content_block_stop", index: at });
  });
  events.push(
    { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 10 } },
    { type: "message_stop" },
  );
  return anthropicFrames(events);
}

interface Session {
  run: ClaudeCodeRun;
  upstream: ScriptedUpstream;
  gateway: RunningGateway;
  proxy: RecordingProxy;
}

/** One headless run through the gateway; `correction` writes the user's messages as they come (stream-json). */
async function runSession(mode: "text" | "mid-turn"): Promise<Session> {
  const binary = await ensureClaudeCode(VERSION);
  const upstream = await startScriptedUpstream("anthropic");
  let calls = 0;
  let bashAsked: () => void = () => {};
  const whenBashAsked = new Promise<void>((resolve) => {
    bashAsked = resolve;
  });
  upstream.fallback = (request) => {
    const frames = answer(request, calls++);
    if (toolResults(request) === 1) bashAsked();
    return { kind: "sse", frames };
  };
  const gateway = await startTestGateway({
    // The real Anthropic API, which takes what Claude Code sends it (the strict scripted one knows no newer field).
    providers: { anthropic: { upstream, type: "anthropic", preset: "anthropic" } },
    routes: [{ match: "*", provider: "anthropic" }],
  });
  upstream.server = undefined;
  const proxy = await startRecordingProxy(gateway.url);
  // The run's HOME (and working folder), removed after the tests; the MCP server's configuration in it.
  const home = mkdtempSync(join(tmpdir(), "parley-claude-shapes-"));
  const mcpConfig = join(home, "mcp.json");
  writeFileSync(
    mcpConfig,
    JSON.stringify({ mcpServers: { github: { type: "stdio", command: process.execPath, args: [MCP_SERVER] } } }),
  );
  const prompt = `Find the GitHub tools, then run \`${COMMAND}\` and tell me what it printed.`;
  const run = await runClaudeCode({
    binary,
    baseUrl: proxy.url,
    prompt,
    env: ENV,
    home,
    timeoutMs: 180_000,
    args: ["--mcp-config", mcpConfig, ...(mode === "text" ? ["--output-format", "text"] : [])],
    ...(mode === "mid-turn"
      ? {
          conversation: (send: (text: string) => void, end: () => void) => {
            send(prompt);
            // While the command sleeps: the user's correction, then nothing more.
            void whenBashAsked
              .then(() => new Promise((resolve) => setTimeout(resolve, 1_200)))
              .then(() => {
                send(CORRECTION);
                end();
              });
          },
        }
      : {}),
  });
  return { run, upstream, gateway, proxy };
}

const messagePosts = (session: Session) =>
  session.proxy.exchanges.filter((exchange) => exchange.method === "POST" && exchange.path.startsWith("/v1/messages"));

/** Every object in a JSON value. */
function objects(value: unknown): Json[] {
  if (Array.isArray(value)) return value.flatMap(objects);
  if (value === null || typeof value !== "object") return [];
  return [value, ...Object.values(value).flatMap(objects)];
}

function why(run: ClaudeCodeRun): string {
  return `exit ${run.code}; stderr:\n${run.stderr.slice(-2_000)}\nstdout tail:\n${run.stdout.slice(-2_000)}`;
}

/** Writes (when recording) and checks the recorded fixture of a run's last request. */
function checkRecording(session: Session, name: string, note: string): void {
  const last = messagePosts(session).at(-1)!;
  const live = { ...fixtureFromExchange(VERSION, last, session.run.home), note };
  if (recordingClaudeCode) writeClaudeCodeFixture(live, name);
  const recorded = readNamedClaudeCodeFixture(VERSION, name);
  expect(
    recorded,
    `no recording at ${namedClaudeCodeFixtureFile(VERSION, name)}; record it with PARLEY_RECORD_CLAUDE_CODE=1`,
  ).toBeDefined();
  expect(requestShape(live)).toEqual(requestShape(recorded!));
}

function checkPassedThrough(session: Session): void {
  const posts = messagePosts(session);
  expect(posts.length).toBeGreaterThanOrEqual(3);
  for (const exchange of posts) expect(exchange.status, exchange.responseText.slice(0, 300)).toBe(200);
  // The Anthropic upstream got each request as Claude Code sent it, nothing reported lost.
  expect(session.upstream.requests.map((request) => request.body)).toEqual(posts.map((exchange) => exchange.body));
  for (const exchange of posts) expect(exchange.responseHeaders["x-parley-lossy"]).toBeUndefined();
}

describe(`Claude Code ${VERSION}, headless, printing text, as for Anthropic's own API, with an MCP server`, () => {
  let session: Session;

  beforeAll(async () => {
    session = await runSession("text");
  }, 10 * 60_000);

  afterAll(async () => {
    await session?.proxy.close();
    await session?.gateway.close();
    await session?.upstream.close();
    if (session !== undefined) rmSync(session.run.home, { recursive: true, force: true });
  });

  test("completes its turn: the tool search, the command, the answer", () => {
    expect(session.run.code, why(session.run)).toBe(0);
    expect(session.run.stdout).toContain(FINAL);
  });

  test("sends diagnostics, cache_control.scope, eager_input_streaming, thinking.display omitted", () => {
    const posts = messagePosts(session);
    for (const [index, exchange] of posts.entries()) {
      const body = exchange.body as Json;
      expect(body.diagnostics).toEqual({ previous_message_id: index === 0 ? null : expect.any(String) });
      expect(objects(body.system).some((block) => block.cache_control?.scope === "global")).toBe(true);
      // Every tool but the placeholder of the deferred ones, which has no input to stream.
      const streamed = body.tools.filter((tool: Json) => tool.name !== "DeferredToolPlaceholder");
      expect(streamed.length).toBeGreaterThan(0);
      for (const tool of streamed) expect(tool.eager_input_streaming, tool.name).toBe(true);
      expect(body.thinking).toEqual({ type: "adaptive", display: "omitted" });
      const betas = String(exchange.headers["anthropic-beta"]).split(",");
      expect(betas).toEqual(expect.arrayContaining(["cache-diagnosis-2026-04-07", "prompt-caching-scope-2026-01-05"]));
      // The in-sequence system message with its own output_config.
      expect(
        body.messages.some((message: Json) => message.role === "system" && message.output_config !== undefined),
      ).toBe(true);
    }
  });

  test("sends tool_reference blocks inside the tool search's result, and thinking signed with no text back as it came", () => {
    const body = messagePosts(session).at(-1)!.body as Json;
    const results = objects(body.messages).filter((block) => block.type === "tool_result");
    const references = results.flatMap((result: Json) =>
      Array.isArray(result.content) ? result.content.filter((block: Json) => block.type === "tool_reference") : [],
    );
    expect(references.map((block: Json) => block.tool_name)).toEqual([
      "mcp__github__list_issues",
      "mcp__github__get_issue",
    ]);
    expect(body.tools.filter((tool: Json) => tool.defer_loading === true).map((tool: Json) => tool.name)).toEqual(
      expect.arrayContaining(["mcp__github__list_issues", "mcp__github__get_issue"]),
    );
    const thinking = objects(body.messages).filter((block) => block.type === "thinking");
    expect(thinking.length).toBe(2);
    for (const block of thinking)
      expect(block).toEqual({ type: "thinking", thinking: "", signature: expect.any(String) });
  });

  test("each request reached the upstream as sent", () => checkPassedThrough(session));

  test(`its last request is recorded in test/fixtures/claude-code/${VERSION}.recorded-shapes.json`, () =>
    checkRecording(
      session,
      "recorded-shapes",
      `Claude Code ${VERSION}'s third request of \`claude -p PROMPT --output-format text --mcp-config <one stdio server, two tools>\` with _CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL=1 and CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING=1, through Parley to a scripted Anthropic upstream that answered with signed thinking of no text, a ToolSearch call, a Bash call, then text (test/e2e/claude-code-shapes.test.ts, PARLEY_RECORD_CLAUDE_CODE=1); redacted as the first-request fixtures are`,
    ));
});

describe(`Claude Code ${VERSION}, headless, a user message written while a tool runs`, () => {
  let session: Session;

  beforeAll(async () => {
    session = await runSession("mid-turn");
  }, 10 * 60_000);

  afterAll(async () => {
    await session?.proxy.close();
    await session?.gateway.close();
    await session?.upstream.close();
    if (session !== undefined) rmSync(session.run.home, { recursive: true, force: true });
  });

  test("completes its turn", () => {
    expect(session.run.code, why(session.run)).toBe(0);
    expect(session.run.result, why(session.run)).toMatchObject({ type: "result", subtype: "success" });
  });

  test("sends the correction within the running turn, beside the tool's result", () => {
    const body = messagePosts(session).at(-1)!.body as Json;
    const last = body.messages.at(-1);
    expect(last.role).toBe("user");
    expect(last.content[0]).toMatchObject({ type: "tool_result", content: "parley-shapes" });
    const text = last.content.find((block: Json) => block.type === "text")?.text;
    expect(text).toMatch(/^The user sent a new message while you were working:\n/);
    expect(text).toContain(CORRECTION);
    // Not as an in-sequence system message: the only system message is the per-turn one.
    const systems = body.messages.filter((message: Json) => message.role === "system");
    expect(JSON.stringify(systems)).not.toContain(CORRECTION);
  });

  test("each request reached the upstream as sent", () => checkPassedThrough(session));

  test(`its last request is recorded in test/fixtures/claude-code/${VERSION}.mid-turn-message.json`, () =>
    checkRecording(
      session,
      "mid-turn-message",
      `Claude Code ${VERSION}'s third request of \`claude -p --input-format stream-json --output-format stream-json --verbose --mcp-config <one stdio server, two tools>\` with _CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL=1 and CLAUDE_CODE_ENABLE_FINE_GRAINED_TOOL_STREAMING=1: the prompt written first, a second user message written while the scripted Bash call (\`${COMMAND}\`) ran, then the input closed; through Parley to a scripted Anthropic upstream (test/e2e/claude-code-shapes.test.ts, PARLEY_RECORD_CLAUDE_CODE=1); redacted as the first-request fixtures are`,
    ));
});
