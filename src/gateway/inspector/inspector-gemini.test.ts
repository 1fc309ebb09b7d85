import { afterAll, beforeAll, expect, test } from "vitest";
import { getJson, type Json, postJson, postStream, startTestGateway } from "../../../test/support/gateway-harness.js";
import { actAsGemini, type GeminiServer } from "../../../test/support/gemini-server.js";
import { traceOf } from "../../../test/support/inspector-session.js";
import { geminiAnswer, turnFrames, turnMarks } from "../../../test/support/scripted-turns.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../../test/support/scripted-upstream.js";
import type { RunningGateway } from "../server.js";

/**
 * The inspector's view of Gemini exchanges, both sides block by block: a Gemini client's turn (the thinking Gemini CLI
 * drops read back from the signature it kept) beside the Anthropic blocks it became, and an Anthropic client's turn
 * beside the Gemini parts of its upstream, Google's signature a block at its part. No signature is shown.
 */

let anthropic: ScriptedUpstream;
let gemini: ScriptedUpstream;
let server: GeminiServer;
let gateway: RunningGateway;

beforeAll(async () => {
  anthropic = await startScriptedUpstream("anthropic");
  gemini = await startScriptedUpstream("gemini");
  server = { replies: [] };
  actAsGemini(gemini, server);
  gateway = await startTestGateway({
    providers: { claude: { type: "anthropic", upstream: anthropic }, google: { type: "gemini", upstream: gemini } },
    defaultProvider: "claude",
    routes: [{ match: "gemini-*", provider: "google" }],
  });
});

afterAll(async () => {
  await gateway?.close();
  await anthropic?.close();
  await gemini?.close();
});

const TOOLS = [
  {
    functionDeclarations: [
      { name: "read_file", parametersJsonSchema: { type: "object", properties: { file_path: { type: "string" } } } },
    ],
  },
];
const SYSTEM = { parts: [{ text: "Be brief." }] };
const QUESTION = { role: "user", parts: [{ text: "Read a." }] };
const streamUrl = (model: string) => `${gateway.url}/v1beta/models/${model}:streamGenerateContent?alt=sse`;
const viewOf = async (reply: { headers: Record<string, unknown> }): Promise<Json> => {
  const { id } = await traceOf(gateway, reply as never);
  return (await getJson(`${gateway.url}/inspect/api/traces/${id}`)).body;
};
const rowsOf = (pairing: Json) =>
  pairing.rows.map((row: Json) => [row.change, row.left?.kind, row.left?.path, row.right?.kind, row.right?.path]);

test("a Gemini client's second turn before an Anthropic upstream: each part beside the block it became", async () => {
  anthropic.enqueue({
    kind: "sse",
    frames: turnFrames(
      "anthropic",
      { thought: "I read it.", call: { name: "read_file", args: { file_path: "a" } } },
      0,
    ),
  });
  const first = await postStream(streamUrl("claude-x"), {
    contents: [QUESTION],
    tools: TOOLS,
    systemInstruction: SYSTEM,
  });
  const parts = first.data.flatMap((event: Json) => event.candidates[0].content.parts);
  const call = parts.find((part: Json) => part.functionCall !== undefined);
  anthropic.enqueue({ kind: "sse", frames: turnFrames("anthropic", { thought: "Done.", text: "It says b." }, 1) });
  const result = { functionResponse: { id: call.functionCall.id, name: "read_file", response: { output: "b" } } };
  const second = await postStream(streamUrl("claude-x"), {
    // Gemini CLI's history: the thought parts left out, the signed thinking riding in the call's signature.
    contents: [
      QUESTION,
      { role: "model", parts: parts.filter((part: Json) => part.thought !== true) },
      { role: "user", parts: [result] },
    ],
    tools: TOOLS,
    systemInstruction: SYSTEM,
  });
  expect(second.status).toBe(200);
  const view = await viewOf(second);
  expect([view.request.left.format, view.request.right.format]).toEqual([
    "Gemini generateContent",
    "Anthropic Messages",
  ]);
  expect(rowsOf(view.request)).toEqual([
    ["same", "text", "systemInstruction.parts[0]", "text", "system[0]"],
    ["same", "text", "contents[0].parts[0]", "text", "messages[0].content[0]"],
    // The thinking the client never showed again is read back from the call's signature, at the call's place.
    ["same", "thinking", "contents[1].parts[0]", "thinking", "messages[1].content[0]"],
    ["same", "tool_call", "contents[1].parts[0]", "tool_call", "messages[1].content[1]"],
    ["same", "tool_result", "contents[2].parts[0]", "tool_result", "messages[2].content[0]"],
  ]);
  expect(view.request.rows[2].left.text).toBe("I read it.");
  expect(view.request.left.tools).toEqual(["read_file"]);
  expect(rowsOf(view.response)).toEqual([
    ["changed", "thinking", "content[0]", "thinking", "content[0]"],
    ["same", "text", "content[1]", "text", "content[1]"],
    // The signature-only part a Gemini stream ends with: the client's alone.
    ["removed", "thinking", "content[2]", undefined, undefined],
  ]);
  expect(view.unplaced).toEqual([]);
  // Neither side shows a signature.
  const shown = JSON.stringify([view.request, view.response]);
  expect(shown).not.toContain(turnMarks.anthropicSignature(0));
  expect(shown).not.toContain("parley.v1.");
});

test("an Anthropic client before a Gemini upstream: Google's signature is a block of its own at its part", async () => {
  server.replies.push({
    kind: "json",
    body: geminiAnswer({ thought: "Look.", call: { name: "read_file", args: { file_path: "a" } } }, 0),
  });
  const reply = await postJson(
    `${gateway.url}/v1/messages`,
    {
      model: "gemini-3-pro-preview",
      max_tokens: 100,
      messages: [{ role: "user", content: "Read a." }],
      tools: [{ name: "read_file", input_schema: { type: "object" } }],
    },
    { "anthropic-version": "2023-06-01" },
  );
  expect(reply.status).toBe(200);
  const view = await viewOf(reply);
  expect([view.request.left.format, view.request.right.format]).toEqual([
    "Anthropic Messages",
    "Gemini generateContent",
  ]);
  expect(rowsOf(view.request)).toEqual([["same", "text", "messages[0].content", "text", "contents[0].parts[0]"]]);
  expect(view.request.right.tools).toEqual(["read_file"]);
  expect(view.response.rows.map((row: Json) => [row.left?.kind, row.left?.path, row.right?.path])).toEqual([
    ["thinking", "content[0]", "candidates[0].content.parts[0]"],
    ["thinking", "content[1]", "candidates[0].content.parts[1].thoughtSignature"],
    ["tool_call", "content[2]", "candidates[0].content.parts[1]"],
  ]);
  expect(JSON.stringify([view.request, view.response])).not.toContain(turnMarks.geminiSignature(0));
});
