import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { decodeCompaction } from "../../src/core/index.js";
import type { RunningGateway } from "../../src/gateway/server.js";
import { type ProxiedExchange, type RecordingProxy, startRecordingProxy } from "../support/claude-code.js";
import { CODEX_VERSION, type CodexRun, ensureCodex, runCodex } from "../support/codex.js";
import { startTestGateway } from "../support/gateway-harness.js";
import {
  openaiFrames,
  type RecordedRequest,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../support/scripted-upstream.js";

/**
 * Codex's remote compaction (`remote_compaction_v2`) through Parley on a Chat upstream, with the real Codex CLI: made
 * to compact early by its own settings (a small `model_auto_compact_token_limit`, the upstream reporting a large
 * prompt), it sends a `compaction_trigger` request mid-turn, must get exactly one `compaction` item back, replays it
 * in its next request and finishes its turn. Codex compacts remotely only for a provider it takes for OpenAI's (its
 * `name`), so the test's provider is named so; the `remote_compaction_v2` feature is switched on in `[features]`,
 * which Codex also announces in its `x-codex-beta-features` header.
 */

type Json = Record<string, unknown>;

const COMMAND = "echo parley-compaction";
const SUMMARY = "SUMMARY: the user asked to run echo parley-compaction; it was called, its output awaited.";
const FINAL = "The command printed parley-compaction.";
/** What the upstream reports as each prompt's size: far above the limit Codex is given, so it compacts. */
const PROMPT_TOKENS = 50_000;

interface World {
  upstream: ScriptedUpstream;
  gateway: RunningGateway;
  proxy: RecordingProxy;
  run: CodexRun;
}

let world: World | undefined;

/** Whether the upstream request is Parley asking for a summary (its last user message says so). */
function asksForSummary(request: RecordedRequest): boolean {
  const messages = ((request.body as { messages?: Json[] } | undefined)?.messages ?? []) as Json[];
  const last = messages.at(-1);
  return last?.role === "user" && JSON.stringify(last.content).includes("will be replaced by a summary");
}

/** Whether the command ran: its result is in the conversation, or the summary that replaced it is. */
function afterTheCommand(request: RecordedRequest): boolean {
  const messages = ((request.body as { messages?: Json[] } | undefined)?.messages ?? []) as Json[];
  return messages.some((message) => message.role === "tool") || request.rawBody.includes(SUMMARY);
}

function chatAnswer(request: RecordedRequest): string[] {
  const chunk = (delta: Json, finish: string | null = null) => ({
    id: "chatcmpl-compaction",
    object: "chat.completion.chunk",
    created: 1,
    model: "scripted-model",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  // Only the first answer reports a large prompt: once compacted, the conversation is small again.
  const usageOf = (prompt: number) => ({
    ...chunk({}),
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: 20, total_tokens: prompt + 20 },
  });
  if (asksForSummary(request))
    return openaiFrames([chunk({ role: "assistant", content: SUMMARY }), chunk({}, "stop"), usageOf(300)]);
  if (afterTheCommand(request))
    return openaiFrames([chunk({ role: "assistant", content: FINAL }), chunk({}, "stop"), usageOf(300)]);
  const usage = usageOf(PROMPT_TOKENS);
  return openaiFrames([
    chunk({
      role: "assistant",
      content: null,
      tool_calls: [
        {
          index: 0,
          id: "call_compaction_1",
          type: "function",
          function: { name: "exec_command", arguments: JSON.stringify({ cmd: COMMAND }) },
        },
      ],
    }),
    chunk({}, "tool_calls"),
    usage,
  ]);
}

const responsesPosts = (proxy: RecordingProxy): ProxiedExchange[] =>
  proxy.exchanges.filter((exchange) => exchange.method === "POST" && exchange.path.endsWith("/responses"));

function inputOf(exchange: ProxiedExchange): Json[] {
  return ((exchange.body as { input?: Json[] } | undefined)?.input ?? []) as Json[];
}

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

describe(`Codex CLI ${CODEX_VERSION}, remote compaction v2 through the gateway to a Chat upstream`, () => {
  beforeAll(async () => {
    const binary = await ensureCodex();
    const upstream = await startScriptedUpstream("openai");
    upstream.fallback = (request) => ({ kind: "sse", frames: chatAnswer(request) });
    const gateway = await startTestGateway({
      providers: { scripted: { upstream, type: "openai", preset: "deepseek" } },
      routes: [{ match: "*", provider: "scripted", model: "scripted-model" }],
    });
    const proxy = await startRecordingProxy(gateway.url);
    const run = await runCodex({
      binary,
      baseUrl: `${proxy.url}/v1`,
      model: "codex-e2e-model",
      prompt: `Run \`${COMMAND}\` and tell me what it printed.`,
      providerName: "OpenAI",
      config: [
        "model_context_window = 200000",
        "model_auto_compact_token_limit = 4000",
        "",
        "[features]",
        "remote_compaction_v2 = true",
      ],
    });
    world = { upstream, gateway, proxy, run };
  }, 300_000);

  afterAll(async () => {
    await world?.proxy.close();
    await world?.gateway.close();
    await world?.upstream.close();
  });

  test("Codex finishes its turn after the compaction", () => {
    const { run } = world!;
    const why = `exit ${run.code}\nstderr: ${run.stderr.slice(-3_000)}`;
    expect(run.code, why).toBe(0);
    expect(run.lastMessage, why).toBe(FINAL);
  });

  test("the compaction_trigger request was answered with exactly one compaction item", () => {
    const posts = responsesPosts(world!.proxy);
    const triggers = posts.filter((exchange) => inputOf(exchange).some((item) => item.type === "compaction_trigger"));
    expect(triggers.length, posts.map((exchange) => exchange.path).join(", ")).toBeGreaterThanOrEqual(1);
    const trigger = triggers[0]!;
    expect(trigger.status).toBe(200);
    // Mid-turn: the command had run, its output is among what is compacted.
    const outputs = inputOf(trigger).filter((item) => item.type === "function_call_output");
    expect(JSON.stringify(outputs)).toContain("parley-compaction");
    expect(String(trigger.headers["x-codex-beta-features"] ?? "")).toContain("remote_compaction_v2");
    const compactions = outputItems(trigger).filter((item) => item.type === "compaction");
    expect(compactions).toHaveLength(1);
    expect(outputItems(trigger)).toHaveLength(1);
    expect(decodeCompaction(compactions[0]!.encrypted_content as string)?.summary).toBe(SUMMARY);
  });

  test("the next request replayed the compaction item, and the upstream received the summary as text", () => {
    const { proxy, upstream } = world!;
    const posts = responsesPosts(proxy);
    const triggerIndex = posts.findIndex((exchange) =>
      inputOf(exchange).some((item) => item.type === "compaction_trigger"),
    );
    const compaction = outputItems(posts[triggerIndex]!).find((item) => item.type === "compaction")!;
    const next = posts[triggerIndex + 1];
    expect(next, "a request after the compaction").toBeDefined();
    const replayed = inputOf(next!).filter((item) => item.type === "compaction");
    expect(replayed).toEqual([expect.objectContaining({ encrypted_content: compaction.encrypted_content })]);

    const summaryRequests = upstream.requests.filter(asksForSummary);
    expect(summaryRequests).toHaveLength(1);
    const after = upstream.requests.slice(upstream.requests.indexOf(summaryRequests[0]!) + 1);
    expect(after.length).toBeGreaterThanOrEqual(1);
    for (const request of after) {
      expect(request.rawBody).toContain("SUMMARY: the user asked to run echo parley-compaction");
      expect(request.rawBody).not.toContain("parley.v1.");
    }
  });
});
