import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import {
  anthropicContentFromEvents,
  getJson as getReply,
  type Json,
  postJson as postReply,
  postStream as postStreamReply,
  startTestGateway,
} from "../../test/support/gateway-harness.js";
import { actAsGemini, type GeminiServer, geminiFrames, SKIP } from "../../test/support/gemini-server.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * Gemini on both sides: a Gemini client (plain fetch, as Gemini CLI and the SDK send it) through Parley to a Chat
 * upstream and to a Gemini upstream, and an Anthropic client to a Gemini upstream, each over a tool loop of several
 * turns. The scripted Gemini refuses what Google's server refuses (`test/support/gemini-server.ts`), a current
 * turn's function call without its signature included.
 */
const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../test/fixtures/gemini/${name}`, import.meta.url), "utf8"));
const toolCallAnswer = fixture("gemini-3-tool-call-signed.json");
const finalAnswer = fixture("gemini-3-final-text-signed.json");
const SIG_CALL = toolCallAnswer.candidates[0].content.parts[1].thoughtSignature as string;
const SIG_TEXT = finalAnswer.candidates[0].content.parts[0].thoughtSignature as string;

const KEY = "parley-key";
let chat: ScriptedUpstream;
let gemini: ScriptedUpstream;
let server: GeminiServer;
let gateway: RunningGateway;

beforeAll(async () => {
  chat = await startScriptedUpstream("openai");
  gemini = await startScriptedUpstream("gemini");
  server = { replies: [], key: "google-key" };
  actAsGemini(gemini, server);
  gemini.otherRoutes = (request) =>
    request.method === "GET" && request.path.startsWith("/v1beta/models")
      ? { kind: "json", body: fixture("models.json") }
      : undefined;
  gateway = await startTestGateway({
    providers: {
      chat: { upstream: chat, type: "openai", defaultModel: "qwen3" },
      google: { upstream: gemini, type: "gemini", apiKey: "google-key" },
    },
    defaultProvider: "chat",
    routes: [{ match: "gemini-*", provider: "google" }],
    apiKeys: [KEY],
  });
  await gateway.discovery;
});

afterAll(async () => {
  await gateway.close();
  await chat.close();
  await gemini.close();
});

beforeEach(() => {
  chat.requests.length = 0;
  gemini.requests.length = 0;
  server.replies.length = 0;
});

/** The replies as the assertions walk them. */
const postJson = (url: string, body: unknown, headers?: Record<string, string>): Promise<Json> =>
  postReply(url, body, headers);
const postStream = (url: string, body: unknown, headers?: Record<string, string>): Promise<Json> =>
  postStreamReply(url, body, headers);
const getJson = (url: string, headers?: Record<string, string>): Promise<Json> => getReply(url, headers);
const sentBody = (upstream: ScriptedUpstream, index: number): Json => upstream.requests[index]!.body;

const generate = (model: string) => `${gateway.url}/v1beta/models/${model}:generateContent`;
const streamUrl = (model: string) => `${gateway.url}/v1beta/models/${model}:streamGenerateContent?alt=sse`;
const auth = { "x-goog-api-key": KEY };

/** What Gemini CLI keeps of a model content for its history: everything but the thoughts. */
const kept = (content: Json) => ({ role: "model", parts: content.parts.filter((part: Json) => part.thought !== true) });

const tools = [
  {
    functionDeclarations: [
      {
        name: "list_directory",
        description: "List a directory",
        parametersJsonSchema: { type: "object", properties: { path: { type: "string" } }, additionalProperties: false },
      },
      {
        name: "read_file",
        parametersJsonSchema: {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          properties: { path: { type: "string" } },
        },
      },
    ],
  },
];

describe("a Gemini client", () => {
  test("authenticates with x-goog-api-key or ?key=, and gets Gemini's error shape without one", async () => {
    const body = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
    const none = await postJson(generate("qwen3"), body);
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: { code: 401, message: expect.any(String), status: "UNAUTHENTICATED" } });
    chat.enqueue({ kind: "json", body: chatAnswer("Hello!") }, { kind: "json", body: chatAnswer("Hello again!") });
    expect((await postJson(`${generate("qwen3")}?key=${KEY}`, body)).status).toBe(200);
    const reply = await postJson(generate("qwen3"), body, auth);
    expect(reply.body.candidates[0].content).toEqual({ role: "model", parts: [{ text: "Hello again!" }] });
    // The client's key never reaches the upstream.
    expect(JSON.stringify(chat.requests.map((request) => request.headers))).not.toContain(KEY);
    const unknown = await getJson(`${gateway.url}/v1beta/tunedModels`, auth);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.status).toBe("NOT_FOUND");
  });

  test("to a Chat upstream, streamed: text and a call as Gemini's SSE, the call's answer back in the next turn", async () => {
    chat.enqueue({
      kind: "sse",
      frames: openaiFrames([
        {
          id: "c1",
          object: "chat.completion.chunk",
          model: "qwen3",
          choices: [{ index: 0, delta: { role: "assistant", reasoning_content: "Look first." } }],
        },
        {
          id: "c1",
          object: "chat.completion.chunk",
          model: "qwen3",
          choices: [{ index: 0, delta: { content: "Listing." } }],
        },
        {
          id: "c1",
          object: "chat.completion.chunk",
          model: "qwen3",
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [
                  {
                    index: 0,
                    id: "call_9",
                    type: "function",
                    function: { name: "list_directory", arguments: '{"path":"."}' },
                  },
                ],
              },
            },
          ],
        },
        {
          id: "c1",
          object: "chat.completion.chunk",
          model: "qwen3",
          choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        },
      ]),
    });
    const question = { role: "user", parts: [{ text: "What is here?" }] };
    const reply = await postStream(streamUrl("qwen3"), { contents: [question], tools }, auth);
    expect(reply.status).toBe(200);
    const parts = reply.data.flatMap((event: Json) => event.candidates[0].content.parts);
    expect(parts.filter((part: Json) => part.thought === true).map((part: Json) => part.text)).toEqual(["Look first."]);
    const call = parts.find((part: Json) => part.functionCall !== undefined);
    expect(call.functionCall).toEqual({ id: "call_9", name: "list_directory", args: { path: "." } });
    // The reasoning the Chat model must see again rides in the call's signature.
    expect(call.thoughtSignature).toMatch(/^parley\.v1\./);
    expect(reply.data.at(-1)!.candidates[0].finishReason).toBe("STOP");
    expect(reply.data.at(-1)!.usageMetadata).toMatchObject({ promptTokenCount: 10, candidatesTokenCount: 5 });
    expect(sentBody(chat, 0).tools[0].function.parameters).toMatchObject({ additionalProperties: false });

    chat.enqueue({ kind: "json", body: chatAnswer("README.md and src/.") });
    const model = {
      role: "model",
      parts: parts.filter((part: Json) => part.thought !== true && (part.text !== "" || part.thoughtSignature)),
    };
    const next = await postJson(
      generate("qwen3"),
      {
        contents: [
          question,
          model,
          {
            role: "user",
            parts: [
              { functionResponse: { id: "call_9", name: "list_directory", response: { output: "README.md src" } } },
            ],
          },
        ],
        tools,
      },
      auth,
    );
    expect(next.status).toBe(200);
    const messages = sentBody(chat, 1).messages;
    expect(messages[1]).toMatchObject({
      role: "assistant",
      tool_calls: [{ id: "call_9", function: { name: "list_directory", arguments: '{"path":"."}' } }],
    });
    expect(JSON.stringify(messages[1])).toContain("Look first.");
    expect(messages[2]).toEqual({ role: "tool", tool_call_id: "call_9", content: "README.md src" });
  });

  for (const streamed of [false, true]) {
    test(`to a Gemini upstream${streamed ? ", streamed" : ""}: a tool loop keeps its signatures turn after turn`, async () => {
      const reply = (answer: Json) =>
        streamed ? { kind: "sse" as const, frames: geminiFrames(answer) } : { kind: "json" as const, body: answer };
      server.replies.push(reply(toolCallAnswer), reply(finalAnswer));
      const question = { role: "user", parts: [{ text: "Describe the repository." }] };
      const send = (contents: Json[]) =>
        streamed
          ? postStream(streamUrl("gemini-3-pro-preview"), { contents, tools }, auth)
          : postJson(generate("gemini-3-pro-preview"), { contents, tools }, auth);
      const first = await send([question]);
      expect(first.status).toBe(200);
      const content = streamed
        ? { role: "model", parts: (first as Json).data.flatMap((event: Json) => event.candidates[0].content.parts) }
        : first.body.candidates[0].content;
      expect(gemini.requests[0]!.path).toBe(
        `/v1beta/models/gemini-3-pro-preview:${streamed ? "streamGenerateContent?alt=sse" : "generateContent"}`,
      );
      expect(gemini.requests[0]!.headers["x-goog-api-key"]).toBe("google-key");
      const calls = content.parts.filter((part: Json) => part.functionCall !== undefined);
      expect(calls.map((part: Json) => part.functionCall.name)).toEqual(["list_directory", "read_file"]);
      const results = {
        role: "user",
        parts: calls.map((part: Json) => ({
          functionResponse: { id: part.functionCall.id, name: part.functionCall.name, response: { output: "..." } },
        })),
      };
      const second = await send([question, kept(content), results]);
      expect(second.status).toBe(200);
      // Google's own signature went back on exactly the call that carried it; the parallel call stays unsigned.
      const sent = sentBody(gemini, 1).contents[1].parts;
      expect(sent.map((part: Json) => part.thoughtSignature)).toEqual([SIG_CALL, undefined]);
      expect(JSON.stringify(sentBody(gemini, 1))).not.toContain("parley.v1.");
      const text = streamed
        ? { role: "model", parts: (second as Json).data.flatMap((event: Json) => event.candidates[0].content.parts) }
        : second.body.candidates[0].content;
      // A third turn: the earlier turns' signatures still go back as they came.
      server.replies.push(reply(finalAnswer));
      const third = await send([
        question,
        kept(content),
        results,
        kept(text),
        { role: "user", parts: [{ text: "Thanks" }] },
      ]);
      expect(third.status).toBe(200);
      const history = sentBody(gemini, 2).contents;
      expect(history[1].parts[0].thoughtSignature).toBe(SIG_CALL);
      expect(history[3].parts.map((part: Json) => part.thoughtSignature).filter(Boolean)).toEqual([SIG_TEXT]);
      expect(history[3].parts.map((part: Json) => part.text ?? "").join("")).toBe(
        finalAnswer.candidates[0].content.parts[0].text,
      );
    });
  }

  test("countTokens and the model list answer in Gemini's shapes, with the limits Google lists", async () => {
    const count = await postJson(
      `${gateway.url}/v1beta/models/gemini-3-pro-preview:countTokens`,
      { contents: [{ role: "user", parts: [{ text: "How many tokens is this?" }] }] },
      auth,
    );
    expect(count.status).toBe(200);
    expect(count.body.totalTokens).toBeGreaterThan(0);
    const list = await getJson(`${gateway.url}/v1beta/models`, auth);
    expect(list.status).toBe(200);
    const listed = list.body.models.find((model: Json) => model.name === "models/gemini-3-pro-preview");
    expect(listed).toMatchObject({ inputTokenLimit: 1048576, outputTokenLimit: 65536 });
    expect(list.body.models.some((model: Json) => model.name.includes("embedding"))).toBe(false);
  });
});

describe("an Anthropic client on a Gemini upstream", () => {
  test("a tool loop: Gemini's signature rides in a thinking block and goes back on its call", async () => {
    server.replies.push({ kind: "json", body: toolCallAnswer }, { kind: "json", body: finalAnswer });
    const messages: Json[] = [{ role: "user", content: "Describe the repository." }];
    const first = await postJson(
      `${gateway.url}/v1/messages`,
      { model: "gemini-3-pro-preview", max_tokens: 4096, messages, tools: anthropicTools },
      { "x-api-key": KEY, "anthropic-version": "2023-06-01" },
    );
    expect(first.status).toBe(200);
    const content = first.body.content as Json[];
    expect(content.map((block) => block.type)).toEqual(["thinking", "thinking", "tool_use", "tool_use"]);
    expect(first.body.stop_reason).toBe("tool_use");
    expect(content.every((block) => block.type !== "thinking" || typeof block.signature === "string")).toBe(true);
    const uses = content.filter((block) => block.type === "tool_use");
    messages.push(
      { role: "assistant", content },
      { role: "user", content: uses.map((use) => ({ type: "tool_result", tool_use_id: use.id, content: "..." })) },
    );
    const second = await postJson(
      `${gateway.url}/v1/messages`,
      { model: "gemini-3-pro-preview", max_tokens: 4096, messages, tools: anthropicTools, stream: true },
      { "x-api-key": KEY, "anthropic-version": "2023-06-01" },
    );
    expect(second.status).toBe(200);
    const sent = sentBody(gemini, 1).contents[1].parts;
    expect(sent.filter((part: Json) => part.functionCall).map((part: Json) => part.thoughtSignature)).toEqual([
      SIG_CALL,
      undefined,
    ]);
    expect(sentBody(gemini, 1).contents[2].parts.map((part: Json) => part.functionResponse.name)).toEqual([
      "list_directory",
      "read_file",
    ]);
  });

  test("a history Gemini did not make gets the skip value on each model turn's first call, reported, never a 400", async () => {
    server.replies.push({ kind: "sse", frames: geminiFrames(finalAnswer) });
    const reply = await postStream(
      `${gateway.url}/v1/messages`,
      {
        model: "gemini-3-pro-preview",
        max_tokens: 1024,
        stream: true,
        tools: anthropicTools,
        messages: [
          { role: "user", content: "List it." },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "I will list.", signature: "EqQBCkYIBxgCKkB-anthropic" },
              { type: "tool_use", id: "toolu_01", name: "list_directory", input: { path: "." } },
            ],
          },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "README.md" }] },
        ],
      },
      { "x-api-key": KEY, "anthropic-version": "2023-06-01" },
    );
    expect(reply.status).toBe(200);
    const sent = sentBody(gemini, 0).contents[1].parts;
    expect(sent.find((part: Json) => part.functionCall).thoughtSignature).toBe(SKIP);
    expect(JSON.stringify(sentBody(gemini, 0))).not.toContain("anthropic");
    expect(String(reply.headers["x-parley-lossy"])).toContain("thought-signature-skipped");
    const blocks = anthropicContentFromEvents(reply.data);
    expect(
      blocks
        .filter((block) => block.type === "text")
        .map((block) => block.text)
        .join(""),
    ).toContain("README.md");
  });

  test("Google's refusal reaches the client mapped, not hidden", async () => {
    server.replies.push({
      kind: "error",
      status: 429,
      body: {
        error: { code: 429, message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED" },
      },
    });
    server.replies.push(
      ...Array.from({ length: 5 }, () => ({
        kind: "error" as const,
        status: 429,
        body: {
          error: {
            code: 429,
            message: "Resource has been exhausted (e.g. check quota).",
            status: "RESOURCE_EXHAUSTED",
          },
        },
      })),
    );
    const reply = await postJson(
      `${gateway.url}/v1/messages`,
      { model: "gemini-3-pro-preview", max_tokens: 64, messages: [{ role: "user", content: "hi" }] },
      { "x-api-key": KEY, "anthropic-version": "2023-06-01" },
    );
    expect(reply.status).toBe(429);
    expect(reply.body.error.type).toBe("rate_limit_error");
  });
});

const anthropicTools = [
  {
    name: "list_directory",
    description: "List a directory",
    input_schema: { type: "object", properties: { path: { type: "string" } } },
  },
  { name: "read_file", input_schema: { type: "object", properties: { path: { type: "string" } } } },
];

function chatAnswer(text: string) {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    model: "qwen3",
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  };
}
