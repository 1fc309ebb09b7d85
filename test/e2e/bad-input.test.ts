import { Readable } from "node:stream";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type JsonReply, postJson } from "../support/gateway-harness.js";
import { type E2eWorld, fixtureJson, lossyEntries, startWorld } from "./e2e-support.js";

/**
 * Malformed requests, table-driven: each gets a 4xx in its API's error shape naming the offending field, never a
 * 5xx or a crash, and nothing reaches the upstream. Every row is real input a buggy client could send.
 */

const LIMIT = 64 * 1024;
let world: E2eWorld;

beforeAll(async () => {
  world = await startWorld({ scripted: { type: "openai" } }, { file: { limits: { maxBodyBytes: LIMIT } } });
});

afterAll(async () => {
  await world?.close();
});

function send(path: string, body: string | Buffer | Readable): Promise<JsonReply> {
  return postJson(`${world.gateway.url}${path}`, body);
}

interface BadCase {
  name: string;
  /** An object is sent as JSON; a string or Buffer as raw bytes; a function's result as a chunked stream. */
  body: unknown;
  /** The field the error must name (its path, as in `messages[0].content[1].source`). */
  field: string;
  status?: number;
  type?: string;
}

const user = { role: "user", content: "Hello" };
const ok = { model: "scripted-model", max_tokens: 64, messages: [user] };
const withMessages = (...messages: unknown[]) => ({ ...ok, messages });
const withBlocks = (...blocks: unknown[]) => withMessages({ role: "user", content: blocks });
const toolTurn = (
  assistantBlock: unknown,
  resultBlock: unknown = { type: "tool_result", tool_use_id: "toolu_1", content: "ok" },
) => withMessages(user, { role: "assistant", content: [assistantBlock] }, { role: "user", content: [resultBlock] });
const toolUse = { type: "tool_use", id: "toolu_1", name: "weather", input: { location: "Oslo" } };
const image = (source: unknown) => withBlocks({ type: "text", text: "Look:" }, { type: "image", source });
const oversized = () => JSON.stringify(withMessages({ role: "user", content: "x".repeat(LIMIT + 1_000) }));
const badUtf8 = () =>
  Buffer.concat([
    Buffer.from('{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"'),
    Buffer.from([0xff, 0xfe, 0xc3]),
    Buffer.from('"}]}'),
  ]);

