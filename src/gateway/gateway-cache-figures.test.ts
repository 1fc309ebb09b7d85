import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  getJson,
  type Json,
  postJson,
  postStream,
  type StreamReply,
  startTestGateway,
} from "../../test/support/gateway-harness.js";
import { traceOf } from "../../test/support/inspector-session.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * The prompt cache, where users see it: an Anthropic client's `message_start` carries the input and cache figures
 * when the upstream gives them before the answer (Gemini's every chunk, a Chat server's that sends usage on each), its
 * `message_delta` the final ones; each trace keeps the four figures and, for a turn sent to another provider or model
 * than its conversation's previous one, where that one went; `/metrics` counts both per provider and model.
 */

let chat: ScriptedUpstream;
let gemini: ScriptedUpstream;
let gateway: RunningGateway;

const CHAT_MODEL = "qwen3-coder";
const GEMINI_MODEL = "gemini-3-pro-preview";

beforeAll(async () => {
  chat = await startScriptedUpstream("openai");
  gemini = await startScriptedUpstream("gemini");
  gateway = await startTestGateway({
    providers: { local: { type: "openai", upstream: chat }, google: { type: "gemini", upstream: gemini } },
    defaultProvider: "local",
    routes: [
      { match: "gemini-*", provider: "google", model: GEMINI_MODEL },
      { match: "*", provider: "local", model: CHAT_MODEL },
    ],
  });
});

afterAll(async () => {
  await gateway?.close();
  await chat?.close();
  await gemini?.close();
});

/** A Gemini stream that counts the prompt (1,000 tokens, `cached` of them from the cache) on every chunk. */
function geminiStream(text: string, cached: number): string[] {
  const prompt = { promptTokenCount: 1000, cachedContentTokenCount: cached };
  const chunk = (piece: string, extra: object, usage: object) =>
    `data: ${JSON.stringify({
      candidates: [{ content: { role: "model", parts: [{ text: piece }] }, index: 0, ...extra }],
      usageMetadata: { ...prompt, ...usage },
      modelVersion: GEMINI_MODEL,
      responseId: "gemini-answer",
    })}\n\n`;
  const half = Math.floor(text.length / 2);
  return [
    chunk(text.slice(0, half), {}, { totalTokenCount: 1000 }),
    chunk(text.slice(half), { finishReason: "STOP" }, { candidatesTokenCount: 7, totalTokenCount: 1007 }),
  ];
}

