import { afterAll, beforeAll, expect, test } from "vitest";
import { getJson, type Json, postJson, startTestGateway } from "../../../test/support/gateway-harness.js";
import { traceOf } from "../../../test/support/inspector-session.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../../test/support/scripted-upstream.js";
import type { RunningGateway } from "../server.js";

/**
 * The other direction than inspector-api.test.ts: an OpenAI client, an Anthropic upstream. The system message is
 * lifted out of the history and a tool message joins the user message after it, so the places the upstream
 * request's encoder reports differ from the client's: each loss is still at the block it touched.
 */

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("anthropic");
  gateway = await startTestGateway({ providers: { claude: { type: "anthropic", upstream } } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

test("an OpenAI client before an Anthropic upstream: messages merged, the wrapped tool input at its call", async () => {
  upstream.enqueue({
    kind: "json",
    body: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: "You're welcome." }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 40, output_tokens: 4 },
    },
  });
  const reply = await postJson(`${gateway.url}/v1/chat/completions`, {
    model: "claude-sonnet-4-5",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Add 1 and 2." },
      {
        role: "assistant",
        content: null,
        // Arguments that are JSON but not an object: Anthropic takes objects only.
        tool_calls: [{ id: "call_1", type: "function", function: { name: "sum", arguments: "[1,2]" } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "3" },
      { role: "user", content: "Thanks" },
    ],
  });
  expect(reply.status).toBe(200);
  const { id } = await traceOf(gateway, reply);
  const view = (await getJson(`${gateway.url}/inspect/api/traces/${id}`)).body as Json;
  expect([view.request.left.format, view.request.right.format]).toEqual([
    "OpenAI Chat Completions",
    "Anthropic Messages",
  ]);
  const rows = view.request.rows.map((row: Json) => [
    row.change,
    row.left?.path,
    row.right?.path,
    [...(row.right?.notes ?? [])].map((note: Json) => note.code),
  ]);
  expect(rows).toEqual([
    ["same", "messages[0].content", "system[0]", []],
    ["same", "messages[1].content", "messages[0].content", []],
    ["changed", "messages[2].tool_calls[0]", "messages[1].content[0]", ["tool-input-wrapped"]],
    ["same", "messages[3].content", "messages[2].content[0]", []],
    ["same", "messages[4].content", "messages[2].content[1]", []],
  ]);
  const merged = view.request.rows.find((row: Json) => row.rightMessage?.path === "messages[2]").rightMessage;
  expect(merged.remarks).toEqual(["merged from messages[3], messages[4]"]);
  expect(view.unplaced).toEqual([]);
  expect(view.response.rows.map((row: Json) => [row.left?.path, row.right?.path])).toEqual([
    ["choices[0].message.content", "content[0]"],
  ]);
});
