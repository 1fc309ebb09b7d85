import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import {
  anthropicContentFromEvents,
  type Json,
  postJson,
  postStream,
  startTestGateway,
} from "../../test/support/gateway-harness.js";
import {
  framesFromChunksFile,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

const fixture = (path: string) => new URL(`../../test/fixtures/${path}`, import.meta.url).pathname;
const toolCallJson = JSON.parse(readFileSync(fixture("deepseek/deepseek-reasoner-tool-call.json"), "utf8"));
const toolCallFrames = framesFromChunksFile(fixture("deepseek/deepseek-reasoner-tool-call.chunks.jsonl"), "openai");
const reasoning = toolCallJson.choices[0].message.reasoning_content as string;

const weatherTool = {
  name: "weather",
  description: "Current weather for a location",
  input_schema: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
};
const firstTurn = {
  model: "claude-opus-5-5",
  max_tokens: 1024,
  tools: [weatherTool],
  messages: [{ role: "user", content: "What is the weather in San Francisco?" }],
};
const finalText = {
  id: "chatcmpl-final",
  object: "chat.completion",
  created: 1,
  model: "deepseek-reasoner",
  choices: [{ index: 0, message: { role: "assistant", content: "It is sunny." }, finish_reason: "stop" }],
  usage: { prompt_tokens: 400, completion_tokens: 5, total_tokens: 405 },
};

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  gateway = await startTestGateway({
    providers: { deepseek: { type: "openai", upstream, preset: "deepseek", apiKey: "sk-upstream-deepseek-1" } },
    routes: [{ match: "claude-*", provider: "deepseek", model: "deepseek-reasoner" }],
    apiKeys: ["client-key-1"],
  });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

beforeEach(() => {
  upstream.requests.length = 0;
});

const auth = { "x-api-key": "client-key-1" };

describe("Anthropic client, OpenAI-compatible upstream", () => {
  test("non-stream: reasoning, tool call, usage and the client's model name", async () => {
    upstream.enqueue({ kind: "json", body: toolCallJson });
    const reply = await postJson(`${gateway.url}/v1/messages`, firstTurn, auth);
    expect(reply.status).toBe(200);
    expect(reply.headers["request-id"]).toMatch(/^req_/);
    expect(reply.headers["x-request-id"]).toBe(reply.headers["request-id"]);
    const body = reply.body as Json;
    expect(body.model).toBe("claude-opus-5-5");
    expect(body.stop_reason).toBe("tool_use");
    expect(body.content[0]).toMatchObject({ type: "thinking", thinking: reasoning });
    expect(body.content[0].signature).toMatch(/^parley\.v1\./);
    const toolUse = body.content.find((block: { type: string }) => block.type === "tool_use");
    expect(toolUse).toMatchObject({
      name: "weather",
      input: { location: "San Francisco" },
      id: "call_00_9V0vrf86Pc9aelHCJMZqnJBo",
    });
    // Cached prompt tokens are reported once, never subtracted twice: 339 total = 19 fresh + 320 cached.
    expect(body.usage).toMatchObject({ input_tokens: 19, cache_read_input_tokens: 320, output_tokens: 92 });

    const sent = upstream.requests[0]!;
    expect(sent.body).toMatchObject({ model: "deepseek-reasoner" });
    expect(sent.headers.authorization).toBe("Bearer sk-upstream-deepseek-1");
    expect(sent.headers["x-api-key"]).toBeUndefined();
    expect(JSON.stringify(sent.headers)).not.toContain("client-key-1");
  });

  test("tool loop: turn 1's reasoning reaches the upstream on turn 2 in the provider's field", async () => {
    upstream.enqueue({ kind: "json", body: toolCallJson }, { kind: "json", body: finalText });
    const turn1 = (await postJson(`${gateway.url}/v1/messages`, firstTurn, auth)).body as Json;
    const toolUse = turn1.content.find((block: { type: string }) => block.type === "tool_use");
    const turn2 = {
      ...firstTurn,
      messages: [
        ...firstTurn.messages,
        { role: "assistant", content: turn1.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: toolUse.id, content: "18°C, sunny" }] },
      ],
    };
    const reply = await postJson(`${gateway.url}/v1/messages`, turn2, auth);
    expect(reply.status).toBe(200);
    expect((reply.body as Json).content).toEqual([{ type: "text", text: "It is sunny." }]);
    const messages = (upstream.requests[1]!.body as { messages: Array<Json> }).messages;
    const assistant = messages.find((message) => message.role === "assistant")!;
    expect(assistant.reasoning_content).toBe(reasoning);
    expect(assistant.tool_calls[0]).toMatchObject({ id: toolUse.id, function: { name: "weather" } });
    expect(JSON.parse(assistant.tool_calls[0].function.arguments)).toEqual({ location: "San Francisco" });
    expect(messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: toolUse.id, content: "18°C, sunny" });
  });

  test("stream: a valid event sequence with input tokens up front", async () => {
    upstream.enqueue({ kind: "sse", frames: toolCallFrames });
    const reply = await postStream(`${gateway.url}/v1/messages`, { ...firstTurn, stream: true }, auth);
    expect(reply.status).toBe(200);
    expect(reply.headers["content-type"]).toContain("text/event-stream");
    const types = reply.data.map((event) => event.type);
    expect(types[0]).toBe("message_start");
    expect(types.at(-2)).toBe("message_delta");
    expect(types.at(-1)).toBe("message_stop");
    const start = reply.data[0]!.message as Json;
    expect(start.model).toBe("claude-opus-5-5");
    expect(start.usage.input_tokens).toBeGreaterThan(0);
    const content = anthropicContentFromEvents(reply.data);
    expect(content[0]).toMatchObject({ type: "thinking" });
    expect(content[0]!.thinking).toBe(
      readFileSync(fixture("deepseek/deepseek-reasoner-tool-call.chunks.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line).choices[0]?.delta?.reasoning_content ?? "")
        .join(""),
    );
    expect(content.at(-1)).toMatchObject({ type: "tool_use", name: "weather" });
    const delta = reply.data.at(-2)! as Json;
    expect(delta.delta.stop_reason).toBe("tool_use");
    expect(delta.usage).toMatchObject({ input_tokens: 19, cache_read_input_tokens: 320 });
    const sent = upstream.requests[0]!.body as Json;
    expect(sent.stream).toBe(true);
    expect(sent.stream_options).toEqual({ include_usage: true });
  });
});

