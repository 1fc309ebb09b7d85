import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { decodeCompaction } from "../../src/core/index.js";
import type { RunningGateway } from "../../src/gateway/server.js";
import { type ProxiedExchange, type RecordingProxy, startRecordingProxy } from "../support/claude-code.js";
import { CODEX_VERSION, type CodexRun, ensureCodex, runCodex } from "../support/codex.js";
import { startTestGateway, type TestProvider } from "../support/gateway-harness.js";
import { actAsGemini, type GeminiServer, geminiFrames } from "../support/gemini-server.js";
import { geminiAnswer, type ScriptedTurn, toolResultCount, turnFrames } from "../support/scripted-turns.js";
import {
  type RecordedRequest,
  type ScriptedReply,
  type ScriptedUpstream,
  startScriptedUpstream,
  type UpstreamKind,
} from "../support/scripted-upstream.js";

/**
 * Codex's remote compaction (`remote_compaction_v2`) through Parley, with the real Codex CLI, on a Chat, an Anthropic,
 * a Gemini and a Responses upstream: made to compact early by its own settings (a small
 * `model_auto_compact_token_limit`, the upstream reporting a large prompt), it sends a `compaction_trigger` request
 * mid-turn, must get exactly one `compaction` item back, replays it in its next request and finishes its turn; then
 * the same session is resumed (`codex exec resume --last`) for one more turn, which replays the item again.
 *
 * On Chat, Anthropic and Gemini, and on a Responses server configured not to compact (`compacts: false`), Parley
 * compacts: it asks the routed model for a summary and answers the item in its envelope; whenever the item is
 * replayed the upstream receives the summary as text, never the envelope. A Responses provider compacts itself, as
 * OpenAI does: the trigger reaches it, its own `compaction` item (the scripted server answers one, as OpenAI's does)
 * reaches Codex as it made it and goes back to it as it made it.
 *
 * Codex compacts remotely only for a provider it takes for OpenAI's (its `name`), so the test's provider is named so;
 * the `remote_compaction_v2` feature is switched on in `[features]`, which Codex also announces in its
 * `x-codex-beta-features` header. (Codex 0.171 compacts with the trigger even without it, and never calls
 * `POST /v1/responses/compact`: `src/gateway/gateway-compaction.test.ts` covers that endpoint.)
 */

type Json = Record<string, unknown>;

const COMMAND = "echo parley-compaction";
const SUMMARY = "SUMMARY: the user asked to run echo parley-compaction; it was called, its output awaited.";
const FINAL = "The command printed parley-compaction.";
const AGAIN = "Say once more what it printed.";
const SECOND = "It printed parley-compaction, once more.";
/** The compaction item a Responses provider makes, sealed as OpenAI seals it (opaque to anyone else). */
const PROVIDER_COMPACTION = {
  id: "cmp_scripted_1",
  type: "compaction",
  encrypted_content: "gAAAAB-opaque-compaction==",
};
/** What the upstream reports as the first prompt's size: far above the limit Codex is given, so it compacts. */
const PROMPT_TOKENS = 50_000;
/** Parley's question when it compacts (`SUMMARY_QUESTION`), as far as a request needs to be told by it. */
const SUMMARY_MARK = "will be replaced by a summary";

interface UpstreamCase {
  name: string;
  kind: UpstreamKind;
  provider: Omit<TestProvider, "upstream">;
  /** Whether Parley compacts (it asks for a summary), or the provider does (the trigger reaches it). */
  parleyCompacts: boolean;
}

