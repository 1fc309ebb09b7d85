import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import type { ClaudeCodeRequestFixture } from "../../test/support/claude-code-fixtures.js";
import {
  anthropicContentFromEvents,
  type Json,
  postStream,
  startTestGateway,
} from "../../test/support/gateway-harness.js";
import {
  anthropicFrames,
  openaiFrames,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * Claude Code's newest request shapes (issue 31). Recorded from Claude Code 2.1.332 itself
 * (`test/e2e/claude-code-shapes.test.ts`, which says how each is brought about):
 *
 * - `2.1.332.recorded-shapes.json`: the `diagnostics` body field, `cache_control.scope: "global"`, per-tool
 *   `eager_input_streaming`, `tool_reference` blocks inside a `tool_result` (with `defer_loading` MCP tools),
 *   `output_config` on the in-sequence `system` message, and `thinking.display: "omitted"` with the signed thinking
 *   blocks of empty text its answers held;
 * - `2.1.332.mid-turn-message.json`: the user's mid-turn correction, as this release sends it: a text block beside
 *   the tool result.
 *
 * Assembled by hand (`2.1.332.new-shapes.json`), for what no headless run sent: a `betas` body field (Claude Code's
 * SDK turns the betas it is given into the `anthropic-beta` header), a mid-turn correction as an in-sequence
 * `system` message (2.1.332 sends it beside the tool result), and a `cache_control.scope` other than `"global"` (the
 * only one 2.1.332 writes); it holds the recorded shapes too. Each request is accepted; an Anthropic upstream gets
 * it byte for byte; the strict Chat and Responses servers (test/support/strict-servers.ts) get what their API has,
 * never a field they refuse, and everything left out is reported.
 */

interface LossyEntry {
  code: string;
  message: string;
  path?: string;
}

const readFixture = (name: string) =>
  JSON.parse(
    readFileSync(new URL(`../../test/fixtures/claude-code/${name}`, import.meta.url), "utf8"),
  ) as ClaudeCodeRequestFixture;
const fixture = readFixture("2.1.332.new-shapes.json");
const body = fixture.body as Json;
const recordedShapes = readFixture("2.1.332.recorded-shapes.json");
const midTurnMessage = readFixture("2.1.332.mid-turn-message.json");

let anthropic: ScriptedUpstream;
let chat: ScriptedUpstream;
let responses: ScriptedUpstream;
let gateway: RunningGateway;

const messageEvents = [
  {
    type: "message_start",
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-opus-5-5",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 900, output_tokens: 1 },
    },
  },
  { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "EqQBomitted-3==" } },
  { type: "content_block_stop", index: 0 },
  { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Issue #12 is about it." } },
  { type: "content_block_stop", index: 1 },
  { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 9 } },
  { type: "message_stop" },
];

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
      content: [{ type: "output_text", text: "Issue #12 is about it.", annotations: [] }],
    },
  ],
  usage: { input_tokens: 900, output_tokens: 9, total_tokens: 909 },
};
const responseEvents = [
  { type: "response.created", sequence_number: 0, response: { ...response, status: "in_progress", output: [] } },
  { type: "response.completed", sequence_number: 1, response },
];