const anthropicCases: BadCase[] = [
  { name: "not JSON", body: '{"model": "scripted-model",', field: "body" },
  { name: "JSON with trailing garbage", body: `${JSON.stringify(ok)} trailing`, field: "body" },
  { name: "a JSON array", body: "[]", field: "body" },
  { name: "a JSON string", body: '"hello"', field: "body" },
  { name: "JSON null", body: "null", field: "body" },
  { name: "a JSON number", body: "42", field: "body" },
  { name: "an empty body", body: "", field: "body" },
  { name: "bad UTF-8 inside a string", body: badUtf8(), field: "body" },
  { name: "a body over the size limit", body: oversized(), field: "", status: 413, type: "request_too_large" },
  {
    name: "a chunked body over the size limit (no content-length)",
    body: () => Readable.from([oversized()]),
    field: "",
    status: 413,
    type: "request_too_large",
  },
  { name: "model missing", body: { max_tokens: 64, messages: [user] }, field: "model" },
  { name: "model a number", body: { ...ok, model: 5 }, field: "model" },
  { name: "model empty", body: { ...ok, model: "" }, field: "model" },
  { name: "max_tokens missing", body: { model: "scripted-model", messages: [user] }, field: "max_tokens" },
  { name: "max_tokens a string", body: { ...ok, max_tokens: "100" }, field: "max_tokens" },
  { name: "max_tokens zero", body: { ...ok, max_tokens: 0 }, field: "max_tokens" },
  { name: "max_tokens negative", body: { ...ok, max_tokens: -5 }, field: "max_tokens" },
  { name: "max_tokens fractional", body: { ...ok, max_tokens: 1.5 }, field: "max_tokens" },
  { name: "messages missing", body: { model: "scripted-model", max_tokens: 64 }, field: "messages" },
  { name: "messages an object", body: { ...ok, messages: { role: "user", content: "hi" } }, field: "messages" },
  { name: "messages a string", body: { ...ok, messages: "hi" }, field: "messages" },
  { name: "messages empty", body: { ...ok, messages: [] }, field: "messages" },
  { name: "a message that is a string", body: withMessages("hi"), field: "messages[0]" },
  { name: "a message that is null", body: withMessages(null), field: "messages[0]" },
  { name: "role missing", body: withMessages({ content: "hi" }), field: "messages[0].role" },
  { name: "unknown role tool", body: withMessages({ role: "tool", content: "hi" }), field: "messages[0].role" },
  {
    name: "unknown role developer",
    body: withMessages({ role: "developer", content: "hi" }),
    field: "messages[0].role",
  },
  {
    name: "unknown role function",
    body: withMessages(user, { role: "function", content: "hi" }),
    field: "messages[1].role",
  },
  { name: "role a number", body: withMessages({ role: 5, content: "hi" }), field: "messages[0].role" },
  { name: "role empty", body: withMessages({ role: "", content: "hi" }), field: "messages[0].role" },
  { name: "content missing", body: withMessages({ role: "user" }), field: "messages[0].content" },
  { name: "content a number", body: withMessages({ role: "user", content: 7 }), field: "messages[0].content" },
  {
    name: "content an object",
    body: withMessages({ role: "user", content: { type: "text", text: "hi" } }),
    field: "messages[0].content",
  },
  { name: "content an empty string", body: withMessages({ role: "user", content: "" }), field: "messages[0].content" },
  { name: "content an empty array", body: withMessages({ role: "user", content: [] }), field: "messages[0].content" },
  { name: "a block that is null", body: withBlocks(null), field: "messages[0].content[0]" },
  { name: "a block that is a string", body: withBlocks("hi"), field: "messages[0].content[0]" },
  { name: "block type missing", body: withBlocks({ text: "hi" }), field: "messages[0].content[0].type" },
  { name: "block type a number", body: withBlocks({ type: 3, text: "hi" }), field: "messages[0].content[0].type" },
  { name: "text a number", body: withBlocks({ type: "text", text: 12 }), field: "messages[0].content[0].text" },
  { name: "text missing", body: withBlocks({ type: "text" }), field: "messages[0].content[0].text" },
  { name: "image without source", body: withBlocks({ type: "image" }), field: "messages[0].content[0].source" },
  {
    name: "image data a number",
    body: image({ type: "base64", media_type: "image/png", data: 7 }),
    field: "messages[0].content[1].source.data",
  },
  {
    name: "image media_type missing",
    body: image({ type: "base64", data: "AAAA" }),
    field: "messages[0].content[1].source.media_type",
  },
  {
    name: "image url not a string",
    body: image({ type: "url", url: ["http://x"] }),
    field: "messages[0].content[1].source.url",
  },
  { name: "tool_use id a number", body: toolTurn({ ...toolUse, id: 1 }), field: "messages[1].content[0].id" },
  {
    name: "tool_use name missing",
    body: toolTurn({ type: "tool_use", id: "toolu_1", input: {} }),
    field: "messages[1].content[0].name",
  },
  {
    name: "tool_use input a string",
    body: toolTurn({ ...toolUse, input: '{"location":"Oslo"}' }),
    field: "messages[1].content[0].input",
  },
  {
    name: "tool_result tool_use_id missing",
    body: toolTurn(toolUse, { type: "tool_result", content: "ok" }),
    field: "messages[2].content[0].tool_use_id",
  },
  {
    name: "tool_result is_error a string",
    body: toolTurn(toolUse, { type: "tool_result", tool_use_id: "toolu_1", content: "ok", is_error: "yes" }),
    field: "messages[2].content[0].is_error",
  },
  {
    name: "tool_result content a number",
    body: toolTurn(toolUse, { type: "tool_result", tool_use_id: "toolu_1", content: 3 }),
    field: "messages[2].content[0].content",
  },
  {
    name: "a text block inside a tool_result with a number for text",
    body: toolTurn(toolUse, { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: 3 }] }),
    field: "messages[2].content[0].content[0].text",
  },
  {
    name: "thinking text a number",
    body: toolTurn({ type: "thinking", thinking: 1, signature: "s" }),
    field: "messages[1].content[0].thinking",
  },
  {
    name: "thinking signature a number",
    body: toolTurn({ type: "thinking", thinking: "t", signature: 9 }),
    field: "messages[1].content[0].signature",
  },
  {
    name: "redacted_thinking without data",
    body: toolTurn({ type: "redacted_thinking" }),
    field: "messages[1].content[0].data",
  },
  { name: "system a number", body: { ...ok, system: 5 }, field: "system" },
  { name: "a system block that is a string", body: { ...ok, system: ["You are terse."] }, field: "system[0]" },
  {
    name: "a system block of type image",
    body: { ...ok, system: [{ type: "image", source: {} }] },
    field: "system[0].type",
  },
  {
    name: "a system block text a number",
    body: { ...ok, system: [{ type: "text", text: 5 }] },
    field: "system[0].text",
  },
  { name: "tools an object", body: { ...ok, tools: { name: "Bash" } }, field: "tools" },
  {
    name: "a tool without a name",
    body: { ...ok, tools: [{ input_schema: { type: "object" } }] },
    field: "tools[0].name",
  },
  { name: "a tool that is a string", body: { ...ok, tools: ["Bash"] }, field: "tools[0]" },
  { name: "tool_choice a string", body: { ...ok, tool_choice: "auto" }, field: "tool_choice" },
  {
    name: "tool_choice of an unknown type",
    body: { ...ok, tool_choice: { type: "sometimes" } },
    field: "tool_choice.type",
  },
  {
    name: "tool_choice tool without a name",
    body: { ...ok, tool_choice: { type: "tool" } },
    field: "tool_choice.name",
  },
  { name: "thinking a string", body: { ...ok, thinking: "on" }, field: "thinking" },
  { name: "thinking type a number", body: { ...ok, thinking: { type: 1 } }, field: "thinking.type" },
  {
    name: "thinking budget_tokens a string",
    body: { ...ok, thinking: { type: "enabled", budget_tokens: "lots" } },
    field: "thinking.budget_tokens",
  },
  { name: "temperature a string", body: { ...ok, temperature: "hot" }, field: "temperature" },
  { name: "top_p a string", body: { ...ok, top_p: "0.5" }, field: "top_p" },
  { name: "top_k an array", body: { ...ok, top_k: [] }, field: "top_k" },
  { name: "stream a string", body: { ...ok, stream: "yes" }, field: "stream" },
  { name: "stop_sequences a string", body: { ...ok, stop_sequences: "END" }, field: "stop_sequences" },
  { name: "a stop sequence that is a number", body: { ...ok, stop_sequences: [1] }, field: "stop_sequences[0]" },
  { name: "metadata a string", body: { ...ok, metadata: "user-1" }, field: "metadata" },
];

