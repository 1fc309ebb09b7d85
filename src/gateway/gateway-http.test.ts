import { request } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { getJson, type Json, postJson, startTestGateway } from "../../test/support/gateway-harness.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

const answer = {
  id: "c",
  object: "chat.completion",
  created: 1,
  model: "qwen3",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  upstream.fallback = () => ({ kind: "json", body: answer });
  gateway = await startTestGateway({
    providers: { local: { type: "openai", upstream, models: { "claude-haiku-4-5": "qwen3" } } },
    routes: [
      { match: "claude-*", provider: "local", model: "qwen3" },
      { match: "local-fast", provider: "local" },
    ],
    apiKeys: ["client-key-1", "client-key-2"],
    file: { limits: { maxBodyBytes: 64 * 1024 } },
  });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

beforeEach(() => {
  upstream.requests.length = 0;
});

const key = { "x-api-key": "client-key-1" };
const valid = { model: "claude-opus-5-5", max_tokens: 64, messages: [{ role: "user", content: "hi" }] };

describe("auth", () => {
  test("no key, a wrong key: 401 in each API's shape, and nothing reaches the upstream", async () => {
    const missing = await postJson(`${gateway.url}/v1/messages`, valid);
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    const wrong = await postJson(`${gateway.url}/v1/messages`, valid, { "x-api-key": "client-key-3" });
    expect(wrong.status).toBe(401);
    const wrongBearer = await postJson(`${gateway.url}/v1/chat/completions`, valid, { authorization: "Bearer nope" });
    expect(wrongBearer.status).toBe(401);
    expect(wrongBearer.body).toMatchObject({ error: { type: "authentication_error", code: "invalid_api_key" } });
    expect(JSON.stringify(wrongBearer.body)).not.toContain("nope");
    expect((await getJson(`${gateway.url}/v1/models`)).status).toBe(401);
    expect(upstream.requests).toHaveLength(0);
  });

  test("x-api-key or Authorization: Bearer, any configured key; /health needs none", async () => {
    expect((await postJson(`${gateway.url}/v1/messages`, valid, key)).status).toBe(200);
    expect((await postJson(`${gateway.url}/v1/messages`, valid, { authorization: "Bearer client-key-2" })).status).toBe(
      200,
    );
    expect(await getJson(`${gateway.url}/health`)).toMatchObject({ status: 200, body: { status: "ok" } });
    // Load balancers often probe with HEAD.
    const head = await request(`${gateway.url}/health`, { method: "HEAD" });
    expect(head.statusCode).toBe(200);
    await head.body.dump();
    expect(upstream.requests).toHaveLength(2);
    expect(upstream.requests.every((sent) => !JSON.stringify(sent.headers).includes("client-key"))).toBe(true);
  });
});

const messages = (value: unknown) => ({ ...valid, messages: value });
const content = (value: unknown) => messages([{ role: "user", content: value }]);

/** [description, body (string = sent as is), a field the message must name] */
const badRequests: Array<[string, unknown, string]> = [
  ["not JSON", "{model:", "JSON"],
  ["truncated JSON", '{"model":"x",', "JSON"],
  ["empty body", "", "empty"],
  ["a JSON array", "[]", "body"],
  ["a JSON string", '"hi"', "body"],
  ["null", "null", "body"],
  ["model missing", { max_tokens: 5, messages: [] }, "model"],
  ["model a number", { ...valid, model: 5 }, "model"],
  ["model null", { ...valid, model: null }, "model"],
  ["max_tokens missing", { model: "m", messages: [{ role: "user", content: "x" }] }, "max_tokens"],
  ["max_tokens negative", { ...valid, max_tokens: -1 }, "max_tokens"],
  ["max_tokens a string", { ...valid, max_tokens: "10" }, "max_tokens"],
  ["max_tokens fractional", { ...valid, max_tokens: 1.5 }, "max_tokens"],
  ["messages missing", { model: "m", max_tokens: 5 }, "messages"],
  ["messages an object", messages({}), "messages"],
  ["messages a string", messages("hi"), "messages"],
  ["a message that is a string", messages(["hi"]), "messages[0]"],
  ["a message that is null", messages([null]), "messages[0]"],
  ["role missing", messages([{ content: "x" }]), "messages[0].role"],
  ["role tool", messages([{ role: "tool", content: "x" }]), "messages[0].role"],
  ["role bot", messages([{ role: "bot", content: "x" }]), "messages[0].role"],
  ["role a number", messages([{ role: 1, content: "x" }]), "messages[0].role"],
  ["content missing", messages([{ role: "user" }]), "messages[0].content"],
  ["content a number", content(42), "messages[0].content"],
  ["content null", content(null), "messages[0].content"],
  ["a block that is a string", content(["x"]), "messages[0].content[0]"],
  ["a block without type", content([{ text: "x" }]), "messages[0].content[0].type"],
  ["a text block without text", content([{ type: "text" }]), "messages[0].content[0].text"],
  ["a text block with numeric text", content([{ type: "text", text: 5 }]), "messages[0].content[0].text"],
  [
    "a tool_result without tool_use_id",
    content([{ type: "tool_result", content: "x" }]),
    "messages[0].content[0].tool_use_id",
  ],
  [
    "a tool_use without id",
    messages([
      { role: "user", content: "x" },
      { role: "assistant", content: [{ type: "tool_use", name: "t", input: {} }] },
    ]),
    "messages[1].content[0].id",
  ],
  [
    "a tool_use without name",
    messages([
      { role: "user", content: "x" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", input: {} }] },
    ]),
    "messages[1].content[0].name",
  ],
  ["an image without source", content([{ type: "image" }]), "messages[0].content[0].source"],
  [
    "a thinking block without thinking",
    messages([{ role: "assistant", content: [{ type: "thinking" }] }]),
    "messages[0].content[0].thinking",
  ],
  ["system a number", { ...valid, system: 7 }, "system"],
  ["a system block without text", { ...valid, system: [{ type: "text" }] }, "system[0].text"],
  ["tools an object", { ...valid, tools: {} }, "tools"],
  ["a tool without name", { ...valid, tools: [{ input_schema: {} }] }, "tools[0].name"],
  ["tool_choice of unknown type", { ...valid, tool_choice: { type: "sometimes" } }, "tool_choice.type"],
  ["tool_choice a string", { ...valid, tool_choice: "auto" }, "tool_choice"],
  ["stream a string", { ...valid, stream: "yes" }, "stream"],
  ["temperature a string", { ...valid, temperature: "hot" }, "temperature"],
  ["stop_sequences a string", { ...valid, stop_sequences: "END" }, "stop_sequences"],
];

describe("bad input is a 4xx naming the field, never a 5xx", () => {
  test.each(badRequests)("%s", async (_name, body, field) => {
    const reply = await postJson(`${gateway.url}/v1/messages`, body, key);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect((reply.body as { error: { message: string } }).error.message).toContain(field);
  });

  test("the table is at least 40 cases, and nothing of it reached the upstream", () => {
    expect(badRequests.length).toBeGreaterThanOrEqual(40);
    expect(upstream.requests).toHaveLength(0);
  });

  test("bad UTF-8 is a 400", async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}]}'),
    ]);
    const reply = await postJson(`${gateway.url}/v1/messages`, bytes, key);
    expect(reply.status).toBe(400);
    expect((reply.body as Json).error.message).toContain("UTF-8");
  });

  test("an oversized body is a 413 request_too_large, on both routes", async () => {
    const big = { ...valid, messages: [{ role: "user", content: "x".repeat(70 * 1024) }] };
    const reply = await postJson(`${gateway.url}/v1/messages`, big, key);
    expect(reply.status).toBe(413);
    expect(reply.body).toMatchObject({ type: "error", error: { type: "request_too_large" } });
    const viaOpenAI = await postJson(`${gateway.url}/v1/chat/completions`, big, key);
    expect(viaOpenAI.status).toBe(413);
    expect(viaOpenAI.body).toMatchObject({ error: { type: "request_too_large" } });
  });

  test("bad OpenAI requests answer in OpenAI's shape with the param", async () => {
    const reply = await postJson(`${gateway.url}/v1/chat/completions`, { model: "m", messages: "hi" }, key);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({
      error: { type: "invalid_request_error", param: expect.stringContaining("messages") },
    });
  });

  test("a content-type that is not JSON's is a 415, even when the body is JSON (a web page sends text/plain)", async () => {
    const reply = await postJson(`${gateway.url}/v1/messages`, JSON.stringify(valid), {
      ...key,
      "content-type": "text/plain",
    });
    expect(reply.status).toBe(415);
    expect(reply.body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(upstream.requests).toHaveLength(0);
  });

  test("unknown routes are 404, wrong methods 405, in Anthropic's shape", async () => {
    const unknown = await getJson(`${gateway.url}/v1/nothing`, key);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    expect((await getJson(`${gateway.url}/v1/messages`, key)).status).toBe(405);
  });
});