describe("OpenAI client, OpenAI-compatible upstream", () => {
  const chatTurn = {
    model: "claude-opus-5-5",
    messages: [{ role: "user", content: "What is the weather in San Francisco?" }],
    tools: [{ type: "function", function: { name: "weather", parameters: weatherTool.input_schema } }],
  };

  test("non-stream", async () => {
    upstream.enqueue({ kind: "json", body: toolCallJson });
    const reply = await postJson(`${gateway.url}/v1/chat/completions`, chatTurn, {
      authorization: "Bearer client-key-1",
    });
    expect(reply.status).toBe(200);
    const body = reply.body as Json;
    expect(body.model).toBe("claude-opus-5-5");
    expect(body.choices[0].finish_reason).toBe("tool_calls");
    expect(body.choices[0].message.tool_calls[0].function.name).toBe("weather");
    expect(body.choices[0].message.reasoning_content).toBe(reasoning);
    expect(upstream.requests[0]!.body).toMatchObject({ model: "deepseek-reasoner" });
  });

  test("stream ends with [DONE]", async () => {
    upstream.enqueue({ kind: "sse", frames: toolCallFrames });
    const reply = await postStream(
      `${gateway.url}/v1/chat/completions`,
      { ...chatTurn, stream: true, stream_options: { include_usage: true } },
      { authorization: "Bearer client-key-1" },
    );
    expect(reply.status).toBe(200);
    expect(reply.events.at(-1)?.data).toBe("[DONE]");
    const chunks = reply.data as Array<Json>;
    expect(chunks.every((chunk) => chunk.model === "claude-opus-5-5")).toBe(true);
    const args = chunks
      .flatMap((chunk) => chunk.choices?.[0]?.delta?.tool_calls ?? [])
      .map((call: Json) => call.function?.arguments ?? "")
      .join("");
    expect(JSON.parse(args)).toEqual({ location: "San Francisco" });
    expect(chunks.some((chunk) => chunk.usage?.prompt_tokens === 339)).toBe(true);
  });
});