const chatOk = { model: "scripted-model", messages: [{ role: "user", content: "Hello" }] };
const chatCall = { id: "call_1", type: "function", function: { name: "weather", arguments: '{"location":"Oslo"}' } };
const chatTurn = (
  assistant: Record<string, unknown>,
  tool: Record<string, unknown> = { role: "tool", tool_call_id: "call_1", content: "ok" },
) => ({
  ...chatOk,
  messages: [chatOk.messages[0], { role: "assistant", content: null, tool_calls: [chatCall], ...assistant }, tool],
});

const openaiCases: BadCase[] = [
  { name: "not JSON", body: "{ model: scripted-model }", field: "body" },
  { name: "a JSON array", body: "[1,2]", field: "body" },
  { name: "bad UTF-8 inside a string", body: badUtf8(), field: "body" },
  { name: "a body over the size limit", body: oversized(), field: "", status: 413, type: "request_too_large" },
  { name: "model missing", body: { messages: chatOk.messages }, field: "model" },
  { name: "model a number", body: { ...chatOk, model: 4 }, field: "model" },
  { name: "messages missing", body: { model: "scripted-model" }, field: "messages" },
  { name: "messages empty", body: { ...chatOk, messages: [] }, field: "messages" },
  {
    name: "unknown role",
    body: { ...chatOk, messages: [{ role: "wizard", content: "hi" }] },
    field: "messages[0].role",
  },
  { name: "user content missing", body: { ...chatOk, messages: [{ role: "user" }] }, field: "messages[0].content" },
  {
    name: "content a number",
    body: { ...chatOk, messages: [{ role: "user", content: 5 }] },
    field: "messages[0].content",
  },
  {
    name: "a text part with a number for text",
    body: { ...chatOk, messages: [{ role: "user", content: [{ type: "text", text: 5 }] }] },
    field: "messages[0].content[0].text",
  },
  {
    name: "an image part without a url",
    body: { ...chatOk, messages: [{ role: "user", content: [{ type: "image_url", image_url: {} }] }] },
    field: "messages[0].content[0].image_url",
  },
  { name: "tool_calls a string", body: chatTurn({ tool_calls: "weather" }), field: "messages[1].tool_calls" },
  {
    name: "a tool call without an id",
    body: chatTurn({ tool_calls: [{ ...chatCall, id: undefined }] }),
    field: "messages[1].tool_calls[0].id",
  },
  {
    name: "tool call arguments an object",
    body: chatTurn({ tool_calls: [{ ...chatCall, function: { name: "weather", arguments: { location: "Oslo" } } }] }),
    field: "messages[1].tool_calls[0].function.arguments",
  },
  {
    name: "a tool message without tool_call_id",
    body: chatTurn({}, { role: "tool", content: "ok" }),
    field: "messages[2].tool_call_id",
  },
  { name: "a tool of an unknown type", body: { ...chatOk, tools: [{ type: "retrieval" }] }, field: "tools[0].type" },
  { name: "tool_choice of an unknown value", body: { ...chatOk, tool_choice: "sometimes" }, field: "tool_choice" },
  { name: "temperature a string", body: { ...chatOk, temperature: "warm" }, field: "temperature" },
  { name: "stream a string", body: { ...chatOk, stream: "true" }, field: "stream" },
];