describe("what Claude Code sends is accepted", () => {
  test("?beta=true, a system message in place, adaptive thinking, Anthropic-only fields", async () => {
    const reply = await postJson(
      `${gateway.url}/v1/messages?beta=true`,
      {
        model: "claude-opus-5-5",
        max_tokens: 128000,
        stream: false,
        thinking: { type: "adaptive", display: "updates" },
        output_config: { effort: "medium" },
        context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
        metadata: { user_id: '{"device_id":"d","session_id":"s"}' },
        system: [
          { type: "text", text: "x-anthropic-billing-header: cc_version=2" },
          { type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } },
        ],
        tools: [
          { name: "Bash", input_schema: { type: "object" } },
          { name: "DeferredToolPlaceholder", input_schema: { type: "object" }, defer_loading: true },
        ],
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "<system-reminder>r</system-reminder>" },
              { type: "text", text: "run ls" },
            ],
          },
          { role: "system", content: "Environment: linux" },
        ],
      },
      {
        ...key,
        "anthropic-version": "2023-06-01",
        "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27",
      },
    );
    expect(reply.status).toBe(200);
    expect((reply.body as Json).model).toBe("claude-opus-5-5");
    const sent = upstream.requests[0]!.body as Json;
    expect(sent.model).toBe("qwen3");
    expect(sent.context_management).toBeUndefined();
    expect(sent.output_config).toBeUndefined();
    const roles = (sent.messages as Array<{ role: string }>).map((message) => message.role);
    expect(roles.at(-1)).toBe("system");
    const lossy = JSON.parse(reply.headers["x-parley-lossy"] as string) as Array<{ code: string }>;
    expect(lossy.length).toBeGreaterThan(0);
    expect(/^[\x20-\x7e]+$/.test(reply.headers["x-parley-lossy"] as string)).toBe(true);
  });

  test("what the answer's conversion could not carry joins x-parley-lossy on a non-streamed answer", async () => {
    upstream.enqueue({
      kind: "json",
      body: {
        ...answer,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: null, refusal: "I can't help with that." },
            finish_reason: "stop",
            logprobs: { content: [{ token: "I", logprob: -0.1, bytes: [73], top_logprobs: [] }] },
          },
          { index: 1, message: { role: "assistant", content: "second" }, finish_reason: "stop" },
        ],
      },
    });
    const reply = await postJson(`${gateway.url}/v1/messages`, valid, key);
    expect(reply.status).toBe(200);
    expect((reply.body as Json).content).toEqual([{ type: "text", text: "I can't help with that." }]);
    const lossy = JSON.parse(reply.headers["x-parley-lossy"] as string) as Array<{ code: string; path?: string }>;
    expect(lossy).toEqual([
      expect.objectContaining({ code: "extra-choices-dropped", path: "response.choices" }),
      expect.objectContaining({ code: "logprobs-dropped", path: "response.choices[0].logprobs" }),
      expect.objectContaining({ code: "refusal-as-text", path: "response.choices[0].message.refusal" }),
    ]);
  });

  test("HEAD /api/hello answers 200", async () => {
    const response = await request(`${gateway.url}/api/hello`, { method: "HEAD" });
    expect(response.statusCode).toBe(200);
    await response.body.dump();
  });
});

