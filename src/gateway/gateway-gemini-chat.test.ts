import OpenAI from "openai";
import { request } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { readClaudeCodeFixtures } from "../../test/support/claude-code-fixtures.js";
import {
  anthropicContentFromEvents,
  type Json,
  postJson,
  postStream,
  startTestGateway,
} from "../../test/support/gateway-harness.js";
import {
  chatCallId,
  type GeminiChatServer,
  type GeminiChatTurn,
  geminiChatServer,
  playTurns,
} from "../../test/support/gemini-openai-server.js";
import { actAsGemini, type GeminiServer, SKIP } from "../../test/support/gemini-server.js";
import { type ScriptedTurn, turnFrames, turnMarks } from "../../test/support/scripted-turns.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * Gemini 3 behind the Chat path: Google's OpenAI-compatible endpoints (scripted as Google's servers behave,
 * `test/support/gemini-openai-server.ts`: signatures in `extra_content`, the first of parallel calls signed, calls
 * streamed without `index`, a text's signature on a last delta of its own, and a 400 for a current turn's call that
 * lost its signature). An Anthropic client shaped as Claude Code and a Chat client (the OpenAI SDK) each run a
 * three-turn tool loop through Parley: the endpoint gets its own signatures back byte for byte on the calls they rode
 * on, turn after turn, and never another endpoint's (the Gemini API's and Vertex AI's are distinct origins). A Chat
 * client on a native Gemini provider gets Google's signatures where Google's endpoint puts them, and brings them back.
 */

const TURNS: GeminiChatTurn[] = [
  {
    text: "I'll read both notes.",
    calls: [
      { name: "Read", args: { file_path: "/home/user/project/a.txt" } },
      { name: "Read", args: { file_path: "/home/user/project/b.txt" } },
    ],
  },
  { calls: [{ name: "Bash", args: { command: "echo done", description: "Print done" } }] },
  { text: "Both notes say hello, and the command printed done." },
];

/** What each endpoint signed: the first call of each tool turn. */
const signatureOf = (server: GeminiChatServer, turn: number) =>
  [...server.issued].find((signature) => signature.endsWith(`turn${turn}/call0==`));

let googleUpstream: ScriptedUpstream;
let vertexUpstream: ScriptedUpstream;
let nativeUpstream: ScriptedUpstream;
let google: GeminiChatServer;
let vertex: GeminiChatServer;
let native: GeminiServer;
let gateway: RunningGateway;

beforeAll(async () => {
  googleUpstream = await startScriptedUpstream("openai");
  vertexUpstream = await startScriptedUpstream("openai");
  nativeUpstream = await startScriptedUpstream("gemini");
  google = geminiChatServer("google", "google-key");
  vertex = geminiChatServer("vertex", "vertex-token");
  playTurns(googleUpstream, google, TURNS);
  playTurns(vertexUpstream, vertex, TURNS);
  native = { replies: [] };
  actAsGemini(nativeUpstream, native);
  gateway = await startTestGateway({
    providers: {
      "google-chat": { upstream: googleUpstream, type: "openai", preset: "gemini-openai", apiKey: "google-key" },
      "vertex-chat": { upstream: vertexUpstream, type: "openai", preset: "vertex-openai", apiKey: "vertex-token" },
      // Google's endpoint behind a URL Parley knows nothing of, and no preset: signatures are not its to carry.
      unknown: { upstream: googleUpstream, type: "openai", apiKey: "google-key" },
      native: { upstream: nativeUpstream, type: "gemini" },
    },
    routes: [
      { match: "gemini-chat-*", provider: "google-chat", model: "gemini-3-pro-preview" },
      { match: "vertex-chat-*", provider: "vertex-chat", model: "gemini-3-pro-preview" },
      { match: "unknown-*", provider: "unknown", model: "gemini-3-pro-preview" },
      { match: "native-*", provider: "native", model: "gemini-3-pro-preview" },
    ],
  });
});

afterAll(async () => {
  await gateway.close();
  await googleUpstream.close();
  await vertexUpstream.close();
  await nativeUpstream.close();
});

beforeEach(() => {
  google.refused.length = 0;
  vertex.refused.length = 0;
  googleUpstream.requests.length = 0;
  vertexUpstream.requests.length = 0;
  nativeUpstream.requests.length = 0;
});

const sent = (upstream: ScriptedUpstream): Json[] => upstream.requests.map((recorded) => recorded.body);
const lossyCodes = (headers: Record<string, unknown>): string[] =>
  (JSON.parse(String(headers["x-parley-lossy"] ?? "[]")) as Array<{ code: string }>).map((entry) => entry.code);

