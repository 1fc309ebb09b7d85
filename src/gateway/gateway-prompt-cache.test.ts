import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  anthropicContentFromEvents,
  type Json,
  postJson,
  postStream,
  startTestGateway,
} from "../../test/support/gateway-harness.js";
import { type ScriptedTurn, turnFrames } from "../../test/support/scripted-turns.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import { conversationCacheKey, sessionOfUserId } from "./exchange/cache-key.js";
import type { RunningGateway } from "./server.js";

/**
 * A provider's prompt cache holds a prefix of the bytes it was sent: a conversation keeps its cache only if every
 * turn's request starts with the previous one's, byte for byte, and goes where the previous one went (the cache key).
 * A Claude Code-like session of 20 turns (thinking, tool calls and their results, breakpoints on the system prompt
 * and the tools, the top-level automatic form) goes through Parley to each kind of upstream.
 */
const SESSION = "5b0c8f7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f";
const TURNS = 20;

let chat: ScriptedUpstream;
let anthropic: ScriptedUpstream;
let responses: ScriptedUpstream;
let openrouter: ScriptedUpstream;
let generic: ScriptedUpstream;
let gateway: RunningGateway;

const turn = (index: number): ScriptedTurn =>
  index % 3 === 2
    ? { thought: `Turn ${index}: enough read, answer.`, text: `Answer ${index}.\n\nDone  ` }
    : { thought: `Turn ${index}: read a file.`, call: { name: "Read", args: { file_path: `/src/f${index}.ts` } } };

beforeAll(async () => {
  chat = await startScriptedUpstream("openai");
  anthropic = await startScriptedUpstream("anthropic");
  responses = await startScriptedUpstream("openai-responses");
  openrouter = await startScriptedUpstream("openai");
  generic = await startScriptedUpstream("openai");
  for (const [kind, upstream] of [
    ["openai", chat],
    ["anthropic", anthropic],
    ["openai-responses", responses],
  ] as const) {
    upstream.fallback = () => {
      const index = upstream.requests.length - 1;
      return { kind: "sse", frames: turnFrames(kind, turn(index), index) };
    };
  }
  const chunk = { id: "c", object: "chat.completion.chunk", created: 1, model: "m" };
  for (const upstream of [openrouter, generic])
    upstream.fallback = () => ({
      kind: "sse",
      frames: openaiFrames([{ ...chunk, choices: [{ index: 0, delta: { content: "ok" }, finish_reason: "stop" }] }]),
    });
  gateway = await startTestGateway({
    providers: {
      chat: { type: "openai", upstream: chat, preset: "deepseek", compat: { promptCacheKey: true } },
      claude: { type: "anthropic", upstream: anthropic },
      responses: { type: "openai-responses", upstream: responses },
      openrouter: { type: "openai", upstream: openrouter, preset: "openrouter" },
      generic: { type: "openai", upstream: generic },
    },
    routes: [
      { match: "chat-*", provider: "chat" },
      { match: "claude-*", provider: "claude" },
      { match: "gpt-*", provider: "responses" },
      { match: "router-*", provider: "openrouter" },
      { match: "*", provider: "generic" },
    ],
  });
});

afterAll(async () => {
  await gateway.close();
  for (const upstream of [chat, anthropic, responses, openrouter, generic]) await upstream.close();
});

const tools = [
  {
    name: "Read",
    description: "Reads a file.",
    input_schema: { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] },
  },
  {
    name: "Bash",
    description: "Runs a command.",
    input_schema: { type: "object", properties: { command: { type: "string" } } },
    cache_control: { type: "ephemeral" },
  },
];

/** Claude Code's request shape: system blocks with a breakpoint, tools, `metadata.user_id` naming the session. */
function sessionBody(model: string, messages: Json[]): Json {
  return {
    model,
    max_tokens: 4096,
    stream: true,
    cache_control: { type: "ephemeral" },
    system: [
      { type: "text", text: "You are Claude Code." },
      { type: "text", text: "Be brief.\n", cache_control: { type: "ephemeral" } },
    ],
    tools,
    metadata: { user_id: JSON.stringify({ device_id: "d0", account_uuid: "", session_id: SESSION }) },
    thinking: { type: "enabled", budget_tokens: 2048 },
    messages,
  };
}

