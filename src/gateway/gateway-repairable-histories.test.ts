import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import type { ClaudeCodeRequestFixture } from "../../test/support/claude-code-fixtures.js";
import { type Json, postJson, postStream, startTestGateway } from "../../test/support/gateway-harness.js";
import {
  anthropicFrames,
  openaiFrames,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * A history Parley can repair is never refused for its shape (issue 34): a message with empty content anywhere
 * (`""`, `[]`), a message of whitespace only, an empty text block beside others, on each client route and to each
 * kind of upstream, is dropped or merged for the target and reported in `x-parley-lossy`; only a history that
 * holds nothing at all is refused, naming `messages`. Claude Code 2.1.332's compaction request
 * (`test/fixtures/claude-code/2.1.332.compaction.json`, assembled from the documented shape) is the real case.
 */

interface LossyEntry {
  code: string;
  message: string;
  path?: string;
}

const compaction = JSON.parse(
  readFileSync(new URL("../../test/fixtures/claude-code/2.1.332.compaction.json", import.meta.url), "utf8"),
) as ClaudeCodeRequestFixture;

let anthropic: ScriptedUpstream;
let chat: ScriptedUpstream;
let responses: ScriptedUpstream;
let gateway: RunningGateway;

const message = {
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "claude-x",
  content: [{ type: "text", text: "Summary: formatDate now uses UTC." }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 300, output_tokens: 9 },
};
const messageEvents = [
  { type: "message_start", message: { ...message, content: [], stop_reason: null } },
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Summary: formatDate now uses UTC." } },
  { type: "content_block_stop", index: 0 },
  { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 9 } },
  { type: "message_stop" },
];
const chatAnswer = {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "Summary." }, finish_reason: "stop" }],
  usage: { prompt_tokens: 300, completion_tokens: 2, total_tokens: 302 },
};
const chatChunk = (delta: object, finish: string | null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const response = {
  id: "resp_1",
  object: "response",
  created_at: 1,
  status: "completed",
  model: "gpt-r",
  output: [
    {
      id: "msg_1",
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "Summary.", annotations: [] }],
    },
  ],
  usage: { input_tokens: 300, output_tokens: 2, total_tokens: 302 },
};
const responseEvents = [
  { type: "response.created", sequence_number: 0, response: { ...response, status: "in_progress", output: [] } },
  { type: "response.completed", sequence_number: 1, response },
];

const streaming = (request: { body: unknown }) => (request.body as { stream?: boolean }).stream === true;

beforeAll(async () => {
  [anthropic, chat, responses] = await Promise.all([
    startScriptedUpstream("anthropic"),
    startScriptedUpstream("openai"),
    startScriptedUpstream("openai-responses"),
  ]);
  anthropic.fallback = (request) =>
    streaming(request) ? { kind: "sse", frames: anthropicFrames(messageEvents) } : { kind: "json", body: message };
  chat.fallback = (request) =>
    streaming(request)
      ? {
          kind: "sse",
          frames: openaiFrames([chatChunk({ role: "assistant", content: "Summary." }, null), chatChunk({}, "stop")]),
        }
      : { kind: "json", body: chatAnswer };
  responses.fallback = (request) =>
    streaming(request) ? { kind: "sse", frames: anthropicFrames(responseEvents) } : { kind: "json", body: response };
  gateway = await startTestGateway({
    providers: {
      anthropic: { type: "anthropic", upstream: anthropic },
      chat: { type: "openai", upstream: chat },
      responses: { type: "openai-responses", upstream: responses },
    },
    routes: [
      { match: "claude-*", provider: "anthropic" },
      { match: "chat-*", provider: "chat", model: "qwen3-coder" },
      { match: "*", provider: "responses", model: "gpt-5.5" },
    ],
  });
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([anthropic.close(), chat.close(), responses.close()]);
});

beforeEach(() => {
  for (const upstream of [anthropic, chat, responses]) upstream.requests.length = 0;
});

const lossyOf = (headers: Record<string, unknown>): LossyEntry[] =>
  JSON.parse((headers["x-parley-lossy"] as string | undefined) ?? "[]");

const repairs = (lossy: readonly LossyEntry[]) =>
  lossy.filter((entry) => entry.code.startsWith("repair:")).map((entry) => [entry.code, entry.path]);