/** Each assistant message's calls as the upstream got them: id and the `extra_content` it carried. */
const callsSent = (body: Json) =>
  (body.messages as Json[])
    .filter((message) => message.role === "assistant" && message.tool_calls !== undefined)
    .map((message) => message.tool_calls.map((call: Json) => [call.id, call.extra_content]));

/** The newest Claude Code release's recorded first request, its history growing turn by turn. */
const claudeCode = readClaudeCodeFixtures().at(-1)!;

async function claudeCodeLoop(models: readonly string[], stream: boolean) {
  const messages: Json[] = [...(claudeCode.body.messages as Json[])];
  const lossy: string[][] = [];
  for (const [turn, model] of models.entries()) {
    const body = { ...claudeCode.body, model, stream, messages };
    const url = `${gateway.url}${claudeCode.path}`;
    const reply: Json = stream
      ? await postStream(url, body, claudeCode.headers)
      : await postJson(url, body, claudeCode.headers);
    expect(reply.status, `turn ${turn}: ${reply.text.slice(0, 400)}`).toBe(200);
    lossy.push(lossyCodes(reply.headers));
    const content: Json[] = stream ? anthropicContentFromEvents(reply.data) : reply.body.content;
    messages.push({ role: "assistant", content });
    const uses = content.filter((block) => block.type === "tool_use");
    if (uses.length === 0) break;
    messages.push({
      role: "user",
      content: uses.map((use) => ({ type: "tool_result", tool_use_id: use.id, content: `${use.name} ran` })),
    });
  }
  return { messages, lossy };
}

/** The OpenAI SDK's loop: each answer's message sent back as the SDK gives it, then a `tool` message per call. */
async function chatLoop(model: string, stream: boolean) {
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const tools = ["Read", "Bash"].map((name) => ({
    type: "function" as const,
    function: { name, parameters: { type: "object", properties: {} } },
  }));
  const messages: Json[] = [{ role: "user", content: "Read a.txt and b.txt, then run `echo done`." }];
  const answers: Json[] = [];
  for (let turn = 0; turn < 3; turn++) {
    const params = { model, messages, tools };
    const completion = stream
      ? await client.chat.completions.stream(params).finalChatCompletion()
      : await client.chat.completions.create(params);
    const message = completion.choices[0]!.message as Json;
    answers.push(message);
    messages.push(message);
    const calls = (message.tool_calls ?? []) as Json[];
    if (calls.length === 0) break;
    for (const call of calls)
      messages.push({ role: "tool", tool_call_id: call.id, content: `${call.function.name} ran` });
  }
  return { messages, answers };
}

/** What every request to a Google endpoint must hold: its own signatures, as it gave them, on their calls only. */
function expectOwnSignaturesBack(upstream: ScriptedUpstream, server: GeminiChatServer) {
  expect(server.refused.map((refusal) => refusal.message)).toEqual([]);
  const bodies = sent(upstream);
  expect(bodies).toHaveLength(3);
  const key = server.signatureKey;
  const signed = (turn: number) => ({ [key]: { thought_signature: signatureOf(server, turn) } });
  expect(callsSent(bodies[1])).toEqual([
    [
      [chatCallId(0, 0), signed(0)],
      [chatCallId(0, 1), undefined],
    ],
  ]);
  expect(callsSent(bodies[2])).toEqual([
    [
      [chatCallId(0, 0), signed(0)],
      [chatCallId(0, 1), undefined],
    ],
    [[chatCallId(1, 0), signed(1)]],
  ]);
  for (const body of bodies) {
    const text = JSON.stringify(body);
    expect(text).not.toContain("parley.v1.");
    expect(text).not.toContain(SKIP);
    expect(text).not.toContain(key === "google" ? "vertex" : "google");
    for (const field of ["store", "metadata", "reasoning_content", "reasoning"])
      expect(JSON.stringify(Object.keys(body)) + JSON.stringify(body.messages.map(Object.keys))).not.toContain(
        `"${field}"`,
      );
  }
}

