import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RunningGateway } from "../../src/gateway/server.js";
import {
  CLAUDE_CODE_VERSION,
  type ClaudeCodeRun,
  ensureClaudeCode,
  type ProxiedExchange,
  type RecordingProxy,
  runClaudeCode,
  startRecordingProxy,
} from "../support/claude-code.js";
import {
  ensureLlamaServer,
  LLAMA_SERVER_BUILD_TIMEOUT_MS,
  type RunningLlamaServer,
  startLlamaServer,
  startParleyFor,
} from "../support/llama-server.js";

/**
 * Claude Code (the newest release the tests run) on the real llama.cpp server, through Parley started with only
 * `--upstream`: one session of two turns, the second continued with `--continue` in the same HOME.
 *
 * The window is chosen so that the session outgrows it. Claude Code's system prompt and tools alone are about
 * 12,300 tokens by the server's count (measured with 2.1.330 and 2.1.332); the server runs with 16,384. Turn one
 * brings about 2,500 tokens of notes and fits (about 14,900); turn two brings about 1,800 more and does not (about
 * 16,800). Parley answers that request with Anthropic's `prompt is too long: N tokens > 16384 maximum`; Claude
 * Code's reactive compaction then asks for a summary (its first attempts, with the whole history, are over the
 * window too, and it sends less until one fits), and sends the turn again on the compacted history, which fits.
 *
 * The tiny model calls a tool whenever tools are offered and no tool result is in the conversation yet; Claude
 * Code refuses the call (only Bash is allowed), and the model then answers "Hello from llama!".
 */

const WINDOW = 16_384;
const ANSWER = "Hello from llama!";
/** Claude Code's compaction prompt begins its last user message with this. */
const SUMMARY_REQUEST = "create a detailed summary of";

const notes = (label: string, count: number) =>
  Array.from({ length: count }, (_, index) => `${label} ${index}: the quick brown fox jumps over the dog.`).join("\n");
const FIRST_PROMPT = `Here are my first notes:\n${notes("Note", 300)}\nSay hello.`;
const SECOND_PROMPT = `Here are more notes:\n${notes("Item", 220)}\nSay hello again.`;

/** A turn on two shared cores: the first request's 12,300 prompt tokens take 8-40 s, a compaction 20-80 s more. */
const TURN_TIMEOUT_MS = 6 * 60_000;

let server: RunningLlamaServer;
/** Between Parley and the server. */
let upstreamProxy: RecordingProxy;
let parley: RunningGateway;
/** Between Claude Code and Parley. */
let clientProxy: RecordingProxy;
let home: string;
let firstTurn: ClaudeCodeRun;
let secondTurn: ClaudeCodeRun;
/** The client exchanges of each turn. */
let firstExchanges: ProxiedExchange[];
let secondExchanges: ProxiedExchange[];

beforeAll(
  async () => {
    const [build, binary] = await Promise.all([ensureLlamaServer(), ensureClaudeCode(CLAUDE_CODE_VERSION)]);
    server = await startLlamaServer(build, { contextSize: WINDOW });
    upstreamProxy = await startRecordingProxy(server.origin);
    parley = await startParleyFor(`${upstreamProxy.url}/v1`);
    clientProxy = await startRecordingProxy(parley.url);
    home = mkdtempSync(join(tmpdir(), "parley-claude-session-"));
    const turn = (prompt: string, args: string[] = []) =>
      runClaudeCode({ binary, baseUrl: clientProxy.url, prompt, args, home, timeoutMs: TURN_TIMEOUT_MS });
    firstTurn = await turn(FIRST_PROMPT);
    firstExchanges = messagePosts(clientProxy.exchanges);
    secondTurn = await turn(SECOND_PROMPT, ["--continue"]);
    secondExchanges = messagePosts(clientProxy.exchanges).slice(firstExchanges.length);
  },
  LLAMA_SERVER_BUILD_TIMEOUT_MS + 2 * TURN_TIMEOUT_MS,
);

afterAll(async () => {
  await clientProxy?.close();
  await parley?.close();
  await upstreamProxy?.close();
  await server?.stop();
  if (home !== undefined) rmSync(home, { recursive: true, force: true });
});

function messagePosts(exchanges: ProxiedExchange[]): ProxiedExchange[] {
  return exchanges.filter((exchange) => exchange.method === "POST" && exchange.path.startsWith("/v1/messages?"));
}

