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
  framesFromSseFile,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../test/support/scripted-upstream.js";
import { encodeOriginSignature } from "../core/index.js";
import { parseSse } from "../stream/sse.js";
import type { RunningGateway } from "./server.js";

const fixture = (path: string) => new URL(`../../test/fixtures/${path}`, import.meta.url).pathname;
const thinkingToolJson = JSON.parse(readFileSync(fixture("anthropic/claude-sonnet-4-thinking-tool-use.json"), "utf8"));
const thinkingToolSse = fixture("anthropic/claude-sonnet-4-thinking-tool-use.sse");

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("anthropic");
  gateway = await startTestGateway({
    providers: { anthropic: { type: "anthropic", upstream, apiKey: "sk-ant-upstream-key" } },
    routes: [{ match: "claude-opus-*", provider: "anthropic", model: "claude-sonnet-4-20250514" }],
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

const clientHeaders = {
  "x-api-key": "client-key-1",
  "anthropic-version": "2023-06-01",
  "anthropic-beta": "interleaved-thinking-2025-05-14,context-management-2025-06-27",
};

/** A turn-2 request as Claude Code sends it: signed thinking, a tool result, fields only Anthropic knows. */
const signedTurn = {
  model: "claude-opus-5-5",
  max_tokens: 2048,
  thinking: { type: "adaptive", display: "updates" },
  output_config: { effort: "medium" },
  context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
  metadata: { user_id: '{"device_id":"d","session_id":"s"}' },
  system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }],
  tools: [{ name: "weather", input_schema: { type: "object" }, defer_loading: false }],
  messages: [
    {
      role: "user",
      content: [{ type: "text", text: "Weather in Paris?", cache_control: { type: "ephemeral", ttl: "1h" } }],
    },
    { role: "assistant", content: thinkingToolJson.content },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: thinkingToolJson.content.at(-1).id, content: "18°C" },
        { type: "future_block_type", payload: { x: 1 } },
      ],
    },
  ],
};

describe("Anthropic client, Anthropic upstream", () => {
  test("the client's JSON reaches the upstream byte-for-byte, only the model renamed", async () => {
    upstream.enqueue({ kind: "json", body: thinkingToolJson });
    const sentText = JSON.stringify(signedTurn);
    const reply = await postJson(`${gateway.url}/v1/messages?beta=true`, sentText, clientHeaders);
    expect(reply.status).toBe(200);
    const received = upstream.requests[0]!;
    expect(received.rawBody).toBe(JSON.stringify({ ...signedTurn, model: "claude-sonnet-4-20250514" }));
    expect(received.path).toBe("/v1/messages?beta=true");
    expect(received.headers["x-api-key"]).toBe("sk-ant-upstream-key");
    expect(received.headers["anthropic-version"]).toBe("2023-06-01");
    expect(received.headers["anthropic-beta"]).toBe(clientHeaders["anthropic-beta"]);
    expect(reply.headers["x-parley-lossy"]).toBeUndefined();
    // The answer is the upstream's, naming the model the client asked for.
    expect(reply.body).toEqual({ ...thinkingToolJson, model: "claude-opus-5-5" });
  });

  test("byte-for-byte means the client's own bytes: spacing, escapes, 1.0 and integers beyond 2^53 included", async () => {
    upstream.enqueue({ kind: "json", body: thinkingToolJson });
    const model = '"claude-opus-5-5"';
    const sentText = `{ "model" : ${model}, "max_tokens": 1024,\n "messages": [{"role":"user","content":[{"type":"text","text":"caf\\u00e9"},{"type":"text","text":"x","future_field":{"n":12345678901234567890,"f":1.0,"e":1e2}}]}]}`;
    const reply = await postJson(`${gateway.url}/v1/messages`, sentText, clientHeaders);
    expect(reply.status).toBe(200);
    expect(upstream.requests[0]!.rawBody).toBe(sentText.replace(model, '"claude-sonnet-4-20250514"'));
  });

  test("thinking produced by an OpenAI-compatible model goes to Anthropic as text, and the change is reported", async () => {
    upstream.enqueue({ kind: "json", body: thinkingToolJson });
    const foreign = encodeOriginSignature({ format: "openai", provider: "deepseek", field: "reasoning_content" });
    const request = {
      model: "claude-opus-5-5",
      max_tokens: 1024,
      messages: [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "the user greets me", signature: foreign },
            { type: "text", text: "hello" },
          ],
        },
        { role: "user", content: "again" },
      ],
    };
    const reply = await postJson(`${gateway.url}/v1/messages`, request, clientHeaders);
    expect(reply.status).toBe(200);
    const assistant = (upstream.requests[0]!.body as { messages: Array<{ content: Array<Record<string, unknown>> }> })
      .messages[1]!;
    expect(assistant.content.some((block) => block.type === "thinking")).toBe(false);
    expect(JSON.stringify(assistant.content)).toContain("the user greets me");
    expect(JSON.stringify(assistant.content)).not.toContain(foreign);
    const lossy = JSON.parse(reply.headers["x-parley-lossy"] as string) as Array<{ code: string; path?: string }>;
    expect(lossy.some((entry) => entry.code.startsWith("repair:") && entry.path?.startsWith("messages[1]"))).toBe(true);
  });

  test("stream: thinking and its signature arrive unchanged, the model renamed", async () => {
    const frames = framesFromSseFile(thinkingToolSse);
    upstream.enqueue({ kind: "sse", frames });
    const reply = await postStream(`${gateway.url}/v1/messages`, { ...signedTurn, stream: true }, clientHeaders);
    expect(reply.status).toBe(200);
    expect((reply.data[0]!.message as Record<string, unknown>).model).toBe("claude-opus-5-5");
    const upstreamEvents = parseSse(frames.join(""))
      .filter((event) => event.event !== "ping")
      .map((event) => JSON.parse(event.data) as Record<string, unknown>);
    const expected = anthropicContentFromEvents(upstreamEvents);
    expect(anthropicContentFromEvents(reply.data)).toEqual(expected);
    expect(expected[0]).toMatchObject({ type: "thinking" });
    expect((expected[0]!.signature as string).length).toBeGreaterThan(20);
    expect(reply.data.at(-1)!.type).toBe("message_stop");
  });
});