describe("an Anthropic client shaped as Claude Code, on Google's OpenAI-compatible endpoint", () => {
  test.each([true, false])("stream %s: three turns, each call's signature back byte for byte", async (stream) => {
    const { messages, lossy } = await claudeCodeLoop(["gemini-chat-3", "gemini-chat-3", "gemini-chat-3"], stream);
    expectOwnSignaturesBack(googleUpstream, google);
    // The client kept each signature as the thinking block before its call; nothing was lost on the way.
    const first = messages.at(-5)!.content as Json[];
    expect(first.map((block) => block.type)).toEqual(["text", "thinking", "tool_use", "tool_use"]);
    expect(first[1].signature).toMatch(/^parley\.v1\./);
    expect((messages.at(-1)!.content as Json[]).find((block) => block.type === "text").text).toBe(TURNS[2]!.text);
    for (const codes of lossy) expect(codes.filter((code) => code.startsWith("thought-signature"))).toEqual([]);
    // `reasoning_effort` is how Gemini's thinking is switched there.
    expect(sent(googleUpstream)[0].reasoning_effort).toBeDefined();
  });

  test("Vertex AI's endpoint: its signatures under `vertex`", async () => {
    await claudeCodeLoop(["vertex-chat-3", "vertex-chat-3", "vertex-chat-3"], true);
    expectOwnSignaturesBack(vertexUpstream, vertex);
  });

  test("a conversation moved from the Gemini API to Vertex AI: the Gemini API's signature never reaches Vertex AI", async () => {
    const { lossy } = await claudeCodeLoop(["gemini-chat-3", "vertex-chat-3", "vertex-chat-3"], true);
    const googleSigned = signatureOf(google, 0)!;
    for (const body of sent(vertexUpstream)) {
      expect(JSON.stringify(body)).not.toContain(googleSigned);
      expect(JSON.stringify(body)).not.toContain('"google"');
    }
    // The turn Vertex AI did not sign goes with Google's skip value, said; its own turn with its own signature.
    expect(callsSent(sent(vertexUpstream).at(-1))).toEqual([
      [
        [chatCallId(0, 0), { vertex: { thought_signature: SKIP } }],
        [chatCallId(0, 1), undefined],
      ],
      [[chatCallId(1, 0), { vertex: { thought_signature: signatureOf(vertex, 1) } }]],
    ]);
    expect(lossy[1]).toEqual(expect.arrayContaining(["thought-signature-dropped", "thought-signature-skipped"]));
  });
});

describe("a Chat client (the OpenAI SDK)", () => {
  test.each([true, false])(
    "stream %s, on Google's endpoint: signatures in `extra_content`, back on their calls",
    async (stream) => {
      const { answers } = await chatLoop("gemini-chat-3", stream);
      expectOwnSignaturesBack(googleUpstream, google);
      const envelope = (extra: Json) => extra?.google?.thought_signature as string | undefined;
      expect(envelope(answers[0].tool_calls[0].extra_content)).toMatch(/^parley\.v1\./);
      expect(answers[0].tool_calls[1].extra_content).toBeUndefined();
      expect(answers[0].content).toBe(TURNS[0]!.text);
      // A text answer's signature on the message, where Google's endpoint puts it.
      expect(envelope(answers[2].extra_content)).toMatch(/^parley\.v1\./);
      expect(answers[2].content).toBe(TURNS[2]!.text);
    },
  );

  test.each([true, false])(
    "stream %s, on a native Gemini provider: Google's signatures in `extra_content` too",
    async (stream) => {
      const script: ScriptedTurn[] = [
        { thought: "Read first.", call: { name: "Read", args: { file_path: "a.txt" } } },
        { thought: "Now run it.", call: { name: "Bash", args: { command: "echo done" } } },
        { thought: "Done.", text: "Both ran." },
      ];
      const refuseOrReply = nativeUpstream.fallback!;
      nativeUpstream.fallback = (recorded) => {
        const contents = ((recorded.body as Json).contents ?? []) as Json[];
        const index = Math.min(contents.filter((content) => content.role === "model").length, script.length - 1);
        native.replies = [
          stream
            ? { kind: "sse", frames: turnFrames("gemini", script[index]!, index) }
            : { kind: "json", body: geminiWhole(script[index]!, index) },
        ];
        return refuseOrReply(recorded);
      };
      try {
        const { answers } = await chatLoop("native-3", stream);
        expect(answers).toHaveLength(3);
        expect(answers[0].tool_calls[0].extra_content.google.thought_signature).toMatch(/^parley\.v1\./);
        const last = sent(nativeUpstream).at(-1)!;
        const calls = (last.contents as Json[])
          .filter((content) => content.role === "model")
          .flatMap((content) => content.parts as Json[])
          .filter((part) => part.functionCall !== undefined);
        expect(calls.map((part) => part.thoughtSignature)).toEqual([
          turnMarks.geminiSignature(0),
          turnMarks.geminiSignature(1),
        ]);
        expect(JSON.stringify(last)).not.toContain("parley.v1.");
        expect(JSON.stringify(last)).not.toContain(SKIP);
      } finally {
        nativeUpstream.fallback = refuseOrReply;
      }
    },
  );
});