describe("info routes", () => {
  test("count_tokens counts with a real tokenizer", async () => {
    const small = await postJson(
      `${gateway.url}/v1/messages/count_tokens`,
      { model: "m", messages: [{ role: "user", content: "Hello, world" }] },
      key,
    );
    expect(small.status).toBe(200);
    const smallCount = (small.body as { input_tokens: number }).input_tokens;
    expect(smallCount).toBeGreaterThan(3);
    expect(smallCount).toBeLessThan(12);
    const long = await postJson(
      `${gateway.url}/v1/messages/count_tokens`,
      { model: "m", system: "be brief", messages: [{ role: "user", content: "word ".repeat(1000) }] },
      key,
    );
    const longCount = (long.body as { input_tokens: number }).input_tokens;
    expect(longCount).toBeGreaterThan(990);
    expect(longCount).toBeLessThan(1030);
  });

  test("models: the listable names in Anthropic's list shape, and any single model", async () => {
    const list = await getJson(`${gateway.url}/v1/models`, key);
    expect(list.status).toBe(200);
    const body = list.body as {
      data: Array<{ id: string; type: string }>;
      has_more: boolean;
      first_id: string;
      last_id: string;
    };
    expect(body.data.map((model) => model.id).sort()).toEqual(["claude-haiku-4-5", "local-fast"]);
    expect(body.data[0]).toMatchObject({
      type: "model",
      display_name: expect.any(String),
      created_at: expect.any(String),
    });
    expect(body.has_more).toBe(false);
    expect(body.first_id).toBe(body.data[0]!.id);
    expect(body.last_id).toBe(body.data.at(-1)!.id);
    const one = await getJson(`${gateway.url}/v1/models/claude-opus-5-5`, key);
    expect(one.body).toMatchObject({ type: "model", id: "claude-opus-5-5" });
  });

  test("metrics in Prometheus text", async () => {
    await postJson(`${gateway.url}/v1/messages`, valid, key);
    await postJson(`${gateway.url}/v1/messages`, valid);
    const response = await getJson(`${gateway.url}/metrics`, key);
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toContain("text/plain");
    expect(response.text).toMatch(/parley_requests_total\{route="POST \/v1\/messages",status="200"\} \d+/);
    expect(response.text).toMatch(/parley_requests_total\{route="POST \/v1\/messages",status="401"\} \d+/);
    expect(response.text).toMatch(/parley_errors_total\{type="authentication_error"\} \d+/);
    expect(response.text).toMatch(/parley_upstream_latency_seconds_count\{provider="local"\} \d+/);
    expect(response.text).toMatch(/parley_tokens_total\{provider="local",model="[^"]+",kind="output"\} \d+/);
  });
});
