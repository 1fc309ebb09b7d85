import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import {
  type Json,
  postJson,
  postStream,
  type StreamReply,
  startTestGateway,
} from "../../test/support/gateway-harness.js";
import { type ScriptedTurn, turnFrames, turnMarks } from "../../test/support/scripted-turns.js";
import {
  type ScriptedUpstream,
  startScriptedUpstream,
  type UpstreamKind,
} from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * A Gemini client (plain fetch, shaped as Gemini CLI sends it) in front of an Anthropic upstream and a Responses
 * upstream, over a tool loop: the request's settings reach each API's own fields, each upstream's reasoning rides to
 * the client in the signature of the call it kept (the thought parts it drops), and comes back to its maker whole.
 */

const KEY = "parley-key";
let anthropic: ScriptedUpstream;
let responses: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  anthropic = await startScriptedUpstream("anthropic");
  responses = await startScriptedUpstream("openai-responses");
  gateway = await startTestGateway({
    providers: {
      claude: { upstream: anthropic, type: "anthropic" },
      openai: { upstream: responses, type: "openai-responses" },
    },
    defaultProvider: "claude",
    routes: [{ match: "gpt-*", provider: "openai" }],
    apiKeys: [KEY],
  });
});

afterAll(async () => {
  await gateway.close();
  await anthropic.close();
  await responses.close();
});

beforeEach(() => {
  anthropic.requests.length = 0;
  responses.requests.length = 0;
});

const auth = { "x-goog-api-key": KEY };
const streamUrl = (model: string) => `${gateway.url}/v1beta/models/${model}:streamGenerateContent?alt=sse`;
const generate = (model: string) => `${gateway.url}/v1beta/models/${model}:generateContent`;

const tools = [
  {
    functionDeclarations: [
      {
        name: "read_file",
        description: "Read a file",
        parametersJsonSchema: {
          type: "object",
          properties: { file_path: { type: "string" } },
          required: ["file_path"],
          additionalProperties: false,
        },
      },
    ],
  },
];
const question = { role: "user", parts: [{ text: "What does notes.txt say?" }] };
const CALL: ScriptedTurn = {
  thought: "I read it first.",
  call: { name: "read_file", args: { file_path: "notes.txt" } },
};
const FINAL: ScriptedTurn = { thought: "It says parsnip.", text: "The notes say parsnip." };

/** The parts of a streamed Gemini answer, in order. */
const streamedParts = (reply: StreamReply): Json[] =>
  reply.data.flatMap((event: Json) => event.candidates?.[0]?.content?.parts ?? []);

/** Two streamed turns: what the client sees, and the model content it keeps (thoughts dropped). */
async function toolLoop(upstream: ScriptedUpstream, kind: UpstreamKind, model: string) {
  upstream.enqueue(
    { kind: "sse", frames: turnFrames(kind, CALL, 0) },
    { kind: "sse", frames: turnFrames(kind, FINAL, 1) },
  );
  const settings = {
    systemInstruction: { parts: [{ text: "You are a careful agent." }] },
    tools,
    generationConfig: {
      maxOutputTokens: 4000,
      stopSequences: ["END"],
      thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 },
    },
  };
  const first = await postStream(streamUrl(model), { contents: [question], ...settings }, auth);
  expect(first.status).toBe(200);
  const parts = streamedParts(first);
  expect(parts.filter((part) => part.thought === true).map((part) => part.text)).toEqual([CALL.thought]);
  const call = parts.find((part) => part.functionCall !== undefined);
  expect(call.functionCall).toMatchObject({ name: "read_file", args: { file_path: "notes.txt" } });
  expect(call.thoughtSignature).toMatch(/^parley\.v1\./);
  expect((first.data.at(-1) as Json).candidates[0].finishReason).toBe("STOP");
  const kept = { role: "model", parts: parts.filter((part) => part.thought !== true) };
  const result = {
    role: "user",
    parts: [
      {
        functionResponse: {
          id: call.functionCall.id,
          name: "read_file",
          response: { output: "The word is parsnip." },
        },
      },
    ],
  };
  const second = await postStream(streamUrl(model), { contents: [question, kept, result], ...settings }, auth);
  expect(second.status).toBe(200);
  const answer = streamedParts(second);
  expect(
    answer
      .filter((part) => part.thought !== true)
      .map((part) => part.text ?? "")
      .join(""),
  ).toBe(FINAL.text);
  expect((second.data.at(-1) as Json).candidates[0].finishReason).toBe("STOP");
  expect(second.data.at(-1)!.usageMetadata).toMatchObject({ promptTokenCount: 101, candidatesTokenCount: 20 });
  return { first: upstream.requests[0]!.body as Json, second: upstream.requests[1]!.body as Json };
}