function isSummaryRequest(exchange: ProxiedExchange): boolean {
  const messages = (exchange.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  const last = messages.at(-1);
  return last?.role === "user" && JSON.stringify(last.content).includes(SUMMARY_REQUEST);
}

function context(run: ClaudeCodeRun, exchanges: ProxiedExchange[]): string {
  const statuses = exchanges.map((exchange) => `${exchange.status}${isSummaryRequest(exchange) ? " (summary)" : ""}`);
  return [
    `exit ${run.code}; requests: ${statuses.join(", ")}`,
    `stderr:\n${run.stderr.slice(-2_000)}`,
    `stdout tail:\n${run.stdout.slice(-2_000)}`,
    `server log tail:\n${server.log().slice(-2_000)}`,
  ].join("\n");
}

describe(`Claude Code ${CLAUDE_CODE_VERSION} on llama-server (window ${WINDOW}) through Parley`, () => {
  test("completes a turn: the tool call it refuses goes back as a result, then the model's answer", () => {
    expect(firstTurn.result, context(firstTurn, firstExchanges)).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
      result: ANSWER,
    });
    expect(firstExchanges.length).toBeGreaterThanOrEqual(2);
    for (const exchange of firstExchanges) expect(exchange.status, context(firstTurn, firstExchanges)).toBe(200);
  });

  test("every request reached the server with a max_tokens that fits beside its prompt", () => {
    const asked = (firstExchanges[0]?.body as { max_tokens?: number } | undefined)?.max_tokens;
    expect(asked).toBeGreaterThan(WINDOW);
    const sent = upstreamProxy.exchanges.filter((exchange) => exchange.path === "/v1/chat/completions");
    expect(sent.length).toBeGreaterThanOrEqual(2);
    for (const exchange of sent) {
      const body = exchange.body as { max_tokens?: number; max_completion_tokens?: number };
      const maxTokens = body.max_tokens ?? body.max_completion_tokens;
      // the prompt alone is over 12,000 tokens
      expect(maxTokens).toBeLessThan(WINDOW - 12_000);
    }
  });

  test("the next turn overflows the window: Parley answers with Anthropic's `prompt is too long`", () => {
    const first = secondExchanges[0];
    expect(first?.status, context(secondTurn, secondExchanges)).toBe(400);
    const error = JSON.parse(first!.responseText) as { type: string; error: { type: string; message: string } };
    expect(error).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    const counted = /^prompt is too long: (\d+) tokens > (\d+) maximum$/.exec(error.error.message);
    expect(counted, error.error.message).not.toBeNull();
    expect(Number(counted![1])).toBeGreaterThan(WINDOW);
    expect(Number(counted![2])).toBe(WINDOW);
  });

  test("Claude Code compacts automatically through Parley: a summary request answered 200", () => {
    const summaries = secondExchanges.filter(isSummaryRequest);
    expect(summaries.length, context(secondTurn, secondExchanges)).toBeGreaterThanOrEqual(1);
    // Attempts over the window get the same overflow error, and Claude Code sends less; one must be answered.
    for (const exchange of summaries) expect([200, 400]).toContain(exchange.status);
    const answered = summaries.filter((exchange) => exchange.status === 200);
    expect(answered.length).toBeGreaterThanOrEqual(1);
    // Claude Code asks for 128,000 tokens; Parley lowered that to what the window leaves, and said so.
    for (const exchange of answered) {
      const lossy = JSON.parse(String(exchange.responseHeaders["x-parley-lossy"] ?? "[]")) as Array<{ code: string }>;
      expect(lossy.map((entry) => entry.code)).toContain("max_tokens-lowered");
    }
    const boundary = secondTurn.events.find((event) => event.type === "system" && event.subtype === "compact_boundary");
    expect(boundary, context(secondTurn, secondExchanges)).toMatchObject({ compact_metadata: { trigger: "auto" } });
  });

  test("and completes the turn on the compacted history", () => {
    const lastSummary = secondExchanges.findLastIndex(isSummaryRequest);
    const after = secondExchanges.slice(lastSummary + 1);
    expect(after.length, context(secondTurn, secondExchanges)).toBeGreaterThanOrEqual(1);
    for (const exchange of after) expect(exchange.status, context(secondTurn, secondExchanges)).toBe(200);
    expect(secondTurn.result, context(secondTurn, secondExchanges)).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
      result: ANSWER,
    });
  });
});