const chunk = (delta: object, finish: string | null = null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1,
  model: CHAT_MODEL,
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const chatUsage = (cached: number, completion: number) => ({
  prompt_tokens: 1000,
  completion_tokens: completion,
  total_tokens: 1000 + completion,
  prompt_tokens_details: { cached_tokens: cached },
});

/** A Chat stream with usage only in its last chunk, as most servers send it. */
const chatStream = (text: string, cached: number) =>
  openaiFrames([
    { ...chunk({ role: "assistant", content: text }), usage: null },
    { ...chunk({}, "stop"), usage: null },
    { ...chunk({}), choices: [], usage: chatUsage(cached, 5) },
  ]);

const SYSTEM = "You are a coding agent. Work in the current project.";
const ask = (model: string, question = "List the files.", system = SYSTEM) => ({
  model,
  max_tokens: 256,
  stream: true,
  system,
  messages: [{ role: "user", content: question }],
});

const usageOf = (reply: StreamReply, type: "message_start" | "message_delta"): Json => {
  const event = reply.data.find((data) => data.type === type) as Json;
  return type === "message_start" ? event.message.usage : event.usage;
};

describe("an Anthropic client's stream carries the cache figures", () => {
  test("from Gemini, which counts the prompt before the answer: in message_start, and the final ones in message_delta", async () => {
    gemini.enqueue({ kind: "sse", frames: geminiStream("The files are a and b.", 800) });
    const reply = await postStream(`${gateway.url}/v1/messages`, ask("gemini-pro"));
    expect(reply.status).toBe(200);
    expect(usageOf(reply, "message_start")).toEqual({
      input_tokens: 200,
      cache_read_input_tokens: 800,
      output_tokens: 1,
    });
    expect(usageOf(reply, "message_delta")).toEqual({
      input_tokens: 200,
      cache_read_input_tokens: 800,
      output_tokens: 7,
    });
    const trace = await traceOf(gateway, reply);
    expect(trace).toMatchObject({ inputTokens: 200, cacheReadTokens: 800, outputTokens: 7, provider: "google" });
    expect(trace.upstreamModel).toBe(GEMINI_MODEL);
  });

  test("from a Chat server that sends usage on every chunk: in message_start too", async () => {
    chat.enqueue({
      kind: "sse",
      frames: openaiFrames([
        { ...chunk({ role: "assistant", content: "a and " }), usage: chatUsage(600, 0) },
        { ...chunk({ content: "b." }, "stop"), usage: chatUsage(600, 4) },
      ]),
    });
    const reply = await postStream(`${gateway.url}/v1/messages`, ask("qwen", "List them, every chunk counted."));
    expect(usageOf(reply, "message_start")).toEqual({
      input_tokens: 400,
      cache_read_input_tokens: 600,
      output_tokens: 1,
    });
    expect(usageOf(reply, "message_delta")).toEqual({
      input_tokens: 400,
      cache_read_input_tokens: 600,
      output_tokens: 4,
    });
  });

  test("from a Chat server that gives usage only at the end: the estimate in message_start, the final figures in message_delta", async () => {
    chat.enqueue({ kind: "sse", frames: chatStream("a and b.", 700) });
    const reply = await postStream(`${gateway.url}/v1/messages`, ask("qwen", "List them, counted at the end."));
    const start = usageOf(reply, "message_start");
    expect(start.input_tokens).toBeGreaterThan(0);
    expect(start).not.toHaveProperty("cache_read_input_tokens");
    expect(usageOf(reply, "message_delta")).toEqual({
      input_tokens: 300,
      cache_read_input_tokens: 700,
      output_tokens: 5,
    });
    expect(await traceOf(gateway, reply)).toMatchObject({ inputTokens: 300, cacheReadTokens: 700, outputTokens: 5 });
  });
});

describe("a conversation sent to another provider or model", () => {
  const SESSION = "0d5c2a7e-8f41-4b9a-a1c3-5e6f7a8b9c0d";
  const session = { "x-claude-code-session-id": SESSION };
  const METRICS_SYSTEM = "You are a coding agent of the switching session.";
  const turn = async (model: string, headers: Record<string, string>, system = METRICS_SYSTEM) => {
    const reply = await postStream(`${gateway.url}/v1/messages`, ask(model, "Fix the failing test.", system), headers);
    expect(reply.status).toBe(200);
    return traceOf(gateway, reply);
  };

  test("is flagged in its trace, from the turn that switched; a side request of the same session is not", async () => {
    chat.enqueue({ kind: "sse", frames: chatStream("Looking.", 0) });
    const first = await turn("claude-sonnet-4-5", session);
    expect(first.switchedFrom).toBeUndefined();

    gemini.enqueue({ kind: "sse", frames: geminiStream("Found it.", 0) });
    const second = await turn("gemini-pro", session);
    expect(second.switchedFrom).toEqual({ provider: "local", model: CHAT_MODEL });

    // Claude Code's small-model side request, under the same session id, has a start of its own.
    chat.enqueue({ kind: "sse", frames: chatStream("Fix test", 0) });
    const side = await turn("claude-haiku-4-5", session, "Write a 3-word title for the conversation.");
    expect(side.switchedFrom).toBeUndefined();

    gemini.enqueue({ kind: "sse", frames: geminiStream("Fixed.", 900) });
    const third = await turn("gemini-pro", session);
    expect(third.switchedFrom).toBeUndefined();
    expect(third.cacheReadTokens).toBe(900);

    // The same start in another session is another conversation.
    gemini.enqueue({ kind: "sse", frames: geminiStream("Fixed.", 0) });
    const other = await turn("gemini-pro", { "x-claude-code-session-id": "another-session" });
    expect(other.switchedFrom).toBeUndefined();

    chat.enqueue({ kind: "sse", frames: chatStream("Back.", 0) });
    const back = await turn("claude-sonnet-4-5", session);
    expect(back.switchedFrom).toEqual({ provider: "google", model: GEMINI_MODEL });
  });

  test("a failed turn is flagged but is not the conversation's last: its retry is flagged again, counted once", async () => {
    const headers = { "x-claude-code-session-id": "retried-session" };
    const system = "You are the retried agent.";
    chat.enqueue({ kind: "sse", frames: chatStream("Start.", 0) });
    await turn("qwen", headers, system);
    gemini.enqueue({
      kind: "error",
      status: 400,
      body: { error: { code: 400, message: "Request contains an invalid argument.", status: "INVALID_ARGUMENT" } },
    });
    const failed = await postJson(
      `${gateway.url}/v1/messages`,
      { ...ask("gemini-pro", "Fix the failing test.", system), stream: false },
      headers,
    );
    expect(failed.status).toBe(400);
    const failedTrace = await traceOf(gateway, failed);
    expect(failedTrace.switchedFrom).toEqual({ provider: "local", model: CHAT_MODEL });
    gemini.enqueue({ kind: "sse", frames: geminiStream("Done.", 0) });
    const retried = await turn("gemini-pro", headers, system);
    expect(retried.switchedFrom).toEqual({ provider: "local", model: CHAT_MODEL });
    const metrics = (await getJson(`${gateway.url}/metrics`)).text;
    expect(metrics).toContain(
      `parley_route_switches_total{from_provider="local",from_model="${CHAT_MODEL}",provider="google",model="${GEMINI_MODEL}"} 2`,
    );
  });

  test("a stored conversation's turns are its own, whatever their start", async () => {
    const created = await postJson(`${gateway.url}/v1/conversations`, {});
    const id = (created.body as Json).id as string;
    const headers = { "x-parley-conversation-id": id };
    chat.enqueue({ kind: "sse", frames: chatStream("Paris.", 0) });
    const first = await postStream(`${gateway.url}/v1/messages`, ask("qwen", "Capital of France?"), headers);
    gemini.enqueue({ kind: "sse", frames: geminiStream("About 2.1 million.", 0) });
    const second = await postStream(`${gateway.url}/v1/messages`, ask("gemini-pro", "Its population?"), headers);
    expect((await traceOf(gateway, first)).switchedFrom).toBeUndefined();
    const switched = await traceOf(gateway, second);
    expect(switched).toMatchObject({ conversationId: id, switchedFrom: { provider: "local", model: CHAT_MODEL } });
    // The inspector's views: the exchange's figures and ratio, and the conversation's turn by turn.
    const exchange = (await getJson(`${gateway.url}/inspect/api/traces/${switched.id}`)).body as Json;
    expect(exchange.trace).toMatchObject({
      inputTokens: 1000,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 7,
      cacheHitRatio: 0,
      switchedFrom: { provider: "local", model: CHAT_MODEL },
    });
    const conversation = (await getJson(`${gateway.url}/inspect/api/conversations/${id}`)).body as Json;
    expect(
      conversation.traces.map((row: Json) => [row.provider, row.inputTokens, row.cacheReadTokens, row.switchedFrom]),
    ).toEqual([
      ["local", 1000, 0, undefined],
      ["google", 1000, 0, { provider: "local", model: CHAT_MODEL }],
    ]);
    expect(conversation.tokens).toMatchObject({ exchanges: 2, inputTokens: 2000, switches: 1, cacheHitRatio: 0 });
    const listed = (await getJson(`${gateway.url}/inspect/api/traces?conversation=${id}`)).body as Json;
    expect(listed.traces[0]).toMatchObject({ id: switched.id, cacheHitRatio: 0, switchedFrom: { provider: "local" } });
  });
});

describe("/metrics", () => {
  test("counts each kind of token per provider and model, and the route switches", async () => {
    const metrics = (await getJson(`${gateway.url}/metrics`)).text;
    const value = (labels: string) => {
      const found = new RegExp(`^parley_tokens_total\\{${labels}\\} (\\d+)$`, "m").exec(metrics);
      return found === null ? undefined : Number(found[1]);
    };
    const google = (kind: string) => value(`provider="google",model="${GEMINI_MODEL}",kind="${kind}"`);
    const local = (kind: string) => value(`provider="local",model="${CHAT_MODEL}",kind="${kind}"`);
    // Every Gemini answer above counted 1,000 prompt tokens, 7 output; 800 + 900 of them read from the cache.
    const answers = 6;
    expect(google("cache_read")).toBe(800 + 900);
    expect(google("input")).toBe(answers * 1000 - (800 + 900));
    expect(google("cache_write")).toBe(0);
    expect(google("output")).toBe(answers * 7);
    expect(local("cache_read")).toBe(600 + 700);
    expect(local("output")).toBeGreaterThan(0);
    expect(metrics).toContain("# TYPE parley_tokens_total counter");
    expect(metrics).toContain("# TYPE parley_route_switches_total counter");
    // The session's switch there and back, the stored conversation's, and the retried one counted once answered...
    expect(metrics).toContain(
      `parley_route_switches_total{from_provider="google",from_model="${GEMINI_MODEL}",provider="local",model="${CHAT_MODEL}"} 1`,
    );
    // ...which with the session's first switch and the stored conversation's makes three to Gemini.
    expect(metrics).toContain(
      `parley_route_switches_total{from_provider="local",from_model="${CHAT_MODEL}",provider="google",model="${GEMINI_MODEL}"} 3`,
    );
  });
});