function payload(body: unknown): string | Buffer | Readable {
  if (typeof body === "function") return (body as () => Readable)();
  if (typeof body === "string" || Buffer.isBuffer(body)) return body;
  return JSON.stringify(body);
}

function expectNamesField(message: unknown, field: string): void {
  expect(typeof message).toBe("string");
  if (field !== "") expect(message as string).toContain(field);
}

describe("bad input on POST /v1/messages", () => {
  test("the table holds at least 40 cases", () => {
    expect(anthropicCases.length).toBeGreaterThanOrEqual(40);
  });

  for (const bad of anthropicCases) {
    test(`${bad.name} -> ${bad.status ?? 400} naming ${bad.field || "the limit"}`, async () => {
      const reply = await send("/v1/messages", payload(bad.body));
      expect(reply.status, reply.text).toBe(bad.status ?? 400);
      expect(reply.body, reply.text).toMatchObject({
        type: "error",
        error: { type: bad.type ?? "invalid_request_error" },
      });
      expectNamesField((reply.body as { error: { message: unknown } }).error.message, bad.field);
    });
  }
});

describe("bad input on POST /v1/chat/completions", () => {
  test("the table holds at least a dozen cases", () => {
    expect(openaiCases.length).toBeGreaterThanOrEqual(12);
  });

  for (const bad of openaiCases) {
    test(`${bad.name} -> ${bad.status ?? 400} naming ${bad.field || "the limit"}`, async () => {
      const reply = await send("/v1/chat/completions", payload(bad.body));
      expect(reply.status, reply.text).toBe(bad.status ?? 400);
      const error = (reply.body as { error?: Record<string, unknown> } | undefined)?.error;
      expect(Object.keys(error ?? {}).sort(), reply.text).toEqual(["code", "message", "param", "type"]);
      expect(error?.type).toBe(bad.type ?? "invalid_request_error");
      expectNamesField(error?.message, bad.field);
      if (bad.field !== "") expect(error?.param).toBe(bad.field);
    });
  }
});

describe("after the bad input", () => {
  test("nothing reached the upstream and the gateway still serves", async () => {
    expect(world.upstreams.scripted!.requests).toEqual([]);
    const health = await request(`${world.gateway.url}/health`);
    expect(health.statusCode).toBe(200);
    expect(await health.body.json()).toEqual({ status: "ok" });
  });

  test("a system message in place is known input, not a bad role", async () => {
    world.upstreams.scripted!.enqueue({ kind: "json", body: fixtureJson("azure/deepseek-v4-pro-reasoning.json") });
    const reply = await send(
      "/v1/messages",
      JSON.stringify(withMessages(user, { role: "system", content: "Environment: linux" })),
    );
    expect(reply.status, reply.text).toBe(200);
    const messages = (world.upstreams.scripted!.requests.at(-1)!.body as { messages: Array<{ role: string }> })
      .messages;
    expect(messages.map((message) => message.role)).toEqual(["user", "system"]);
  });

  test("a tool_result for an unknown id is turned into text by repair and reported, not rejected", async () => {
    const upstream = world.upstreams.scripted!;
    upstream.enqueue({ kind: "json", body: fixtureJson("azure/deepseek-v4-pro-reasoning.json") });
    const body = withMessages(
      user,
      { role: "assistant", content: "Sure." },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_nobody_asked", content: "orphan output 7731" }],
      },
    );
    const response = await request(`${world.gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.body.text();
    expect(response.statusCode, text).toBe(200);
    const sent = upstream.requests.at(-1)!;
    const messages = (sent.body as { messages: Array<Record<string, unknown>> }).messages;
    expect(messages.some((message) => message.role === "tool")).toBe(false);
    expect(sent.rawBody).not.toContain('"tool_call_id":"toolu_nobody_asked"');
    expect(sent.rawBody).toContain("orphan output 7731");
    const lossy = lossyEntries(response.headers["x-parley-lossy"] as string | undefined);
    expect(lossy.some((entry) => entry.code.startsWith("repair:") && entry.path?.startsWith("messages[2]"))).toBe(true);
  });
});