/** Runs a session of `TURNS` turns as Claude Code would: the whole history each time, answers sent back as received. */
async function runSession(model: string): Promise<void> {
  const messages: Json[] = [{ role: "user", content: [{ type: "text", text: "Fix the bug in src/ please." }] }];
  for (let index = 0; index < TURNS; index++) {
    const reply = await postStream(`${gateway.url}/v1/messages`, sessionBody(model, messages));
    expect(reply.status, reply.text.slice(0, 400)).toBe(200);
    const content = anthropicContentFromEvents(reply.data);
    messages.push({ role: "assistant", content });
    const call = content.find((block) => block.type === "tool_use");
    messages.push(
      call === undefined
        ? { role: "user", content: [{ type: "text", text: `Go on (${index}).` }] }
        : {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: call.id, content: `contents of file ${index}\n` }],
          },
    );
  }
}

/**
 * Each request starts with the one before it: its fields before the history and the history's elements up to the
 * previous request's last are the previous request's bytes; its other fields (tools, settings, the cache key) equal
 * the previous request's.
 */
function expectGrowingPrefix(upstream: ScriptedUpstream, arrayKey: "messages" | "input"): void {
  const bodies = upstream.requests.map((request) => request.rawBody);
  expect(bodies).toHaveLength(TURNS);
  for (let index = 1; index < bodies.length; index++) {
    const before = bodies[index - 1]!;
    const after = bodies[index]!;
    const parsedBefore = JSON.parse(before) as Json;
    const parsedAfter = JSON.parse(after) as Json;
    // compact JSON as written: the history's end in the text is where its serialisation ends
    expect(before).toBe(JSON.stringify(parsedBefore));
    const start = before.indexOf(`"${arrayKey}":[`);
    expect(start).toBeGreaterThan(0);
    const history = JSON.stringify(parsedBefore[arrayKey]);
    const prefix = before.slice(0, start + arrayKey.length + 3 + history.length - 1);
    expect(parsedAfter[arrayKey].length).toBeGreaterThan(parsedBefore[arrayKey].length);
    if (!after.startsWith(prefix)) {
      const at = [...prefix].findIndex((character, position) => after[position] !== character);
      expect(after.slice(at - 200, at + 200), `turn ${index}: differs at ${at}`).toBe(prefix.slice(at - 200, at + 200));
    }
    expect({ ...parsedAfter, [arrayKey]: undefined }, `turn ${index}: fields beside the history`).toEqual({
      ...parsedBefore,
      [arrayKey]: undefined,
    });
  }
}

describe("a 20-turn session keeps every upstream's prefix byte for byte", () => {
  test("to a Chat upstream that routes its cache by key: with the session's prompt_cache_key on every turn", async () => {
    await runSession("chat-model");
    expectGrowingPrefix(chat, "messages");
    const keys = new Set(chat.requests.map((request) => (request.body as Json).prompt_cache_key));
    expect([...keys]).toHaveLength(1);
    const key = [...keys][0] as string;
    expect(key).toMatch(/^parley-[0-9a-f]{40}$/);
    // derived from the session, never carrying it (or anything else the client sent) as it is
    expect(key).not.toContain(SESSION);
  });

  test("to an Anthropic upstream: the client's bytes, breakpoints included", async () => {
    await runSession("claude-model");
    expectGrowingPrefix(anthropic, "messages");
    const sent = anthropic.requests[TURNS - 1]!.body as Json;
    expect(sent.cache_control).toEqual({ type: "ephemeral" });
    expect(sent.system[1].cache_control).toEqual({ type: "ephemeral" });
    expect(sent.tools[1].cache_control).toEqual({ type: "ephemeral" });
    expect(sent.prompt_cache_key).toBeUndefined();
  });

  test("to a Responses upstream: with the session's prompt_cache_key on every turn", async () => {
    await runSession("gpt-model");
    expectGrowingPrefix(responses, "input");
    const keys = new Set(responses.requests.map((request) => (request.body as Json).prompt_cache_key));
    expect(keys).toEqual(new Set(chat.requests.map((request) => (request.body as Json).prompt_cache_key)));
    expect(JSON.stringify(responses.requests[0]!.body)).not.toContain("cache_control");
  });
});

