import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { getJson, type Json, postJson, postStream, startTestGateway } from "../../test/support/gateway-harness.js";
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
const streamedReasoning = readFileSync(fixture("deepseek/deepseek-reasoner-tool-call.chunks.jsonl"), "utf8")
  .split("\n")
  .filter(Boolean)
  .map((line) => JSON.parse(line).choices[0]?.delta?.reasoning_content ?? "")
  .join("");
const finalText = {
  id: "c2",
  object: "chat.completion",
  created: 1,
  model: "deepseek-reasoner",
  choices: [{ index: 0, message: { role: "assistant", content: "Sunny." }, finish_reason: "stop" }],
  usage: { prompt_tokens: 50, completion_tokens: 2, total_tokens: 52 },
};

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  gateway = await startTestGateway({
    providers: { deepseek: { type: "openai", upstream, preset: "deepseek" } },
    file: { timeouts: { idleMs: 300 }, retries: { maxAttempts: 1 } },
  });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

beforeEach(() => {
  upstream.requests.length = 0;
});

const tools = [{ name: "weather", input_schema: { type: "object", properties: { location: { type: "string" } } } }];
const create = async () => {
  const reply = await postJson(`${gateway.url}/v1/conversations`, {});
  expect(reply.status).toBe(201);
  return (reply.body as { id: string }).id;
};

describe("conversation routes", () => {
  test("append in one call or many, read back in Anthropic and OpenAI form", async () => {
    const id = await create();
    const history = [
      { role: "user", content: "Weather?" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "toolu_1", name: "weather", input: { location: "Paris" } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18°C" }] },
    ];
    expect(
      (await postJson(`${gateway.url}/v1/conversations/${id}/messages`, { messages: history.slice(0, 1) })).status,
    ).toBe(200);
    expect(
      (await postJson(`${gateway.url}/v1/conversations/${id}/messages`, { messages: history.slice(1) })).status,
    ).toBe(200);
    const anthropic = await getJson(`${gateway.url}/v1/conversations/${id}`);
    expect(anthropic.body).toEqual({ id, messages: history });
    const openai = await getJson(`${gateway.url}/v1/conversations/${id}?format=openai`);
    const messages = (openai.body as { messages: Array<Json> }).messages;
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
    expect(messages[1]!.tool_calls[0]).toMatchObject({ id: "toolu_1", function: { name: "weather" } });
    expect(messages[2]).toMatchObject({ tool_call_id: "toolu_1", content: "18°C" });
  });

  test("unknown ids are 404 in Anthropic's shape; bad bodies 400", async () => {
    const missing = await getJson(`${gateway.url}/v1/conversations/nope`);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    const append = await postJson(`${gateway.url}/v1/conversations/nope/messages`, {
      messages: [{ role: "user", content: "x" }],
    });
    expect(append.status).toBe(404);
    const turn = await postJson(
      `${gateway.url}/v1/messages`,
      { model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }] },
      { "x-parley-conversation-id": "nope" },
    );
    expect(turn.status).toBe(404);
    const id = await create();
    const bad = await postJson(`${gateway.url}/v1/conversations/${id}/messages`, {
      messages: [{ role: "bot", content: "x" }],
    });
    expect(bad.status).toBe(400);
    expect((bad.body as Json).error.message).toContain("messages[0]");
  });
});