const CASES: UpstreamCase[] = [
  { name: "a Chat upstream", kind: "openai", provider: { type: "openai", preset: "deepseek" }, parleyCompacts: true },
  {
    name: "an Anthropic upstream",
    kind: "anthropic",
    provider: { type: "anthropic", preset: "anthropic" },
    parleyCompacts: true,
  },
  { name: "a Gemini upstream", kind: "gemini", provider: { type: "gemini" }, parleyCompacts: true },
  {
    name: "a Responses upstream that compacts (as OpenAI)",
    kind: "openai-responses",
    provider: { type: "openai-responses" },
    parleyCompacts: false,
  },
  {
    name: "a Responses upstream that does not compact (compacts: false)",
    kind: "openai-responses",
    provider: { type: "openai-responses", compacts: false },
    parleyCompacts: true,
  },
];

/** Whether the upstream request is Parley asking for a summary (its last user message says so). */
function asksForSummary(request: RecordedRequest): boolean {
  return request.rawBody.includes(SUMMARY_MARK);
}

/** Whether the request is Codex's trigger, as it reaches a provider that compacts itself. */
function isTrigger(request: RecordedRequest): boolean {
  const input = ((request.body as { input?: unknown } | undefined)?.input ?? []) as Json[];
  return Array.isArray(input) && input.some((item) => item.type === "compaction_trigger");
}

/** Whether the conversation was compacted: the summary (Parley's) or the provider's own item is in it. */
function compacted(request: RecordedRequest): boolean {
  return request.rawBody.includes(SUMMARY) || request.rawBody.includes(PROVIDER_COMPACTION.encrypted_content);
}

/** A scripted turn in the API of `kind`, its usage saying the prompt was `promptTokens` long. */
function frames(kind: UpstreamKind, turn: ScriptedTurn, index: number, promptTokens: number): string[] {
  switch (kind) {
    case "openai":
      return turnFrames(kind, turn, index, {
        usage: { prompt_tokens: promptTokens, completion_tokens: 20, total_tokens: promptTokens + 20 },
      });
    case "anthropic":
      return turnFrames(kind, turn, index, { usage: { input_tokens: promptTokens } });
    case "openai-responses":
      return turnFrames(kind, turn, index, {
        usage: { input_tokens: promptTokens, output_tokens: 20, total_tokens: promptTokens + 20 },
      });
    case "gemini": {
      const answer = geminiAnswer(turn, index);
      const usageMetadata = {
        promptTokenCount: promptTokens,
        candidatesTokenCount: 20,
        totalTokenCount: promptTokens + 20,
      };
      return geminiFrames({ ...answer, usageMetadata });
    }
  }
}

/** The one compaction item OpenAI answers a trigger with, streamed. */
function providerCompactionFrames(): string[] {
  const response = (status: string, output: Json[]) => ({
    id: "resp_compaction",
    object: "response",
    created_at: 1,
    status,
    model: "scripted-model",
    output,
    usage: status === "completed" ? { input_tokens: 300, output_tokens: 40, total_tokens: 340 } : null,
  });
  const events: Json[] = [
    { type: "response.created", response: response("in_progress", []) },
    { type: "response.output_item.added", output_index: 0, item: PROVIDER_COMPACTION },
    { type: "response.output_item.done", output_index: 0, item: PROVIDER_COMPACTION },
    { type: "response.completed", response: response("completed", [PROVIDER_COMPACTION]) },
  ];
  return events.map(
    (event, sequence) =>
      `event: ${event.type as string}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence })}\n\n`,
  );
}

/** The scripted model: calls the command (reporting a large prompt), summarises, answers, answers again. */
function answer(kind: UpstreamKind, request: RecordedRequest): string[] {
  if (asksForSummary(request)) return frames(kind, { thought: "Summing up.", text: SUMMARY }, 1, 300);
  if (isTrigger(request)) return providerCompactionFrames();
  if (request.rawBody.includes(AGAIN)) return frames(kind, { thought: "Once more.", text: SECOND }, 3, 400);
  if (toolResultCount(request) > 0 || compacted(request))
    return frames(kind, { thought: "It ran; I can answer.", text: FINAL }, 2, 300);
  const call = { name: "exec_command", args: { cmd: COMMAND } };
  return frames(kind, { thought: "The user wants the command run.", call }, 0, PROMPT_TOKENS);
}