describe("a Gemini client on an Anthropic upstream", () => {
  test("a tool loop: settings in Anthropic's fields, the signed thinking back on its turn exactly", async () => {
    const { first, second } = await toolLoop(anthropic, "anthropic", "claude-sonnet-5");
    expect(first).toMatchObject({
      model: "claude-sonnet-5",
      max_tokens: 4000,
      stop_sequences: ["END"],
      stream: true,
      thinking: { type: "enabled", budget_tokens: 2048 },
    });
    expect(JSON.stringify(first.system)).toContain("You are a careful agent.");
    expect(first.tools).toEqual([
      {
        name: "read_file",
        description: "Read a file",
        input_schema: tools[0]!.functionDeclarations[0]!.parametersJsonSchema,
      },
    ]);
    expect(second.messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: CALL.thought, signature: turnMarks.anthropicSignature(0) },
          { type: "tool_use", id: "toolu_turn_0", name: "read_file", input: { file_path: "notes.txt" } },
        ],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_turn_0", content: "The word is parsnip." }],
      },
    ]);
  });

  test("a cut answer is MAX_TOKENS, and Anthropic's error reaches the client in Gemini's shape", async () => {
    anthropic.enqueue(
      {
        kind: "json",
        body: {
          id: "msg_cut",
          type: "message",
          role: "assistant",
          model: "claude-sonnet-5",
          content: [{ type: "text", text: "The notes say" }],
          stop_reason: "max_tokens",
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 3 },
        },
      },
      {
        kind: "error",
        status: 400,
        body: { type: "error", error: { type: "invalid_request_error", message: "prompt is too long" } },
      },
    );
    const body = { contents: [question], generationConfig: { maxOutputTokens: 3 } };
    const cut: Json = await postJson(generate("claude-sonnet-5"), body, auth);
    expect(cut.status).toBe(200);
    expect(cut.body.candidates[0].finishReason).toBe("MAX_TOKENS");
    const refused: Json = await postJson(generate("claude-sonnet-5"), body, auth);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      error: { code: 400, message: expect.stringContaining("prompt is too long"), status: "INVALID_ARGUMENT" },
    });
  });
});

describe("a Gemini client on a Responses upstream", () => {
  test("a tool loop: the reasoning item back as its maker made it, the call's output in its place", async () => {
    const { first, second } = await toolLoop(responses, "openai-responses", "gpt-5.5");
    expect(first).toMatchObject({
      model: "gpt-5.5",
      max_output_tokens: 4000,
      stream: true,
      store: false,
      include: ["reasoning.encrypted_content"],
    });
    expect(first.tools).toEqual([
      expect.objectContaining({
        type: "function",
        name: "read_file",
        parameters: tools[0]!.functionDeclarations[0]!.parametersJsonSchema,
      }),
    ]);
    const input = second.input as Json[];
    const at = input.findIndex((item) => item.type === "reasoning");
    expect(input.slice(at)).toEqual([
      {
        id: "rs_turn_0",
        type: "reasoning",
        summary: [{ type: "summary_text", text: CALL.thought }],
        encrypted_content: turnMarks.encryptedContent(0),
      },
      expect.objectContaining({
        type: "function_call",
        call_id: turnMarks.callId(0),
        name: "read_file",
        arguments: JSON.stringify({ file_path: "notes.txt" }),
      }),
      { type: "function_call_output", call_id: turnMarks.callId(0), output: "The word is parsnip." },
    ]);
  });
});
