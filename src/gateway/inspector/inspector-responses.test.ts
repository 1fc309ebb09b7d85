import { afterAll, beforeAll, expect, test } from "vitest";
import { getJson, type Json, postJson, postStream, startTestGateway } from "../../../test/support/gateway-harness.js";
import { traceOf } from "../../../test/support/inspector-session.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../../../test/support/scripted-upstream.js";
import type { RunningGateway } from "../server.js";

/**
 * A Responses client (a Codex-like turn: instructions, a developer message, sealed reasoning, a function call and its
 * output) before a Chat Completions upstream: each item's blocks line up with the Chat messages they became, and
 * each loss is at its block, whether found reading the client's items or writing the upstream's messages.
 */

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  gateway = await startTestGateway({ providers: { nim: { type: "openai", upstream } } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** What OpenAI handed Codex last turn: only OpenAI can read it, and the inspector never shows it. */
const SEALED = "gAAAAABpSealedReasoningOnlyOpenAICanRead0123456789==";
const CODEX_HEADERS = { authorization: "Bearer sk-codex", originator: "codex_cli_rs" };

const codexTurn = (overrides: Record<string, unknown>, callArguments: string) => ({
  model: "gpt-5-codex",
  instructions: "You are Codex, a coding agent.",
  store: false,
  include: ["reasoning.encrypted_content"],
  reasoning: { effort: "medium", summary: "auto" },
  tools: [{ type: "function", name: "shell", parameters: { type: "object", properties: { command: {} } } }],
  input: [
    { type: "message", role: "developer", content: [{ type: "input_text", text: "Sandbox: workspace-write." }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "What files are here?" }] },
    {
      type: "reasoning",
      id: "rs_1",
      summary: [{ type: "summary_text", text: "I should list them." }],
      encrypted_content: SEALED,
    },
    { type: "function_call", call_id: "call_1", name: "shell", arguments: callArguments },
    { type: "function_call_output", call_id: "call_1", output: "a.txt\nb.txt" },
  ],
  ...overrides,
});

const chunk = (delta: object, finish: string | null = null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1,
  model: "deepseek-reasoner",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

const rowsOf = (pairing: Json) =>
  pairing.rows.map((row: Json) => [
    row.change,
    row.left?.path,
    row.left?.title,
    row.right?.path,
    [...(row.left?.notes ?? []), ...(row.right?.notes ?? [])].map((note: Json) => note.code),
  ]);

const exchange = async (reply: { headers: Json }) => {
  const { id } = await traceOf(gateway, reply);
  return (await getJson(`${gateway.url}/inspect/api/traces/${id}`)).body as Json;
};

test("a streamed Codex-like turn: its items' blocks against the Chat messages, the sealed reasoning's loss at it", async () => {
  upstream.enqueue({
    kind: "sse",
    frames: openaiFrames([
      chunk({ role: "assistant", reasoning_content: "The listing is there." }),
      chunk({ content: "There are two files." }),
      { ...chunk({}, "stop"), usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } },
    ]),
  });
  const reply = await postStream(
    `${gateway.url}/v1/responses`,
    codexTurn({ stream: true }, '{"command":["ls"]}'),
    CODEX_HEADERS,
  );
  expect(reply.status).toBe(200);
  const view = await exchange(reply);
  expect([view.request.left.format, view.request.right.format]).toEqual([
    "OpenAI Responses",
    "OpenAI Chat Completions",
  ]);
  expect(view.request.left.tools).toEqual(["shell"]);
  expect(rowsOf(view.request)).toEqual([
    ["same", "instructions", "text", "messages[0].content", []],
    ["same", "input[0].content[0]", "text", "messages[1].content[0]", []],
    ["same", "input[1].content[0]", "text", "messages[2].content[0]", []],
    // The Chat encoder names the part it could not carry by its place in the history: the reasoning item's block.
    ["changed", "input[2]", "thinking (sealed)", "messages[3].content", ["reasoning-sealed-dropped"]],
    ["same", "input[3]", "tool call shell (call_1)", "messages[3].tool_calls[0]", []],
    ["same", "input[4]", "tool result (call_1)", "messages[4].content", []],
  ]);
  const sealed = view.request.rows[3];
  expect(sealed.detail).toBe("thinking (sealed) became thinking");
  expect(sealed.left.text).toBe("I should list them.");
  expect(sealed.rightMessage.remarks).toEqual(["merged from input[2], input[3]"]);
  expect(view.unplaced.map((note: Json) => note.code)).toEqual(["thinking-config-dropped"]);
  // The streamed answer as the client's stream adds up to, read by the Responses decoder.
  expect(view.streams.client.events[0].event).toBe("response.created");
  expect(view.streams.client.events.at(-1).event).toBe("response.completed");
  expect(view.response.left.unread).toBeUndefined();
  expect(view.response.rows.map((row: Json) => [row.left?.kind, row.left?.path, row.right?.path])).toEqual([
    ["thinking", "content[0]", "content[0]"],
    ["text", "content[1]", "content[1]"],
  ]);
  expect(JSON.stringify([view.request, view.response])).not.toContain(SEALED);
});

test("a whole answer: its output items at their paths; a loss found reading the client's items at its item", async () => {
  upstream.enqueue({
    kind: "json",
    body: {
      id: "chatcmpl-2",
      object: "chat.completion",
      created: 1,
      model: "deepseek-chat",
      choices: [
        {
          index: 0,
          finish_reason: "tool_calls",
          message: {
            role: "assistant",
            content: "Listing again.",
            tool_calls: [
              { id: "call_2", type: "function", function: { name: "shell", arguments: '{"command":["ls"]}' } },
            ],
          },
        },
      ],
      usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
    },
  });
  // Arguments cut short, as a model that ran out of tokens leaves them: the reader repairs them and says so.
  const reply = await postJson(`${gateway.url}/v1/responses`, codexTurn({}, '{"command":["ls"'), CODEX_HEADERS);
  expect(reply.status).toBe(200);
  const view = await exchange(reply);
  const call = view.request.rows.find((row: Json) => row.left?.path === "input[3]");
  expect(call.left.notes.map((note: Json) => [note.code, note.path])).toEqual([
    ["tool-arguments-repaired", "input[3].arguments"],
  ]);
  expect(view.response.rows.map((row: Json) => [row.left?.kind, row.left?.path, row.right?.path])).toEqual([
    ["text", "output[0].content[0]", "choices[0].message.content"],
    ["tool_call", "output[1]", "choices[0].message.tool_calls[0]"],
  ]);
  expect(view.response.rows.map((row: Json) => row.leftMessage?.role)).toEqual(["assistant", "function_call"]);
});
