import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import {
  anthropicContentFromEvents,
  type Json,
  postJson,
  postStream,
  startTestGateway,
} from "../../test/support/gateway-harness.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * Reasoning in two places, through a generic OpenAI-compatible upstream (no preset: inline `<think>` is its
 * reasoning mode): an answer whose reasoning parser left tags in the content, and a client that sends its
 * reasoning in two fields.
 */

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  gateway = await startTestGateway({
    providers: { local: { type: "openai", upstream, preset: "generic" } },
    routes: [{ match: "*", provider: "local", model: "qwen3-coder" }],
  });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

beforeEach(() => {
  upstream.requests.length = 0;
});

const toolCall = { id: "call_1", type: "function", function: { name: "Bash", arguments: '{"command":"ls"}' } };
/** vLLM with a reasoning parser that left a second think block, and the blank line after it, in the content. */
const leftBehind = {
  role: "assistant",
  reasoning_content: "The user wants a listing.",
  content: "<think>Bash it is.</think>\n\n",
  tool_calls: [toolCall],
};
const tools = [{ name: "Bash", input_schema: { type: "object", properties: { command: { type: "string" } } } }];
const request = { model: "claude-sonnet-4-5", max_tokens: 512, tools, messages: [{ role: "user", content: "ls" }] };
const expectedContent = [
  { type: "thinking", thinking: "The user wants a listing." },
  { type: "thinking", thinking: "Bash it is." },
  { type: "tool_use", id: "call_1", name: "Bash", input: { command: "ls" } },
];

describe("an answer with a reasoning field and think tags in its content", () => {
  test("whole: the tags are thinking, no blank text block before the tool call, and it stops with tool_use", async () => {
    upstream.enqueue({
      kind: "json",
      body: {
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1,
        model: "qwen3-coder",
        choices: [{ index: 0, message: leftBehind, finish_reason: "stop" }],
        usage: { prompt_tokens: 20, completion_tokens: 9 },
      },
    });
    const reply = await postJson(`${gateway.url}/v1/messages`, request);
    expect(reply.status).toBe(200);
    const body = reply.body as Json;
    expect(body.content).toMatchObject(expectedContent);
    expect(body.content).toHaveLength(3);
    expect(JSON.stringify(body.content)).not.toContain("<think>");
    expect(body.stop_reason).toBe("tool_use");
  });

  test("streamed, the tags cut across chunks: the same blocks", async () => {
    const delta = (fields: object, finish: string | null = null) => ({
      id: "chatcmpl-2",
      object: "chat.completion.chunk",
      created: 1,
      model: "qwen3-coder",
      choices: [{ index: 0, delta: fields, finish_reason: finish }],
    });
    upstream.enqueue({
      kind: "sse",
      frames: openaiFrames([
        delta({ role: "assistant", reasoning_content: "The user wants " }),
        delta({ reasoning_content: "a listing." }),
        delta({ content: "<thi" }),
        delta({ content: "nk>Bash it is.</th" }),
        delta({ content: "ink>\n" }),
        delta({ content: "\n" }),
        delta({
          tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "Bash", arguments: "" } }],
        }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '{"command":"ls"}' } }] }),
        delta({}, "stop"),
      ]),
    });
    const reply = await postStream(`${gateway.url}/v1/messages`, { ...request, stream: true });
    expect(reply.status).toBe(200);
    const content = anthropicContentFromEvents(reply.data);
    expect(content).toMatchObject(expectedContent);
    expect(content).toHaveLength(3);
    const messageDelta = reply.data.find((event) => event.type === "message_delta") as Json;
    expect(messageDelta.delta.stop_reason).toBe("tool_use");
  });
});

describe("an OpenAI client's reasoning", () => {
  const history = (assistant: object) => ({
    model: "qwen3-coder",
    messages: [
      { role: "user", content: "list the files" },
      { role: "assistant", content: "Listing.", ...assistant },
      { role: "user", content: "again" },
    ],
  });
  const answer = {
    id: "chatcmpl-3",
    object: "chat.completion",
    created: 1,
    model: "qwen3-coder",
    choices: [{ index: 0, message: { role: "assistant", content: "Done." }, finish_reason: "stop" }],
  };

  test("sent in both reasoning_content and reasoning (qwen-code) reaches the upstream once", async () => {
    upstream.enqueue({ kind: "json", body: answer });
    const both = { reasoning_content: "Use ls.", reasoning: "Use ls." };
    const reply = await postJson(`${gateway.url}/v1/chat/completions`, history(both));
    expect(reply.status).toBe(200);
    const sent = (upstream.requests[0]!.body as { messages: Json[] }).messages[1];
    expect(sent).toEqual({ role: "assistant", content: "<think>Use ls.</think>Listing." });
    expect(JSON.stringify(upstream.requests[0]!.body).split("Use ls.")).toHaveLength(2);
  });

  test("sent in reasoning_content and moved to inline tags for a generic upstream is reported", async () => {
    upstream.enqueue({ kind: "json", body: answer });
    const reply = await postJson(`${gateway.url}/v1/chat/completions`, history({ reasoning_content: "Use ls." }));
    expect(reply.status).toBe(200);
    const sent = (upstream.requests[0]!.body as { messages: Json[] }).messages[1];
    expect(sent.content).toBe("<think>Use ls.</think>Listing.");
    const lossy = JSON.parse(String(reply.headers["x-parley-lossy"])) as Array<{ code: string; path?: string }>;
    expect(lossy).toContainEqual(
      expect.objectContaining({ code: "reasoning-field-changed", path: "messages[1].content[0]" }),
    );
  });
});