const responsesPosts = (proxy: RecordingProxy): ProxiedExchange[] =>
  proxy.exchanges.filter((exchange) => exchange.method === "POST" && exchange.path.endsWith("/responses"));

function inputOf(exchange: ProxiedExchange): Json[] {
  return ((exchange.body as { input?: Json[] } | undefined)?.input ?? []) as Json[];
}

const triggers = (proxy: RecordingProxy): ProxiedExchange[] =>
  responsesPosts(proxy).filter((exchange) => inputOf(exchange).some((item) => item.type === "compaction_trigger"));

/** The output items of a streamed Responses answer, from its `response.output_item.done` events. */
function outputItems(exchange: ProxiedExchange): Json[] {
  return exchange.responseText
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .flatMap((line) => {
      try {
        return [JSON.parse(line.slice(6)) as Json];
      } catch {
        return [];
      }
    })
    .filter((event) => event.type === "response.output_item.done")
    .map((event) => event.item as Json);
}

interface World {
  upstream: ScriptedUpstream;
  gateway: RunningGateway;
  proxy: RecordingProxy;
  run: CodexRun;
  resumed: CodexRun;
  /** How many requests the upstream had received when the session was resumed. */
  firstRunRequests: number;
  home: string;
}

function why(run: CodexRun): string {
  return `exit ${run.code}\nstderr: ${run.stderr.slice(-3_000)}\nstdout tail: ${run.stdout.slice(-2_000)}`;
}

