import { afterAll, beforeAll, expect, test } from "vitest";
import { getJson, type Json, postJson, startTestGateway } from "../../../test/support/gateway-harness.js";
import { traceOf } from "../../../test/support/inspector-session.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../../test/support/scripted-upstream.js";
import type { RunningGateway } from "../server.js";

/**
 * A Claude Code-like client before a Responses upstream: the system prompt in blocks becomes the first input item,
 * and a user message holding a tool result and text becomes a call output and a message item. The places the
 * upstream request's encoder reports are those its body reads back as, so each loss is at the block it touched.
 */

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai-responses");
  gateway = await startTestGateway({ providers: { openai: { type: "openai-responses", upstream } } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

test("an Anthropic client before a Responses upstream: the cache breakpoint's, the thinking's and the error flag's losses at their blocks", async () => {
  upstream.enqueue({
    kind: "json",
    body: {
      id: "resp_1",
      object: "response",
      created_at: 1,
      status: "completed",
      model: "gpt-5",
      output: [
        {
          id: "msg_1",
          type: "message",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "Done.", annotations: [] }],
        },
      ],
      usage: { input_tokens: 60, output_tokens: 2, total_tokens: 62 },
    },
  });
  const reply = await postJson(`${gateway.url}/v1/messages`, {
    model: "gpt-5",
    max_tokens: 1000,
    system: [
      { type: "text", text: "You are Claude Code, a coding agent." },
      { type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } },
    ],
    messages: [
      { role: "user", content: "List the files." },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "I will run ls.", signature: "EqQBCkYIBxgCKkAsignedByAnthropic" },
          { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "ls: permission denied", is_error: true },
          { type: "text", text: "Try sudo." },
        ],
      },
    ],
  });
  expect(reply.status).toBe(200);
  const { id } = await traceOf(gateway, reply);
  const view = (await getJson(`${gateway.url}/inspect/api/traces/${id}`)).body as Json;
  expect([view.request.left.format, view.request.right.format]).toEqual(["Anthropic Messages", "OpenAI Responses"]);
  const rows = view.request.rows.map((row: Json) => [
    row.left?.path,
    row.right?.path,
    [...(row.right?.notes ?? [])].map((note: Json) => [note.code, note.path]),
  ]);
  expect(rows).toEqual([
    ["system[0]", "input[0].content[0]", []],
    // Its cache breakpoint has no Responses field.
    ["system[1]", "input[0].content[1]", [["cache_control-stripped", "messages[0].content[1]"]]],
    ["messages[0].content", "input[1].content", []],
    ["messages[1].content[0]", "input[2].content[0]", [["thinking-to-text", "messages[2].content[0]"]]],
    ["messages[1].content[1]", "input[3]", []],
    ["messages[2].content[0]", "input[4]", [["tool-error-flag-dropped", "messages[3].content[0]"]]],
    ["messages[2].content[1]", "input[5].content[0]", []],
  ]);
  expect(view.request.rows.map((row: Json) => row.change)).toEqual([
    "same",
    "same",
    "same",
    "changed",
    "same",
    "changed",
    "same",
  ]);
  expect(view.unplaced).toEqual([]);
});