/** What the Messages API refuses in a history: empty content, blank text blocks, roles that do not alternate. */
function anthropicRefusals(messages: Json[]): string[] {
  const found: string[] = [];
  messages.forEach((entry, index) => {
    const blocks = typeof entry.content === "string" ? [{ type: "text", text: entry.content }] : entry.content;
    if (blocks.length === 0) found.push(`messages[${index}] empty`);
    blocks.forEach((block: Json, position: number) => {
      if (block.type === "text" && block.text.trim() === "")
        found.push(`messages[${index}].content[${position}] blank`);
    });
    if (index > 0 && entry.role === messages[index - 1].role && entry.role !== "system")
      found.push(`messages[${index}] same role as the one before`);
  });
  return found;
}

/** Chat messages no OpenAI-compatible server takes: no content and no tool calls. */
function chatRefusals(messages: Json[]): string[] {
  return messages.flatMap((entry, index) => {
    const empty =
      entry.content === undefined || entry.content === null || entry.content === "" || entry.content.length === 0;
    return empty && !(entry.tool_calls?.length > 0) ? [`messages[${index}] empty`] : [];
  });
}

/** A history with each repairable empty shape, in Anthropic's form. */
const anthropicHistory = [
  { role: "user", content: "Hi" },
  { role: "assistant", content: [] },
  { role: "user", content: "" },
  { role: "user", content: [{ type: "text", text: "   \n" }] },
  {
    role: "assistant",
    content: [
      { type: "text", text: "" },
      { type: "text", text: "Hello." },
    ],
  },
  { role: "user", content: [{ type: "text", text: "What is 2+2?" }] },
];

describe("an Anthropic client's history with empty messages", () => {
  test("reaches an Anthropic upstream repaired, each change reported", async () => {
    const reply = await postJson(`${gateway.url}/v1/messages`, {
      model: "claude-x",
      max_tokens: 100,
      messages: anthropicHistory,
    });
    expect(reply.status, reply.text).toBe(200);
    const sent = anthropic.requests[0]!.body as Json;
    expect(anthropicRefusals(sent.messages)).toEqual([]);
    expect(sent.messages).toEqual([
      { role: "user", content: "Hi" },
      { role: "assistant", content: [{ type: "text", text: "Hello." }] },
      { role: "user", content: [{ type: "text", text: "What is 2+2?" }] },
    ]);
    expect(repairs(lossyOf(reply.headers))).toEqual([
      ["repair:removed-empty-message", "messages[1]"],
      ["repair:removed-empty-message", "messages[2]"],
      ["repair:removed-empty-message", "messages[3]"],
      ["repair:removed-empty-block", "messages[4].content[0]"],
    ]);
  });

  test("reaches a Chat upstream with no message it refuses", async () => {
    const reply = await postJson(`${gateway.url}/v1/messages`, {
      model: "chat-x",
      max_tokens: 100,
      messages: anthropicHistory,
    });
    expect(reply.status, reply.text).toBe(200);
    const sent = chat.requests[0]!.body as Json;
    expect(chatRefusals(sent.messages)).toEqual([]);
    expect(sent.messages.at(-1)).toMatchObject({ role: "user" });
    expect(repairs(lossyOf(reply.headers))).toEqual(
      expect.arrayContaining([
        ["repair:removed-empty-message", "messages[1]"],
        ["repair:removed-empty-message", "messages[2]"],
      ]),
    );
  });

  test("reaches a Responses upstream with no empty message", async () => {
    const reply = await postJson(`${gateway.url}/v1/messages`, {
      model: "gpt-x",
      max_tokens: 100,
      messages: anthropicHistory,
    });
    expect(reply.status, reply.text).toBe(200);
    const sent = responses.requests[0]!.body as Json;
    for (const item of sent.input) {
      if (item.type === "message" || item.role !== undefined)
        expect(item.content, JSON.stringify(item)).not.toEqual([]);
    }
    expect(repairs(lossyOf(reply.headers))).toContainEqual(["repair:removed-empty-message", "messages[1]"]);
  });

  test("a history of nothing but empty messages is refused, naming messages", async () => {
    const reply = await postJson(`${gateway.url}/v1/messages`, {
      model: "claude-x",
      max_tokens: 100,
      messages: [
        { role: "user", content: "" },
        { role: "assistant", content: [] },
        { role: "user", content: [{ type: "text", text: " " }] },
      ],
    });
    expect(reply.status).toBe(400);
    expect((reply.body as Json).error).toMatchObject({ type: "invalid_request_error" });
    expect((reply.body as Json).error.message).toMatch(/^messages: /);
    expect(anthropic.requests).toHaveLength(0);
  });
});

