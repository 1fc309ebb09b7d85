import { type Content, type FunctionDeclaration, GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import type { RunningGateway } from "../../src/gateway/server.js";
import { startTestGateway } from "../support/gateway-harness.js";
import { actAsGemini, countedTokens, type GeminiServer, geminiFrames } from "../support/gemini-server.js";
import { geminiAnswer, turnFrames, turnMarks } from "../support/scripted-turns.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../support/scripted-upstream.js";

/**
 * Google's `@google/genai` SDK against the gateway: `generateContent`, `generateContentStream`, `countTokens` and a
 * function-calling round trip, on a DeepSeek-style Chat upstream and on a scripted Gemini that refuses what Google's
 * server refuses. The SDK calls API version v1 by default (Gemini CLI v1beta); both are answered.
 */

// biome-ignore lint/suspicious/noExplicitAny: assertions walk parsed JSON of any shape
type Json = any;

const KEY = "parley-sdk-key";
let chat: ScriptedUpstream;
let gemini: ScriptedUpstream;
let server: GeminiServer;
let gateway: RunningGateway;
let ai: GoogleGenAI;

beforeAll(async () => {
  chat = await startScriptedUpstream("openai");
  gemini = await startScriptedUpstream("gemini");
  server = { replies: [], key: "google-key" };
  actAsGemini(gemini, server);
  gateway = await startTestGateway({
    providers: {
      deepseek: { upstream: chat, type: "openai", preset: "deepseek", defaultModel: "deepseek-v4-flash" },
      google: { upstream: gemini, type: "gemini", apiKey: "google-key" },
    },
    defaultProvider: "deepseek",
    routes: [{ match: "gemini-*", provider: "google" }],
    apiKeys: [KEY],
  });
  ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: gateway.url } });
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

const weather: FunctionDeclaration = {
  name: "get_weather",
  description: "The weather in a city",
  parametersJsonSchema: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
};

function chatAnswer(text: string, reasoning?: string) {
  return {
    id: "chatcmpl-sdk",
    object: "chat.completion",
    model: "deepseek-v4-flash",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: text,
          ...(reasoning === undefined ? {} : { reasoning_content: reasoning }),
        },
        finish_reason: "stop",
      },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 },
  };
}

describe("the @google/genai SDK on a DeepSeek-style Chat upstream", () => {
  test("generateContent: the text, the thoughts asked for, usage, and the SDK's key kept from the upstream", async () => {
    chat.enqueue({ kind: "json", body: chatAnswer("Paris.", "The capital of France.") });
    const response = await ai.models.generateContent({
      model: "deepseek-v4-flash",
      contents: "What is the capital of France?",
      config: { systemInstruction: "Answer in one word.", thinkingConfig: { includeThoughts: true } },
    });
    expect(response.text).toBe("Paris.");
    const parts = response.candidates![0]!.content!.parts!;
    expect(parts.filter((part) => part.thought).map((part) => part.text)).toEqual(["The capital of France."]);
    expect(response.candidates![0]!.finishReason).toBe("STOP");
    expect(response.usageMetadata).toMatchObject({ promptTokenCount: 12, candidatesTokenCount: 4 });
    expect(chat.requests[0]!.path).toBe("/v1/chat/completions");
    const sent = chat.requests[0]!.body as Json;
    expect(sent.messages[0]).toMatchObject({ role: "system" });
    expect(JSON.stringify(sent.messages[0].content)).toContain("Answer in one word.");
    expect(JSON.stringify(chat.requests[0]!.headers)).not.toContain(KEY);
  });

  test("generateContentStream: the chunks add up to the answer, thoughts first", async () => {
    chat.enqueue({
      kind: "sse",
      frames: turnFrames("openai", { thought: "Count to three.", text: "One, two, three." }, 0),
    });
    const stream = await ai.models.generateContentStream({
      model: "deepseek-v4-flash",
      contents: [{ role: "user", parts: [{ text: "Count to three." }] }],
      config: { thinkingConfig: { includeThoughts: true } },
    });
    const parts: Json[] = [];
    let last: Json;
    for await (const chunk of stream) {
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
      last = chunk;
    }
    const thoughts = parts.filter((part) => part.thought === true).map((part) => part.text);
    expect(thoughts.join("")).toBe("Count to three.");
    const text = parts.filter((part) => part.thought !== true && typeof part.text === "string");
    expect(text.map((part) => part.text).join("")).toBe("One, two, three.");
    expect(parts.findIndex((part) => part.thought === true)).toBeLessThan(parts.indexOf(text[0]));
    expect(last.candidates[0].finishReason).toBe("STOP");
    expect(last.usageMetadata).toMatchObject({ promptTokenCount: 100, candidatesTokenCount: 20 });
    expect((chat.requests[0]!.body as Json).stream).toBe(true);
  });

  test("countTokens counts the contents, without reaching the upstream", async () => {
    const counted = await ai.models.countTokens({
      model: "deepseek-v4-flash",
      contents: "How many tokens are in this sentence of eleven or so words?",
    });
    expect(counted.totalTokens).toBeGreaterThan(5);
    expect(counted.totalTokens).toBeLessThan(40);
    expect(chat.requests).toHaveLength(0);
  });

  test("countTokens for a model routed to Gemini is Gemini's own count, of the whole request", async () => {
    const counted = await ai.models.countTokens({
      model: "gemini-3-pro-preview",
      contents: "How many tokens are in this sentence of eleven or so words?",
    });
    const sent = gemini.requests[0]!;
    expect(sent.path).toBe("/v1beta/models/gemini-3-pro-preview:countTokens");
    const { model, ...generate } = (sent.body as Json).generateContentRequest;
    expect(model).toBe("models/gemini-3-pro-preview");
    expect(counted.totalTokens).toBe(countedTokens(generate).text);
  });

  test("a function-calling round trip: the model's reasoning goes back to it on its tool turn", async () => {
    chat.enqueue({
      kind: "sse",
      frames: turnFrames(
        "openai",
        { thought: "I need the weather.", call: { name: "get_weather", args: { city: "Oslo" } } },
        0,
      ),
    });
    const contents: Content[] = [{ role: "user", parts: [{ text: "Weather in Oslo?" }] }];
    const config = { tools: [{ functionDeclarations: [weather] }] };
    const first = await collect(
      await ai.models.generateContentStream({ model: "deepseek-v4-flash", contents, config }),
    );
    const call = first.parts.find((part: Json) => part.functionCall !== undefined);
    expect(call.functionCall).toEqual({ id: turnMarks.callId(0), name: "get_weather", args: { city: "Oslo" } });
    expect((chat.requests[0]!.body as Json).tools[0].function).toMatchObject({
      name: "get_weather",
      parameters: weather.parametersJsonSchema,
    });
    chat.enqueue({ kind: "json", body: chatAnswer("It is 3°C in Oslo.") });
    contents.push(
      // What an SDK user keeps of the answer: the thoughts left out, as Gemini CLI does.
      { role: "model", parts: first.parts.filter((part: Json) => part.thought !== true) },
      {
        role: "user",
        parts: [{ functionResponse: { id: call.functionCall.id, name: "get_weather", response: { output: "3°C" } } }],
      },
    );
    const second = await ai.models.generateContent({ model: "deepseek-v4-flash", contents, config });
    expect(second.text).toBe("It is 3°C in Oslo.");
    const messages = (chat.requests[1]!.body as Json).messages as Json[];
    expect(messages.slice(1)).toEqual([
      {
        role: "assistant",
        reasoning_content: "I need the weather.",
        tool_calls: [
          {
            id: turnMarks.callId(0),
            type: "function",
            function: { name: "get_weather", arguments: JSON.stringify({ city: "Oslo" }) },
          },
        ],
      },
      { role: "tool", tool_call_id: turnMarks.callId(0), content: "3°C" },
    ]);
  });
});