describe("OpenAI client, Anthropic upstream", () => {
  test("a chat completion is answered from Anthropic", async () => {
    upstream.enqueue({ kind: "json", body: thinkingToolJson });
    const reply = await postJson(
      `${gateway.url}/v1/chat/completions`,
      {
        model: "claude-opus-5-5",
        max_tokens: 500,
        messages: [
          { role: "system", content: "be brief" },
          { role: "user", content: "hi" },
        ],
      },
      { authorization: "Bearer client-key-1" },
    );
    expect(reply.status).toBe(200);
    const body = reply.body as Json;
    expect(body.model).toBe("claude-opus-5-5");
    expect(body.choices[0].finish_reason).toBe("tool_calls");
    const sent = upstream.requests[0]!.body as Json;
    expect(sent.model).toBe("claude-sonnet-4-20250514");
    expect(JSON.stringify(sent.system)).toContain("be brief");
    expect(sent.messages).toEqual([{ role: "user", content: "hi" }]);
  });
});

describe("count_tokens for a model routed to Anthropic", () => {
  test("is answered by the provider's own count_tokens, with its key and the upstream model", async () => {
    upstream.enqueue({ kind: "json", body: { input_tokens: 4242 } });
    const reply = await postJson(
      `${gateway.url}/v1/messages/count_tokens`,
      { model: "claude-opus-4-5", messages: [{ role: "user", content: "How many tokens?" }] },
      clientHeaders,
    );
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ input_tokens: 4242 });
    const sent = upstream.requests[0]!;
    expect(sent.path).toBe("/v1/messages/count_tokens");
    expect(sent.headers["x-api-key"]).toBe("sk-ant-upstream-key");
    expect(sent.body).toEqual({
      model: "claude-sonnet-4-20250514",
      messages: [{ role: "user", content: "How many tokens?" }],
    });
  });

  test("keeps the client's ?beta=true, as the messages route does", async () => {
    upstream.enqueue({ kind: "json", body: { input_tokens: 7 } });
    const reply = await postJson(
      `${gateway.url}/v1/messages/count_tokens?beta=true`,
      { model: "claude-opus-4-5", messages: [{ role: "user", content: "How many tokens?" }] },
      clientHeaders,
    );
    expect(reply.status).toBe(200);
    expect(upstream.requests.at(-1)!.path).toBe("/v1/messages/count_tokens?beta=true");
  });
});
