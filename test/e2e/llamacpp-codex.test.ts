import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RunningGateway } from "../../src/gateway/server.js";
import { type ProxiedExchange, type RecordingProxy, startRecordingProxy } from "../support/claude-code.js";
import { CODEX_VERSION, type CodexRun, ensureCodex, runCodex } from "../support/codex.js";
import {
  ensureLlamaServer,
  LLAMA_SERVER_BUILD_TIMEOUT_MS,
  type RunningLlamaServer,
  startLlamaServer,
  startParleyFor,
} from "../support/llama-server.js";

/**
 * Codex's local compaction on the real llama.cpp server, through Parley started with only `--upstream`: one session
 * of two turns (`codex exec`, then `codex exec resume --last` in the same HOME).
 *
 * Codex is told the server's window (`model_context_window`, as a user of a local model sets it) and to compact at
 * the end of a turn that used more than 40% of it (`model_post_turn_compact_threshold_percent`). Its instructions
 * and tools alone are about 8,500 tokens by the server's count (measured with 0.171.0), over 40% of the 16,384
 * window (Codex counts 95% of it, 15,564, so 6,226), so each turn ends with a summary request ("CONTEXT CHECKPOINT
 * COMPACTION"), answered on the server through Parley; the next turn starts from the summary instead of the
 * history. Codex does not compact on a context overflow: it ends the turn ("Codex ran out of room in the model's
 * context window"), so the threshold is how it is made to compact.
 *
 * The tiny model calls a tool whenever tools are offered and no tool result is in the conversation yet (here a
 * `wait_agent` with arguments Codex rejects), then answers "Hello from llama!".
 */

const WINDOW = 16_384;
const ANSWER = "Hello from llama!";
/** Codex's compaction prompt. */
const SUMMARY_REQUEST = "CONTEXT CHECKPOINT COMPACTION";
/** What Codex puts before the summary in the compacted history. */
const SUMMARY_PREFIX = "Another language model started to solve this problem";

/** A turn on two shared cores: the first request's 8,500 prompt tokens take 5-30 s. */
const TURN_TIMEOUT_MS = 4 * 60_000;

type Json = Record<string, unknown>;

let server: RunningLlamaServer;
let parley: RunningGateway;
/** Between Codex and Parley. */
let proxy: RecordingProxy;
let home: string;
let firstTurn: CodexRun;
let secondTurn: CodexRun;
let firstExchanges: ProxiedExchange[];
let secondExchanges: ProxiedExchange[];

const responsesPosts = (exchanges: ProxiedExchange[]) =>
  exchanges.filter((exchange) => exchange.method === "POST" && exchange.path.endsWith("/responses"));

beforeAll(
  async () => {
    const [build, binary] = await Promise.all([ensureLlamaServer(), ensureCodex()]);
    server = await startLlamaServer(build, { contextSize: WINDOW });
    parley = await startParleyFor(`${server.origin}/v1`);
    proxy = await startRecordingProxy(parley.url);
    home = mkdtempSync(join(tmpdir(), "parley-codex-session-"));
    const turn = (prompt: string, resume: boolean) =>
      runCodex({
        binary,
        baseUrl: `${proxy.url}/v1`,
        model: server.alias,
        prompt,
        home,
        resume,
        timeoutMs: TURN_TIMEOUT_MS,
        config: [`model_context_window = ${WINDOW}`, "model_post_turn_compact_threshold_percent = 40"],
      });
    firstTurn = await turn("Say hello.", false);
    firstExchanges = responsesPosts(proxy.exchanges);
    secondTurn = await turn("Say hello again.", true);
    secondExchanges = responsesPosts(proxy.exchanges).slice(firstExchanges.length);
  },
  LLAMA_SERVER_BUILD_TIMEOUT_MS + 2 * TURN_TIMEOUT_MS,
);

afterAll(async () => {
  await proxy?.close();
  await parley?.close();
  await server?.stop();
  if (home !== undefined) rmSync(home, { recursive: true, force: true });
});

function inputOf(exchange: ProxiedExchange): Json[] {
  return ((exchange.body as { input?: Json[] } | undefined)?.input ?? []) as Json[];
}

function isSummaryRequest(exchange: ProxiedExchange): boolean {
  const last = inputOf(exchange).at(-1);
  return last?.role === "user" && JSON.stringify(last.content).includes(SUMMARY_REQUEST);
}

function context(run: CodexRun, exchanges: ProxiedExchange[]): string {
  const statuses = exchanges.map((exchange) => `${exchange.status}${isSummaryRequest(exchange) ? " (summary)" : ""}`);
  return [
    `exit ${run.code}; requests: ${statuses.join(", ")}`,
    `stderr:\n${run.stderr.slice(-2_000)}`,
    `stdout tail:\n${run.stdout.slice(-2_000)}`,
    `server log tail:\n${server.log().slice(-2_000)}`,
  ].join("\n");
}

/** The summary request of a turn: after its answer, answered 200 with a whole stream. */
function expectSummaryAnswered(run: CodexRun, exchanges: ProxiedExchange[]): void {
  const summaries = exchanges.filter(isSummaryRequest);
  expect(summaries.length, context(run, exchanges)).toBe(1);
  const summary = summaries[0]!;
  expect(exchanges.at(-1), "the summary is asked for once the turn has its answer").toBe(summary);
  expect(summary.status).toBe(200);
  expect(summary.responseText).toContain("response.completed");
  expect(summary.responseText).toContain(ANSWER);
}

describe(`Codex ${CODEX_VERSION} on llama-server (window ${WINDOW}) through Parley, compacting locally`, () => {
  test("the first turn completes: the tool call, its result, the answer", () => {
    expect(firstTurn.code, context(firstTurn, firstExchanges)).toBe(0);
    expect(firstTurn.lastMessage, context(firstTurn, firstExchanges)).toBe(ANSWER);
    const turnRequests = firstExchanges.filter((exchange) => !isSummaryRequest(exchange));
    expect(turnRequests.length).toBeGreaterThanOrEqual(2);
    for (const exchange of turnRequests) expect(exchange.status, context(firstTurn, firstExchanges)).toBe(200);
  });

  test("then Codex compacts: its summary request, the whole history, answered on the server", () => {
    expectSummaryAnswered(firstTurn, firstExchanges);
    const summaryInput = inputOf(firstExchanges.at(-1)!);
    expect(summaryInput.some((item) => item.type === "function_call_output")).toBe(true);
  });

  test("the next turn starts from the summary, not the history, and completes", () => {
    expect(secondTurn.code, context(secondTurn, secondExchanges)).toBe(0);
    expect(secondTurn.lastMessage, context(secondTurn, secondExchanges)).toBe(ANSWER);
    const first = secondExchanges[0]!;
    expect(first.status).toBe(200);
    const input = JSON.stringify(inputOf(first));
    expect(input).toContain(SUMMARY_PREFIX);
    expect(input).toContain("Say hello again.");
    // the first turn's call and its output were replaced by the summary
    expect(inputOf(first).some((item) => item.type === "function_call_output")).toBe(false);
    const turnRequests = secondExchanges.filter((exchange) => !isSummaryRequest(exchange));
    for (const exchange of turnRequests) expect(exchange.status, context(secondTurn, secondExchanges)).toBe(200);
  });

  test("and that turn, as large, is compacted in its turn", () => {
    expectSummaryAnswered(secondTurn, secondExchanges);
  });
});