beforeAll(async () => {
  [anthropic, chat, responses] = await Promise.all([
    startScriptedUpstream("anthropic"),
    startScriptedUpstream("openai"),
    startScriptedUpstream("openai-responses"),
  ]);
  anthropic.fallback = () => ({ kind: "sse", frames: anthropicFrames(messageEvents) });
  chat.fallback = () => ({
    kind: "sse",
    frames: openaiFrames([
      chatChunk({ role: "assistant", content: "Issue #12 is about it." }, null),
      chatChunk({}, "stop"),
    ]),
  });
  responses.fallback = () => ({ kind: "sse", frames: anthropicFrames(responseEvents) });
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

/** Whether `x-parley-lossy` names this field (by code or message) at or under this path. */
function reported(lossy: readonly LossyEntry[], key: string, path?: string): boolean {
  return lossy.some(
    (entry) =>
      (entry.code.includes(key) || entry.message.includes(key)) &&
      (path === undefined ||
        (entry.path !== undefined &&
          (entry.path === path || entry.path.startsWith(`${path}.`) || entry.path.startsWith(`${path}[`)))),
  );
}

/** A recorded request's body, as Claude Code sent it, to the route of `model`. */
async function sendRecorded(recorded: ClaudeCodeRequestFixture, model?: string) {
  const sent = model === undefined ? recorded.body : { ...recorded.body, model };
  return postStream(`${gateway.url}${recorded.path}`, JSON.stringify(sent), recorded.headers);
}

/** The Chat or Responses path (system prompt first) of the recorded request's in-sequence system message. */
function systemMessagePath(recorded: ClaudeCodeRequestFixture): string {
  const index = (recorded.body as Json).messages.findIndex(
    (message: Json) => message.role === "system" && message.output_config !== undefined,
  );
  expect(index).toBeGreaterThanOrEqual(0);
  return `messages[${index + 1}]`;
}

describe.each([
  ["recorded-shapes", recordedShapes],
  ["mid-turn-message", midTurnMessage],
])("Claude Code 2.1.332's recorded request %s", (_name, recorded) => {
  const recordedBody = recorded.body as Json;

  test("has what it was recorded for", () => {
    expect(recorded.release).toBe("2.1.332");
    expect(recorded.note).toMatch(/^Claude Code 2\.1\.332's/);
    expect(recordedBody.diagnostics).toEqual({ previous_message_id: expect.any(String) });
    expect(JSON.stringify(recordedBody.system)).toContain('"scope":"global"');
    expect(recordedBody.thinking).toMatchObject({ type: "adaptive" });
    expect(recordedBody.tools.some((tool: Json) => tool.eager_input_streaming === true)).toBe(true);
  });

  test("reaches an Anthropic upstream byte for byte, nothing reported", async () => {
    const text = JSON.stringify(recorded.body);
    const reply = await sendRecorded(recorded);
    expect(reply.status, reply.text.slice(0, 500)).toBe(200);
    expect(anthropic.requests).toHaveLength(1);
    expect(anthropic.requests[0]!.rawBody).toBe(text);
    expect(anthropic.requests[0]!.headers["anthropic-beta"]).toBe(recorded.headers["anthropic-beta"]);
    expect(reply.headers["x-parley-lossy"]).toBeUndefined();
    // Signed thinking of omitted display comes back as it came.
    expect(anthropicContentFromEvents(reply.data)[0]).toEqual({
      type: "thinking",
      thinking: "",
      signature: "EqQBomitted-3==",
    });
  });

  test("reaches a strict Chat Completions server as it takes them, never refused, the rest reported", async () => {
    const reply = await sendRecorded(recorded, "chat-coder");
    expect(reply.status, reply.text.slice(0, 500)).toBe(200);
    expect(chat.requests).toHaveLength(1);
    const sent = chat.requests[0]!.body as Json;
    const lossy = lossyOf(reply.headers);
    for (const key of ["diagnostics", "context_management"]) {
      expect(sent[key], key).toBeUndefined();
      expect(reported(lossy, key), `${key} reported`).toBe(true);
    }
    expect(JSON.stringify(sent.tools)).not.toContain("eager_input_streaming");
    expect(reported(lossy, "eager_input_streaming", "tools[0]")).toBe(true);
    expect(JSON.stringify(sent)).not.toContain("cache_control");
    expect(reported(lossy, "cache_control")).toBe(true);
    expect(reported(lossy, "output_config", systemMessagePath(recorded))).toBe(true);
    // The in-sequence system message keeps its place and its text.
    expect(sent.messages.filter((message: Json) => message.role === "system")).toHaveLength(2);
    expect(JSON.stringify(sent.messages)).toContain("# Environment");
    // Thinking with no text is never sent as empty think tags or an empty reasoning field; each is reported.
    expect(JSON.stringify(sent.messages)).not.toContain("<think></think>");
    expect(lossy.filter((entry) => entry.code === "thinking-dropped")).toHaveLength(2);
    for (const message of sent.messages.filter((entry: Json) => entry.role === "assistant")) {
      expect(message.content, JSON.stringify(message)).not.toBe("");
      expect(message.reasoning_content).toBeUndefined();
    }
    const tools = sent.messages.filter((message: Json) => message.role === "tool");
    expect(tools).toHaveLength(2);
    if (recorded === recordedShapes) {
      // The tool search's tool references reach the model as text naming the tools.
      expect(JSON.stringify(tools[0].content)).toContain("mcp__github__list_issues");
      expect(JSON.stringify(tools[0].content)).toContain("mcp__github__get_issue");
    } else {
      // The correction follows the tool's result, as the user's words.
      const after = sent.messages.slice(sent.messages.indexOf(tools[1]) + 1);
      expect(after.map((message: Json) => message.role)).toEqual(["user"]);
      expect(JSON.stringify(after[0].content)).toContain("The user sent a new message while you were working");
    }
  });

  test("reaches a strict Responses server as it takes them, never refused, the rest reported", async () => {
    const reply = await sendRecorded(recorded, "gpt-coder");
    expect(reply.status, reply.text.slice(0, 500)).toBe(200);
    expect(responses.requests).toHaveLength(1);
    const sent = responses.requests[0]!.body as Json;
    const lossy = lossyOf(reply.headers);
    expect(sent.diagnostics).toBeUndefined();
    expect(reported(lossy, "diagnostics")).toBe(true);
    expect(JSON.stringify(sent)).not.toContain("eager_input_streaming");
    expect(reported(lossy, "eager_input_streaming", "tools[0]")).toBe(true);
    expect(JSON.stringify(sent)).not.toContain("cache_control");
    expect(reported(lossy, "output_config", systemMessagePath(recorded))).toBe(true);
    const outputs = sent.input.filter((item: Json) => item.type === "function_call_output");
    expect(outputs).toHaveLength(2);
    if (recorded === recordedShapes) expect(JSON.stringify(outputs[0].output)).toContain("mcp__github__list_issues");
    else expect(JSON.stringify(sent.input)).toContain("The user sent a new message while you were working");
    for (const item of sent.input.filter((entry: Json) => entry.type === "reasoning"))
      expect(JSON.stringify(item)).not.toMatch(/"text":""/);
  });
});

describe("Claude Code 2.1.332's shapes no headless run sent, assembled (a betas body field, a system-message correction)", () => {
  test("reach an Anthropic upstream byte for byte, and its omitted thinking comes back as it came", async () => {
    const text = JSON.stringify(body);
    const reply = await postStream(`${gateway.url}${fixture.path}`, text, fixture.headers);
    expect(reply.status, reply.text.slice(0, 500)).toBe(200);
    expect(anthropic.requests).toHaveLength(1);
    expect(anthropic.requests[0]!.rawBody).toBe(text);
    expect(anthropic.requests[0]!.headers["anthropic-beta"]).toBe(fixture.headers["anthropic-beta"]);
    expect(reply.headers["x-parley-lossy"]).toBeUndefined();
    const content = anthropicContentFromEvents(reply.data);
    expect(content[0]).toEqual({ type: "thinking", thinking: "", signature: "EqQBomitted-3==" });
  });

  test("reach a strict Chat Completions server as it takes them, never refused, the rest reported", async () => {
    const reply = await postStream(`${gateway.url}${fixture.path}`, { ...body, model: "chat-coder" }, fixture.headers);
    expect(reply.status, reply.text.slice(0, 500)).toBe(200);
    expect(chat.requests).toHaveLength(1);
    const sent = chat.requests[0]!.body as Json;
    const lossy = lossyOf(reply.headers);
    // the request-level fields Chat has no place for
    for (const key of ["diagnostics", "betas", "context_management"]) {
      expect(sent[key], key).toBeUndefined();
      expect(reported(lossy, key), `${key} reported`).toBe(true);
    }
    expect(sent.reasoning_effort).toBe("medium");
    // every tool arrives as a function; eager_input_streaming and cache_control are reported
    expect(sent.tools.map((tool: Json) => tool.function.name)).toEqual(body.tools.map((tool: Json) => tool.name));
    expect(JSON.stringify(sent.tools)).not.toContain("eager_input_streaming");
    expect(reported(lossy, "eager_input_streaming", "tools[0]")).toBe(true);
    // cache_control with its scope is no field of Chat's (reported once)
    expect(JSON.stringify(sent)).not.toContain("cache_control");
    expect(reported(lossy, "cache_control")).toBe(true);
    // the system message's output_config is dropped and reported (paths count the system prompt as messages[0]);
    // both system messages keep their place and text
    expect(reported(lossy, "output_config", "messages[7]")).toBe(true);
    const systems = sent.messages.filter((message: Json) => message.role === "system");
    expect(JSON.stringify(systems)).toContain("The user sent a new message while you were working");
    expect(JSON.stringify(systems)).toContain("# Effort");
    // the tool search result's tool references reach the model as text naming the tools
    const toolMessages = sent.messages.filter((message: Json) => message.role === "tool");
    expect(toolMessages).toHaveLength(2);
    expect(JSON.stringify(toolMessages[0].content)).toContain("mcp__github__list_issues");
    expect(JSON.stringify(toolMessages[0].content)).toContain("mcp__github__get_issue");
    // signed thinking of omitted display is never sent as empty text or empty think tags
    expect(JSON.stringify(sent.messages)).not.toContain("<think></think>");
    expect(reported(lossy, "thinking-dropped", "messages[2].content[0]")).toBe(true);
    for (const message of sent.messages.filter((entry: Json) => entry.role === "assistant")) {
      expect(message.content, JSON.stringify(message)).not.toBe("");
      expect(message.reasoning_content).toBeUndefined();
    }
  });

  test("reach a strict Responses server as it takes them, never refused, the rest reported", async () => {
    const reply = await postStream(`${gateway.url}${fixture.path}`, { ...body, model: "gpt-coder" }, fixture.headers);
    expect(reply.status, reply.text.slice(0, 500)).toBe(200);
    expect(responses.requests).toHaveLength(1);
    const sent = responses.requests[0]!.body as Json;
    const lossy = lossyOf(reply.headers);
    for (const key of ["diagnostics", "betas"]) {
      expect(sent[key], key).toBeUndefined();
      expect(reported(lossy, key), `${key} reported`).toBe(true);
    }
    expect(JSON.stringify(sent)).not.toContain("eager_input_streaming");
    expect(JSON.stringify(sent)).not.toContain("cache_control");
    const outputs = sent.input.filter((item: Json) => item.type === "function_call_output");
    expect(outputs).toHaveLength(2);
    expect(JSON.stringify(outputs[0].output)).toContain("mcp__github__list_issues");
    // no empty reasoning item made out of the omitted thinking
    for (const item of sent.input.filter((entry: Json) => entry.type === "reasoning"))
      expect(JSON.stringify(item)).not.toMatch(/"text":""/);
    expect(JSON.stringify(sent.input)).toContain("The user sent a new message while you were working");
  });
});