describe("the @google/genai SDK on a Gemini upstream", () => {
  test("a function-calling round trip keeps Google's signature on its call; the upstream gets its own key", async () => {
    server.replies.push(
      {
        kind: "json",
        body: geminiAnswer({ thought: "Weather first.", call: { name: "get_weather", args: { city: "Oslo" } } }, 0),
      },
      { kind: "sse", frames: geminiFrames(geminiAnswer({ thought: "Now answer.", text: "3°C in Oslo." }, 1)) },
    );
    const contents: Content[] = [{ role: "user", parts: [{ text: "Weather in Oslo?" }] }];
    const config = { tools: [{ functionDeclarations: [weather] }], thinkingConfig: { includeThoughts: true } };
    const first = await ai.models.generateContent({ model: "gemini-3-pro-preview", contents, config });
    expect(first.functionCalls?.map((call) => [call.name, call.args])).toEqual([["get_weather", { city: "Oslo" }]]);
    expect(gemini.requests[0]!.path).toBe("/v1beta/models/gemini-3-pro-preview:generateContent");
    expect(gemini.requests[0]!.headers["x-goog-api-key"]).toBe("google-key");
    const call = first.functionCalls![0]!;
    contents.push(first.candidates![0]!.content!, {
      role: "user",
      parts: [{ functionResponse: { id: call.id!, name: call.name!, response: { output: "3°C" } } }],
    });
    const second = await collect(
      await ai.models.generateContentStream({ model: "gemini-3-pro-preview", contents, config }),
    );
    expect(second.text).toBe("3°C in Oslo.");
    const model = (gemini.requests[1]!.body as Json).contents[1];
    expect(model.parts.filter((part: Json) => part.functionCall)).toEqual([
      {
        functionCall: expect.objectContaining({ name: "get_weather", args: { city: "Oslo" } }),
        thoughtSignature: turnMarks.geminiSignature(0),
      },
    ]);
    expect(JSON.stringify(gemini.requests[1]!.body)).not.toContain("parley.v1.");
  });

  test("API version v1beta, as Gemini CLI calls it, answers too", async () => {
    const beta = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: gateway.url, apiVersion: "v1beta" } });
    server.replies.push({ kind: "json", body: geminiAnswer({ thought: "Easy.", text: "Hello." }, 0) });
    const response = await beta.models.generateContent({ model: "gemini-3-pro-preview", contents: "Hi" });
    expect(response.text).toBe("Hello.");
    const counted = await beta.models.countTokens({ model: "gemini-3-pro-preview", contents: "Hi there" });
    expect(counted.totalTokens).toBeGreaterThan(0);
  });
});

/** The parts of a streamed answer, and its text. */
async function collect(stream: AsyncGenerator<{ candidates?: Json[] }>): Promise<{ parts: Json[]; text: string }> {
  const parts: Json[] = [];
  for await (const chunk of stream) parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
  const text = parts
    .filter((part) => part.thought !== true && typeof part.text === "string")
    .map((part) => part.text)
    .join("");
  return { parts, text };
}