describe("cache hints in each provider's own form", () => {
  test("OpenRouter takes cache_control on blocks, tools and the request; a generic server gets none, reported once", async () => {
    const messages = [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] }];
    const routed = await postStream(`${gateway.url}/v1/messages`, sessionBody("router-model", messages));
    expect(routed.status, routed.text.slice(0, 300)).toBe(200);
    const sent = openrouter.requests.at(-1)!.body as Json;
    expect(sent.cache_control).toEqual({ type: "ephemeral" });
    expect(sent.messages[0].content[1].cache_control).toEqual({ type: "ephemeral" });
    expect(sent.messages[1].content[0].cache_control).toEqual({ type: "ephemeral" });
    expect(sent.tools[1].function.cache_control).toEqual({ type: "ephemeral" });
    expect(sent.prompt_cache_key).toBeUndefined();
    expect(String(routed.headers["x-parley-lossy"] ?? "")).not.toContain("cache_control");

    const plain = await postStream(`${gateway.url}/v1/messages`, sessionBody("other-model", messages));
    expect(plain.status).toBe(200);
    const stripped = generic.requests.at(-1)!.body as Json;
    expect(JSON.stringify(stripped)).not.toContain("cache_control");
    expect(stripped.prompt_cache_key).toBeUndefined();
    const lossy = String(plain.headers["x-parley-lossy"] ?? "");
    expect(lossy.match(/cache_control-stripped/g)).toHaveLength(1);
  });

  test("a client's own prompt_cache_key wins, from a Chat client and from a Responses client (Codex)", async () => {
    const chatReply = await postJson(`${gateway.url}/v1/chat/completions`, {
      model: "gpt-model",
      messages: [{ role: "user", content: "hi" }],
      prompt_cache_key: "client-key-1",
      stream: true,
    });
    expect(chatReply.status, chatReply.text.slice(0, 300)).toBe(200);
    expect((responses.requests.at(-1)!.body as Json).prompt_cache_key).toBe("client-key-1");
    const codex = await postJson(`${gateway.url}/v1/responses`, {
      model: "chat-model",
      input: [{ role: "user", content: [{ type: "input_text", text: "hi" }] }],
      prompt_cache_key: "01a209e5-6f3f-7961-8815-6b1db27ffbf3",
      stream: true,
    });
    expect(codex.status, codex.text.slice(0, 300)).toBe(200);
    expect((chat.requests.at(-1)!.body as Json).prompt_cache_key).toBe("01a209e5-6f3f-7961-8815-6b1db27ffbf3");
  });
});

describe("the conversation's cache key", () => {
  const request = (userId?: string) => ({
    model: "m",
    messages: [{ role: "user" as const, parts: [{ type: "text" as const, text: "first" }] }],
    ...(userId === undefined ? {} : { userId }),
  });

  test("Claude Code's session id, in its header or either form of metadata.user_id, gives one key", () => {
    const fromHeader = conversationCacheKey({ "x-claude-code-session-id": SESSION }, request(), undefined);
    const fromJson = conversationCacheKey({}, request(JSON.stringify({ device_id: "x", session_id: SESSION })), "c1");
    const fromLegacy = conversationCacheKey({}, request(`user_abc_account_def_session_${SESSION}`), undefined);
    expect(fromJson).toBe(fromHeader);
    expect(fromLegacy).toBe(fromHeader);
    expect(sessionOfUserId("plain-user")).toBeUndefined();
    expect(sessionOfUserId("{not json")).toBeUndefined();
  });

  test("else Codex's session header, the stored conversation, the history's start", () => {
    const codex = conversationCacheKey({ session_id: "s-1" }, request(), "c1");
    const stored = conversationCacheKey({}, request(), "c1");
    const start = conversationCacheKey({}, request(), undefined);
    expect(new Set([codex, stored, start]).size).toBe(3);
    const later = { ...request(), messages: [...request().messages, { role: "assistant" as const, parts: [] }] };
    expect(conversationCacheKey({}, later, undefined)).toBe(start);
    expect(conversationCacheKey({ authorization: "Bearer sk-1" }, request(), undefined)).toBe(start);
  });
});
