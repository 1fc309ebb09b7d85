import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { type Json, postJson, startTestGateway } from "../../test/support/gateway-harness.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * Upstreams that refuse what they do not know (the scripted servers answer 400 as the real ones do): a field of
 * another API, or a field Parley does not know, reaches them only where they take it, and everything left out is
 * in `x-parley-lossy`.
 */

let anthropic: ScriptedUpstream;
let chat: ScriptedUpstream;
let vllm: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  [anthropic, chat, vllm] = await Promise.all([
    startScriptedUpstream("anthropic"),
    startScriptedUpstream("openai"),
    startScriptedUpstream("openai"),
  ]);
  gateway = await startTestGateway({
    providers: {
      anthropic: { type: "anthropic", upstream: anthropic },
      chat: { type: "openai", upstream: chat },
      vllm: { type: "openai", upstream: vllm, preset: "vllm" },
    },
    routes: [
      { match: "claude-*", provider: "anthropic" },
      { match: "vllm-*", provider: "vllm" },
      { match: "*", provider: "chat" },
    ],
  });
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([anthropic.close(), chat.close(), vllm.close()]);
});

beforeEach(() => {
  for (const upstream of [anthropic, chat, vllm]) upstream.requests.length = 0;
});

const anthropicAnswer = {
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "claude-x",
  content: [{ type: "text", text: "upon a time" }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 4 },
};

const chatAnswer = {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
};

const lossy = (headers: Record<string, unknown>): Array<{ code: string; message: string; path?: string }> =>
  JSON.parse((headers["x-parley-lossy"] as string | undefined) ?? "[]");

describe("an OpenAI client on an Anthropic upstream", () => {
  test("its metadata, a message's prefix and extra_body are left out and reported, never refused", async () => {
    anthropic.enqueue({ kind: "json", body: anthropicAnswer });
    const reply = await postJson(`${gateway.url}/v1/chat/completions`, {
      model: "claude-x",
      messages: [
        { role: "user", content: "Write the opening line." },
        { role: "assistant", content: "Once", prefix: true },
      ],
      metadata: { team: "search" },
      extra_body: { top_k: 5 },
      user: "u-1",
    });
    expect(reply.status).toBe(200);
    const sent = anthropic.requests[0]?.body as Json;
    expect(sent.metadata).toEqual({ user_id: "u-1" });
    expect(sent.extra_body).toBeUndefined();
    expect(sent.messages[1]).toEqual({ role: "assistant", content: "Once" });
    expect(lossy(reply.headers)).toEqual([
      { code: "openai-fields-dropped", message: "no Anthropic equivalent for prefix", path: "messages[1]" },
      { code: "openai-fields-dropped", message: "no Anthropic equivalent for metadata, extra_body" },
    ]);
  });
});

describe("an Anthropic client on a strict OpenAI-compatible upstream", () => {
  test("the SDK's thread and Claude Code's output_config on a system message are left out and reported", async () => {
    chat.enqueue({ kind: "json", body: chatAnswer });
    const reply = await postJson(`${gateway.url}/v1/messages`, {
      model: "glm-5",
      max_tokens: 100,
      thread: { type: "create" },
      messages: [
        { role: "user", content: "hi" },
        { role: "system", content: [{ type: "text", text: "env" }], output_config: { effort: "low" } },
        { role: "user", content: "go on" },
      ],
    });
    expect(reply.status).toBe(200);
    const sent = chat.requests[0]?.body as Json;
    expect(sent.thread).toBeUndefined();
    expect(sent.messages[1]).toEqual({ role: "system", content: [{ type: "text", text: "env" }] });
    expect(lossy(reply.headers).map((entry) => [entry.code, entry.path])).toEqual([
      ["field-dropped-output_config", "messages[1].output_config"],
      ["field-dropped-thread", "thread"],
    ]);
  });
});

describe("an OpenAI client's extensions", () => {
  const body = {
    messages: [{ role: "user", content: "Complete it." }],
    chat_template_kwargs: { enable_thinking: false },
    min_p: 0.05,
  };

  test("reach a server whose preset takes them", async () => {
    vllm.enqueue({ kind: "json", body: chatAnswer });
    const reply = await postJson(`${gateway.url}/v1/chat/completions`, { model: "vllm-qwen", ...body });
    expect(reply.status).toBe(200);
    expect(vllm.requests[0]?.body).toMatchObject({ chat_template_kwargs: { enable_thinking: false }, min_p: 0.05 });
    expect(reply.headers["x-parley-lossy"]).toBeUndefined();
  });

  test("are left out for a strict server that does not know them, and reported", async () => {
    chat.enqueue({ kind: "json", body: chatAnswer });
    const reply = await postJson(`${gateway.url}/v1/chat/completions`, { model: "qwen", ...body });
    expect(reply.status).toBe(200);
    const sent = chat.requests[0]?.body as Json;
    expect(sent.chat_template_kwargs).toBeUndefined();
    expect(sent.min_p).toBeUndefined();
    expect(lossy(reply.headers).map((entry) => entry.code)).toEqual([
      "field-dropped-chat_template_kwargs",
      "field-dropped-min_p",
    ]);
  });

  test("a strict server refuses what it does not know, as the real one does", async () => {
    // The scripted server itself: what the gateway is kept from sending.
    const direct = await postJson(`${chat.baseUrl}/chat/completions`, { model: "qwen", ...body });
    expect(direct.status).toBe(400);
    expect(direct.body).toEqual({
      error: {
        message: "Unrecognized request argument supplied: chat_template_kwargs",
        type: "invalid_request_error",
        param: null,
        code: null,
      },
    });
  });
});