describe.each(CASES)(
  `Codex CLI ${CODEX_VERSION}, remote compaction v2 through the gateway to $name`,
  (upstreamCase) => {
    let world: World | undefined;

    beforeAll(async () => {
      const binary = await ensureCodex();
      const upstream = await startScriptedUpstream(upstreamCase.kind);
      const reply = (request: RecordedRequest): ScriptedReply => ({
        kind: "sse",
        frames: answer(upstreamCase.kind, request),
      });
      if (upstreamCase.kind === "gemini") {
        // Google's refusals first (unknown fields, a call without its signature), then the script.
        const server: GeminiServer = { replies: [] };
        actAsGemini(upstream, server);
        const refuseOrReply = upstream.fallback!;
        upstream.fallback = (request) => {
          server.replies = [reply(request)];
          return refuseOrReply(request);
        };
      } else {
        upstream.fallback = reply;
      }
      const gateway = await startTestGateway({
        providers: { scripted: { upstream, ...upstreamCase.provider } },
        routes: [{ match: "*", provider: "scripted", model: "scripted-model" }],
      });
      const proxy = await startRecordingProxy(gateway.url);
      const home = mkdtempSync(join(tmpdir(), "parley-codex-compaction-"));
      const options = {
        binary,
        baseUrl: `${proxy.url}/v1`,
        model: "codex-e2e-model",
        providerName: "OpenAI",
        home,
        config: [
          "model_context_window = 200000",
          "model_auto_compact_token_limit = 4000",
          "",
          "[features]",
          "remote_compaction_v2 = true",
        ],
      };
      const run = await runCodex({ ...options, prompt: `Run \`${COMMAND}\` and tell me what it printed.` });
      const firstRunRequests = upstream.requests.length;
      // The same session, after its compaction: its history (the compaction item in it) goes back once more.
      const resumed = await runCodex({ ...options, prompt: AGAIN, resume: true });
      world = { upstream, gateway, proxy, run, resumed, firstRunRequests, home };
    }, 300_000);

    afterAll(async () => {
      await world?.proxy.close();
      await world?.gateway.close();
      await world?.upstream.close();
      if (world !== undefined) rmSync(world.home, { recursive: true, force: true });
    });

    test("Codex finishes its turn after the compaction", () => {
      const { run } = world!;
      expect(run.code, why(run)).toBe(0);
      expect(run.lastMessage, why(run)).toBe(FINAL);
    });

    test("the compaction_trigger request was answered with exactly one compaction item", () => {
      const { proxy, upstream } = world!;
      const found = triggers(proxy);
      expect(
        found.length,
        responsesPosts(proxy)
          .map((exchange) => exchange.path)
          .join(", "),
      ).toBeGreaterThanOrEqual(1);
      const trigger = found[0]!;
      expect(trigger.status).toBe(200);
      // Mid-turn: the command had run, its output is among what is compacted.
      const outputs = inputOf(trigger).filter((item) => item.type === "function_call_output");
      expect(JSON.stringify(outputs)).toContain("parley-compaction");
      expect(String(trigger.headers["x-codex-beta-features"] ?? "")).toContain("remote_compaction_v2");
      const items = outputItems(trigger);
      expect(items.map((item) => item.type)).toEqual(["compaction"]);
      if (upstreamCase.parleyCompacts) {
        expect(decodeCompaction(items[0]!.encrypted_content as string)?.summary).toBe(SUMMARY);
        expect(upstream.requests.filter(asksForSummary)).toHaveLength(1);
        expect(upstream.requests.some(isTrigger)).toBe(false);
      } else {
        // The provider compacted: the trigger reached it, and its item reached Codex as it made it.
        expect(items[0]).toEqual(PROVIDER_COMPACTION);
        expect(upstream.requests.filter(isTrigger)).toHaveLength(1);
        expect(upstream.requests.some(asksForSummary)).toBe(false);
      }
    });

    test("the next request replayed the compaction item; the upstream got the summary as text, never the envelope", () => {
      const { proxy, upstream, firstRunRequests } = world!;
      const posts = responsesPosts(proxy);
      const triggerIndex = posts.indexOf(triggers(proxy)[0]!);
      const compaction = outputItems(posts[triggerIndex]!).find((item) => item.type === "compaction")!;
      const next = posts[triggerIndex + 1];
      expect(next, "a request after the compaction").toBeDefined();
      const replayed = inputOf(next!).filter((item) => item.type === "compaction");
      expect(replayed).toEqual([expect.objectContaining({ encrypted_content: compaction.encrypted_content })]);

      const compacting = upstream.requests.findIndex(upstreamCase.parleyCompacts ? asksForSummary : isTrigger);
      const after = upstream.requests.slice(compacting + 1, firstRunRequests);
      expect(after.length).toBeGreaterThanOrEqual(1);
      for (const request of after) {
        expect(request.rawBody).not.toContain("parley.v1.");
        if (upstreamCase.parleyCompacts) expect(request.rawBody).toContain(SUMMARY);
        else {
          // Its own item, as it made it, where Codex put it.
          const input = (request.body as { input: Json[] }).input;
          expect(input.filter((item) => item.type === "compaction")).toEqual([PROVIDER_COMPACTION]);
        }
      }
    });

    test("the session goes on: resumed, it replays the compaction and completes another turn", () => {
      const { resumed, proxy, upstream, firstRunRequests } = world!;
      expect(resumed.code, why(resumed)).toBe(0);
      expect(resumed.lastMessage, why(resumed)).toBe(SECOND);
      const resumedPosts = responsesPosts(proxy).filter((exchange) => JSON.stringify(exchange.body).includes(AGAIN));
      expect(resumedPosts.length).toBeGreaterThanOrEqual(1);
      expect(inputOf(resumedPosts[0]!).some((item) => item.type === "compaction")).toBe(true);
      const later = upstream.requests.slice(firstRunRequests);
      expect(later.length).toBeGreaterThanOrEqual(1);
      for (const request of later) {
        expect(request.rawBody).not.toContain("parley.v1.");
        expect(compacted(request), "the compacted conversation is in the resumed turn's request").toBe(true);
      }
    });
  },
);