describe("Claude Code 2.1.332's compaction request", () => {
  const compactionTo = async (upstream: ScriptedUpstream, model: string) => {
    const reply = await postStream(
      `${gateway.url}${compaction.path}`,
      { ...compaction.body, model },
      compaction.headers,
    );
    expect(reply.status, reply.text.slice(0, 500)).toBe(200);
    expect(upstream.requests).toHaveLength(1);
    return { sent: upstream.requests[0]!.body as Json, lossy: lossyOf(reply.headers), reply };
  };

  test("goes to an Anthropic upstream repaired, its signed thinking unchanged", async () => {
    const { sent, lossy, reply } = await compactionTo(anthropic, "claude-opus-5-5");
    expect(anthropicRefusals(sent.messages)).toEqual([]);
    const body = compaction.body as Json;
    expect(sent.messages[1]).toEqual(body.messages[1]);
    expect(sent.messages.at(-1).content.at(-1)).toEqual(body.messages.at(-1).content[0]);
    expect(repairs(lossy)).toEqual(
      expect.arrayContaining([
        ["repair:removed-empty-message", "messages[3]"],
        ["repair:removed-empty-message", "messages[5]"],
        ["repair:removed-empty-block", "messages[7].content[0]"],
        ["repair:removed-empty-block", "messages[8].content[1]"],
        ["repair:removed-empty-message", "messages[9]"],
      ]),
    );
    expect(reply.text).toContain("Summary: formatDate now uses UTC.");
  });

  test("goes to a Chat upstream with no message it refuses", async () => {
    const { sent } = await compactionTo(chat, "chat-opus");
    expect(chatRefusals(sent.messages)).toEqual([]);
    expect(JSON.stringify(sent.messages.at(-1))).toContain("create a detailed summary");
  });

  test("goes to a Responses upstream", async () => {
    const { sent } = await compactionTo(responses, "gpt-opus");
    expect(JSON.stringify(sent.input.at(-1))).toContain("create a detailed summary");
  });
});

describe("an OpenAI Chat client's history with empty messages", () => {
  const history = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Hi" },
    { role: "assistant", content: "" },
    { role: "user", content: [] },
    { role: "user", content: "   " },
    {
      role: "assistant",
      content: [
        { type: "text", text: "" },
        { type: "text", text: "Hello." },
      ],
    },
    { role: "user", content: "What is 2+2?" },
  ];

  test("reaches an Anthropic upstream repaired and reported", async () => {
    const reply = await postJson(`${gateway.url}/v1/chat/completions`, { model: "claude-x", messages: history });
    expect(reply.status, reply.text).toBe(200);
    const sent = anthropic.requests[0]!.body as Json;
    expect(anthropicRefusals(sent.messages)).toEqual([]);
    expect(sent.messages.at(-1)).toMatchObject({ role: "user" });
    expect(repairs(lossyOf(reply.headers)).length).toBeGreaterThanOrEqual(3);
  });

  test("reaches a Chat upstream with no message it refuses", async () => {
    const reply = await postJson(`${gateway.url}/v1/chat/completions`, { model: "chat-x", messages: history });
    expect(reply.status, reply.text).toBe(200);
    expect(chatRefusals((chat.requests[0]!.body as Json).messages)).toEqual([]);
  });
});

describe("an OpenAI Responses client's input with empty messages", () => {
  const input = [
    { role: "user", content: "Hi" },
    { type: "message", role: "assistant", content: [] },
    { role: "user", content: "" },
    { role: "user", content: [{ type: "input_text", text: "  " }] },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello.", annotations: [] }] },
    { role: "user", content: "What is 2+2?" },
  ];

  test("reaches an Anthropic upstream repaired and reported", async () => {
    const reply = await postJson(`${gateway.url}/v1/responses`, { model: "claude-x", input, store: false });
    expect(reply.status, reply.text).toBe(200);
    const sent = anthropic.requests[0]!.body as Json;
    expect(anthropicRefusals(sent.messages)).toEqual([]);
    expect(repairs(lossyOf(reply.headers)).length).toBeGreaterThanOrEqual(3);
  });

  test("reaches a Chat upstream with no message it refuses", async () => {
    const reply = await postJson(`${gateway.url}/v1/responses`, { model: "chat-x", input, store: false });
    expect(reply.status, reply.text).toBe(200);
    expect(chatRefusals((chat.requests[0]!.body as Json).messages)).toEqual([]);
  });
});