describe("stateful turns", () => {
  test("only new messages are sent; history is prepended; answers are stored", async () => {
    const id = await create();
    const header = { "x-parley-conversation-id": id };
    upstream.enqueue({ kind: "json", body: toolCallJson }, { kind: "json", body: finalText });
    const turn1 = await postJson(
      `${gateway.url}/v1/messages`,
      { model: "deepseek-reasoner", max_tokens: 100, tools, messages: [{ role: "user", content: "Weather in SF?" }] },
      header,
    );
    expect(turn1.status).toBe(200);
    const toolUse = (turn1.body as Json).content.find((block: { type: string }) => block.type === "tool_use");
    const turn2 = await postJson(
      `${gateway.url}/v1/messages`,
      {
        model: "deepseek-reasoner",
        max_tokens: 100,
        tools,
        messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: toolUse.id, content: "18°C" }] }],
      },
      header,
    );
    expect(turn2.status).toBe(200);
    const sent = (upstream.requests[1]!.body as { messages: Array<Json> }).messages;
    expect(sent.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
    expect(sent[1]!.reasoning_content).toBe(reasoning);
    const stored = (await getJson(`${gateway.url}/v1/conversations/${id}`)).body as {
      messages: Array<Json>;
    };
    expect(stored.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(stored.messages[3]!.content).toEqual([{ type: "text", text: "Sunny." }]);
  });

  test("a turn the upstream refuses leaves the conversation as it was, so the client's retry is stored once", async () => {
    for (const stream of [false, true]) {
      const id = await create();
      const header = { "x-parley-conversation-id": id };
      const turn = {
        model: "deepseek-reasoner",
        max_tokens: 100,
        stream,
        messages: [{ role: "user", content: "Hi?" }],
      };
      upstream.enqueue({ kind: "error", status: 429, body: { error: { message: "slow down", type: "rate_limit" } } });
      const refused = stream
        ? await postStream(`${gateway.url}/v1/messages`, turn, header)
        : await postJson(`${gateway.url}/v1/messages`, turn, header);
      expect(refused.status).toBe(429);
      expect(await gateway.state.store!.conversations.load(id)).toEqual([]);

      upstream.enqueue(stream ? { kind: "sse", frames: toolCallFrames } : { kind: "json", body: finalText });
      const retried = stream
        ? await postStream(`${gateway.url}/v1/messages`, turn, header)
        : await postJson(`${gateway.url}/v1/messages`, turn, header);
      expect(retried.status).toBe(200);
      const stored = await gateway.state.store!.conversations.load(id);
      expect(stored?.map((entry) => [entry.message.role, entry.complete])).toEqual([
        ["user", true],
        ["assistant", true],
      ]);
      expect(stored![0]!.message.parts).toEqual([{ type: "text", text: "Hi?" }]);
    }
  });

  test("a streamed answer is persisted as it arrives; a failed one stays incomplete with what arrived", async () => {
    const id = await create();
    upstream.enqueue({ kind: "sse", frames: toolCallFrames });
    const reply = await postStream(
      `${gateway.url}/v1/messages`,
      {
        model: "deepseek-reasoner",
        max_tokens: 100,
        stream: true,
        tools,
        messages: [{ role: "user", content: "Weather?" }],
      },
      { "x-parley-conversation-id": id },
    );
    expect(reply.status).toBe(200);
    const stored = await gateway.state.store!.conversations.load(id);
    expect(stored?.map((entry) => [entry.message.role, entry.complete])).toEqual([
      ["user", true],
      ["assistant", true],
    ]);
    expect(stored![1]!.message.parts.map((part) => part.type)).toEqual(["thinking", "tool_call"]);
    // Read back, the thinking carries the signature the streamed answer gave it.
    const signatures = reply.data
      .filter((event) => (event.delta as { type?: string } | undefined)?.type === "signature_delta")
      .map((event) => (event.delta as { signature: string }).signature);
    expect(signatures).toHaveLength(1);
    const readBack = await getJson(`${gateway.url}/v1/conversations/${id}`);
    expect((readBack.body as Json).messages[1].content[0]).toMatchObject({
      type: "thinking",
      signature: signatures[0],
    });

    const broken = await create();
    upstream.enqueue({ kind: "sse", frames: toolCallFrames, stallAfterFrames: 20 });
    const failed = await postStream(
      `${gateway.url}/v1/messages`,
      { model: "deepseek-reasoner", max_tokens: 100, stream: true, messages: [{ role: "user", content: "Weather?" }] },
      { "x-parley-conversation-id": broken },
    );
    expect(failed.events.at(-1)!.event).toBe("error");
    const partial = await gateway.state.store!.conversations.load(broken);
    expect(partial).toHaveLength(2);
    expect(partial![1]!.complete).toBe(false);
    const thinking = partial![1]!.message.parts[0] as { type: string; thinking: string };
    expect(thinking.type).toBe("thinking");
    expect(thinking.thinking.length).toBeGreaterThan(0);
    expect(streamedReasoning.startsWith(thinking.thinking)).toBe(true);
  });
});