describe("a Gemini client (Gemini CLI's shape)", () => {
  test("three turns on Google's OpenAI endpoint: each signature rides on its call, and goes back on it", async () => {
    const url = `${gateway.url}/v1beta/models/gemini-chat-3:streamGenerateContent?alt=sse`;
    const tools = [
      {
        functionDeclarations: ["Read", "Bash"].map((name) => ({ name, parametersJsonSchema: { type: "object" } })),
      },
    ];
    const contents: Json[] = [{ role: "user", parts: [{ text: "Read a.txt and b.txt, then run `echo done`." }] }];
    for (let turn = 0; turn < 3; turn++) {
      const reply: Json = await postStream(url, { contents, tools });
      expect(reply.status, reply.text.slice(0, 400)).toBe(200);
      const parts = (reply.data as Json[]).flatMap((event) => event.candidates?.[0]?.content?.parts ?? []);
      // Gemini CLI keeps everything but the thoughts.
      contents.push({ role: "model", parts: parts.filter((part: Json) => part.thought !== true) });
      const calls = parts.filter((part: Json) => part.functionCall !== undefined);
      if (turn === 0) {
        expect(calls.map((part: Json) => part.thoughtSignature !== undefined)).toEqual([true, false]);
        expect(calls[0].thoughtSignature).toMatch(/^parley\.v1\./);
      }
      if (calls.length === 0) break;
      contents.push({
        role: "user",
        parts: calls.map((part: Json) => ({
          functionResponse: { id: part.functionCall.id, name: part.functionCall.name, response: { output: "ran" } },
        })),
      });
    }
    expectOwnSignaturesBack(googleUpstream, google);
  });
});

describe("the scripted endpoint refuses as Google's does", () => {
  const history = (signature?: Json) => ({
    model: "gemini-3-pro-preview",
    messages: [
      { role: "user", content: "Read a.txt." },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "function-call-0-0",
            type: "function",
            function: { name: "Read", arguments: "{}" },
            ...(signature === undefined ? {} : { extra_content: signature }),
          },
        ],
      },
      { role: "tool", tool_call_id: "function-call-0-0", content: "hello" },
    ],
  });
  const post = async (body: unknown, key = "google-key") => {
    const reply = await request(`${googleUpstream.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    return { status: reply.statusCode, body: (await reply.body.json()) as Json };
  };

  test("a current turn's call without its signature, one it did not issue, a field it does not know", async () => {
    const missing = await post(history());
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual([
      {
        error: {
          code: 400,
          message: expect.stringMatching(
            /^Function call is missing a thought_signature in functionCall parts\..* position 2\./,
          ),
          status: "INVALID_ARGUMENT",
        },
      },
    ]);
    const foreign = await post(
      history({ google: { thought_signature: signatureOf(vertex, 0) ?? "CiQBvsig+other==" } }),
    );
    expect(foreign.body[0].error.message).toBe("Corrupted thought signature.");
    const store = await post({ ...history({ google: { thought_signature: SKIP } }), store: false });
    expect(store.body[0].error.message).toBe('Invalid JSON payload received. Unknown name "store": Cannot find field.');
  });

  test("through Parley to that endpoint without its preset, the refusal reaches the client in the client's shape", async () => {
    const reply: Json = await postJson(`${gateway.url}/v1/chat/completions`, {
      ...history({ google: { thought_signature: "CiQB-not-issued==" } }),
      model: "unknown-3",
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toContain("Function call is missing a thought_signature");
    expect(reply.body.error.type).toBe("invalid_request_error");
  });
});

describe("a signature Google's endpoint refuses is resent once as text", () => {
  test("a client's signature the endpoint did not issue: refused, sent again without it, answered, reported", async () => {
    const body = {
      model: "gemini-chat-3",
      messages: [
        { role: "user", content: "Read a.txt." },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "function-call-0-0",
              type: "function",
              function: { name: "Read", arguments: "{}" },
              extra_content: { google: { thought_signature: "CiQB-not-issued==" } },
            },
          ],
        },
        { role: "tool", tool_call_id: "function-call-0-0", content: "hello" },
      ],
    };
    const reply: Json = await postJson(`${gateway.url}/v1/chat/completions`, body);
    expect(reply.status, reply.text.slice(0, 400)).toBe(200);
    expect(lossyCodes(reply.headers)).toContain("reasoning-refused-resent");
    expect(google.refused.map((refusal) => refusal.message)).toEqual(["Corrupted thought signature."]);
    const [first, second] = sent(googleUpstream);
    expect(callsSent(first!)[0]![0]![1]).toEqual({ google: { thought_signature: "CiQB-not-issued==" } });
    expect(JSON.stringify(second)).not.toContain("CiQB-not-issued==");
    expect(sent(googleUpstream)).toHaveLength(2);
  });
});

/** A native Gemini answer whole (the scripted turn's), as `generateContent` gives it. */
function geminiWhole(turn: ScriptedTurn, index: number): Json {
  const frames = turnFrames("gemini", turn, index).map((frame) => JSON.parse(frame.slice("data: ".length)) as Json);
  const parts = frames.flatMap((frame) => frame.candidates[0].content.parts as Json[]);
  const last = frames.at(-1)!;
  return { ...last, candidates: [{ ...last.candidates[0], content: { role: "model", parts } }] };
}
