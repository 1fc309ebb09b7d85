import { describe, expect, test } from "vitest";
import type { ConversationResponse, Message, ReasoningOrigin } from "../../core/index.js";
import { encodeOriginSignature, InvalidRequestError, SKIP_SIGNATURE } from "../../core/index.js";
import { accumulate } from "../../stream/accumulate.js";
import { geminiClient } from "./client.js";
import { ContentsWriter } from "./contents-from-core.js";
import { contentsToCore } from "./contents-to-core.js";
import { coreToGeminiRequest, coreToGeminiResponse } from "./from-core.js";
import { createGeminiStreamDecoder } from "./stream-decoder.js";
import { clientReader, geminiRequestToCore, geminiResponseToCore } from "./to-core.js";
import { parseGeminiModels } from "./upstream.js";
import { parseGeminiRequest } from "./validate-request.js";
import type { GeminiContent, GeminiPart, GeminiRequest, GeminiResponse } from "./wire-types.js";

const place = { model: "gemini-3-pro-preview", stream: false };

/** A Gemini 3 answer with a thought summary and two parallel calls, the first signed (documented shape). */
const answer: GeminiResponse = {
  candidates: [
    {
      content: {
        role: "model",
        parts: [
          { text: "Checking both cities.", thought: true },
          { functionCall: { name: "weather", args: { city: "Paris" } }, thoughtSignature: "SIG_A" },
          { functionCall: { name: "weather", args: { city: "Oslo" } } },
        ],
      },
      finishReason: "STOP",
      index: 0,
    },
  ],
  usageMetadata: {
    promptTokenCount: 120,
    candidatesTokenCount: 30,
    thoughtsTokenCount: 50,
    cachedContentTokenCount: 20,
    totalTokenCount: 200,
  },
  modelVersion: "gemini-3-pro-preview",
  responseId: "resp1",
};

describe("a Gemini request read", () => {
  test("contents, system instruction, tools, tool config and generation config", () => {
    const body = {
      systemInstruction: { parts: [{ text: "Be brief." }] },
      contents: [
        { role: "user", parts: [{ text: "Weather in Paris?" }] },
        {
          role: "model",
          parts: [{ functionCall: { id: "c1", name: "weather", args: { city: "Paris" } }, thoughtSignature: "SIG" }],
        },
        { role: "user", parts: [{ functionResponse: { id: "c1", name: "weather", response: { output: "sunny" } } }] },
      ],
      tools: [
        {
          functionDeclarations: [
            { name: "weather", description: "w", parametersJsonSchema: { type: "object", properties: {} } },
            { name: "old", parameters: { type: "OBJECT", properties: { q: { type: "STRING", nullable: true } } } },
          ],
        },
        { googleSearch: {} },
      ],
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["weather"] } },
      generationConfig: {
        maxOutputTokens: 1000,
        temperature: 0.5,
        stopSequences: ["END"],
        thinkingConfig: { includeThoughts: true, thinkingBudget: 512 },
        seed: 7,
      },
      safetySettings: [{ category: "HARM_CATEGORY_HATE_SPEECH", threshold: "BLOCK_NONE" }],
    };
    const { value } = geminiRequestToCore(parseGeminiRequest(body), place);
    expect(value.model).toBe("gemini-3-pro-preview");
    expect(value.system).toEqual({ role: "system", parts: [{ type: "text", text: "Be brief." }] });
    expect(value.messages[1]!.parts[0]).toMatchObject({
      type: "thinking",
      thinking: "",
      origin: { format: "gemini", sealed: "SIG", id: "c1" },
    });
    expect(value.messages[1]!.parts[1]).toEqual({
      type: "tool_call",
      id: "c1",
      name: "weather",
      input: { city: "Paris" },
    });
    expect(value.messages[2]!.parts[0]).toMatchObject({ type: "tool_result", toolCallId: "c1", content: "sunny" });
    expect(value.tools![1]!.inputSchema).toEqual({ type: "object", properties: { q: { type: ["string", "null"] } } });
    expect(value.toolChoice).toEqual({ type: "tool", name: "weather" });
    expect(value.maxTokens).toBe(1000);
    expect(value.thinking).toMatchObject({ type: "enabled", budgetTokens: 512 });
    expect(value.extra?.gemini).toMatchObject({ tools: [{ googleSearch: {} }], generationConfig: { seed: 7 } });
    expect(value.extra?.gemini?.safetySettings).toBeDefined();
  });

  test("a bad part is refused with its path, in Gemini's error shape on the client side", () => {
    const body = {
      contents: [
        { role: "user", parts: [{ text: "a" }] },
        { role: "model", parts: [{ functionCall: { args: {} } }] },
      ],
    };
    expect(() => parseGeminiRequest(body)).toThrow(InvalidRequestError);
    expect(() => parseGeminiRequest(body)).toThrow(
      "contents[1].parts[0].functionCall.name: must be a non-empty string",
    );
    expect(() => parseGeminiRequest({ contents: [{ role: "tool", parts: [] }] })).toThrow("contents[0].role");
    expect(geminiClient.errorBody({ type: "invalid_request_error", message: "bad", param: null }, "r")).toEqual({
      error: { code: 400, message: "bad", status: "INVALID_ARGUMENT" },
    });
  });

  test("function responses without ids answer their calls by name and order", () => {
    const contents: GeminiContent[] = [
      { role: "user", parts: [{ text: "go" }] },
      { role: "model", parts: [{ functionCall: { name: "a", args: {} } }, { functionCall: { name: "b", args: {} } }] },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "b", response: { result: 2 } } },
          { functionResponse: { name: "a", response: { error: "boom" } } },
        ],
      },
    ];
    const { messages } = contentsToCore(contents, clientReader, "contents");
    expect(messages[1]!.parts.map((part) => (part.type === "tool_call" ? part.id : ""))).toEqual([
      "call_1_0",
      "call_1_1",
    ]);
    expect(messages[2]!.parts).toEqual([
      {
        type: "tool_result",
        toolCallId: "call_1_1",
        content: '{"result":2}',
        extra: { gemini: { $response: { result: 2 }, $name: "b" } },
      },
      {
        type: "tool_result",
        toolCallId: "call_1_0",
        content: "boom",
        isError: true,
        extra: { gemini: { $name: "a" } },
      },
    ]);
  });
});

describe("a Gemini answer read", () => {
  test("thoughts, calls and signatures in order; usage and finish reason", () => {
    const { value } = geminiResponseToCore(answer, { provider: "google" });
    expect(value.message.parts.map((part) => part.type)).toEqual(["thinking", "thinking", "tool_call", "tool_call"]);
    expect(value.message.parts[0]).toMatchObject({
      thinking: "Checking both cities.",
      origin: { format: "gemini", provider: "google" },
    });
    expect(value.message.parts[1]).toMatchObject({
      thinking: "",
      origin: { format: "gemini", provider: "google", sealed: "SIG_A", id: "call_resp1_0" },
    });
    expect(value.stopReason).toEqual({ unified: "tool_use", raw: "STOP" });
    expect(value.usage).toEqual({ inputTokens: 100, outputTokens: 80, cacheReadInputTokens: 20, reasoningTokens: 50 });
  });

  test.each([
    ["MAX_TOKENS", "max_tokens"],
    ["SAFETY", "refusal"],
    ["RECITATION", "refusal"],
    ["MALFORMED_FUNCTION_CALL", "other"],
    ["SOMETHING_NEW", "other"],
  ])("finish reason %s maps to %s, the raw value kept", (raw, unified) => {
    const body: GeminiResponse = {
      candidates: [{ content: { role: "model", parts: [{ text: "x" }] }, finishReason: raw }],
    };
    expect(geminiResponseToCore(body).value.stopReason).toEqual({ unified, raw });
  });

  test("a text signature, and a signature on an empty part of its own, each stay where they were", () => {
    const body: GeminiResponse = {
      candidates: [
        {
          content: {
            role: "model",
            parts: [
              { text: "Hi", thoughtSignature: "T" },
              { text: "", thoughtSignature: "E" },
            ],
          },
          finishReason: "STOP",
        },
      ],
    };
    const core = geminiResponseToCore(body, { provider: "google" }).value;
    const request = coreToGeminiRequest(
      { model: "m", messages: [{ role: "user", parts: [{ type: "text", text: "q" }] }, core.message] },
      { provider: "google" },
    ).value;
    expect(request.contents[1]!.parts).toEqual([
      { text: "Hi", thoughtSignature: "T" },
      { text: "", thoughtSignature: "E" },
    ]);
  });
});

describe("a final text's signature", () => {
  const thought: GeminiPart = { text: "Both ran.", thought: true };
  const body = (parts: GeminiPart[], finishReason?: string): GeminiResponse => ({
    candidates: [{ content: { role: "model", parts }, ...(finishReason === undefined ? {} : { finishReason }) }],
    responseId: "r1",
    modelVersion: "gemini-3-pro-preview",
  });
  const streamed = (pieces: GeminiPart[][]): Message => {
    const decoder = createGeminiStreamDecoder({ provider: "google" });
    const events = pieces.flatMap((parts, index) =>
      decoder.push({ data: JSON.stringify(body(parts, index === pieces.length - 1 ? "STOP" : undefined)) }),
    );
    return accumulate([...events, ...decoder.finish()]).message;
  };
  const sentBack = (message: Message) =>
    coreToGeminiRequest(
      { model: "m", messages: [{ role: "user", parts: [{ type: "text", text: "q" }] }, message] },
      { provider: "google" },
    ).value.contents[1]!.parts;
  const whole = geminiResponseToCore(body([thought, { text: "The answer.", thoughtSignature: "T" }], "STOP"), {
    provider: "google",
  }).value.message;

  test("stands before its text, so that the answer ends with the text, and goes back on the text", () => {
    expect(whole.parts.map((part) => part.type)).toEqual(["thinking", "thinking", "text"]);
    expect(sentBack(whole)).toEqual([thought, { text: "The answer.", thoughtSignature: "T" }]);
  });

  test("streamed on the text's first piece, stands where the whole answer has it", () => {
    const message = streamed([[thought], [{ text: "The ", thoughtSignature: "T" }], [{ text: "answer." }]]);
    expect(message).toEqual(whole);
  });

  test("streamed on a later piece, follows the text it could not precede, and goes back on the same part", () => {
    const message = streamed([[thought], [{ text: "The " }], [{ text: "answer.", thoughtSignature: "T" }]]);
    expect(message.parts.map((part) => part.type)).toEqual(["thinking", "text", "thinking"]);
    expect(sentBack(message)).toEqual(sentBack(whole));
  });
});

describe("signatures going back to a provider", () => {
  const user: Message = { role: "user", parts: [{ type: "text", text: "weather?" }] };
  const results: Message = {
    role: "user",
    parts: [
      { type: "tool_result", toolCallId: "call_resp1_0", content: "sunny" },
      { type: "tool_result", toolCallId: "call_resp1_1", content: "rain" },
    ],
  };

  test("the provider that made them gets each on exactly its part; the parallel call stays unsigned", () => {
    const core = geminiResponseToCore(answer, { provider: "google" }).value;
    const { value, lossy } = coreToGeminiRequest(
      { model: "m", messages: [user, core.message, results] },
      { provider: "google" },
    );
    expect(value.contents[1]!.parts).toEqual([
      { text: "Checking both cities.", thought: true },
      { functionCall: { id: "call_resp1_0", name: "weather", args: { city: "Paris" } }, thoughtSignature: "SIG_A" },
      { functionCall: { id: "call_resp1_1", name: "weather", args: { city: "Oslo" } } },
    ]);
    expect(value.contents[2]!.parts[1]).toEqual({
      functionResponse: { id: "call_resp1_1", name: "weather", response: { output: "rain" } },
    });
    expect(lossy).toEqual([]);
  });

  test("another provider (Vertex AI for the Gemini API) never gets them: the skip value, reported", () => {
    const core = geminiResponseToCore(answer, { provider: "vertex" }).value;
    const { value, lossy } = coreToGeminiRequest(
      { model: "m", messages: [user, core.message, results] },
      { provider: "google" },
    );
    const parts = value.contents[1]!.parts;
    expect(parts[0]).toEqual({ text: "<think>Checking both cities.</think>" });
    expect(parts[1]!.thoughtSignature).toBe(SKIP_SIGNATURE);
    expect(JSON.stringify(value)).not.toContain("SIG_A");
    expect(lossy.map((entry) => entry.code)).toEqual(
      expect.arrayContaining(["thinking-to-text", "thought-signature-dropped", "thought-signature-skipped"]),
    );
  });

  test("a foreign history: Anthropic's signed thinking never reaches Gemini as a signature", () => {
    const assistant: Message = {
      role: "assistant",
      parts: [
        { type: "thinking", thinking: "plan", signature: "ANTHROPIC_SIG" },
        { type: "tool_call", id: "toolu_1", name: "weather", input: { city: "Paris" } },
      ],
    };
    const back: Message = { role: "user", parts: [{ type: "tool_result", toolCallId: "toolu_1", content: "sunny" }] };
    const { value, lossy } = coreToGeminiRequest(
      { model: "m", messages: [user, assistant, back] },
      { provider: "google", reasoning: "drop" },
    );
    expect(value.contents[1]!.parts).toEqual([
      { functionCall: { id: "toolu_1", name: "weather", args: { city: "Paris" } }, thoughtSignature: SKIP_SIGNATURE },
    ]);
    expect(JSON.stringify(value)).not.toContain("ANTHROPIC_SIG");
    expect(lossy.map((entry) => [entry.code, entry.path])).toEqual([
      ["thinking-dropped", "messages[1].content[0]"],
      ["thought-signature-skipped", "messages[1]"],
    ]);
  });
});

describe("a Gemini client", () => {
  test("gets another provider's reasoning inside a kept part's signature, and it comes back whole after thoughts are dropped", () => {
    const anthropicThinking = { type: "thinking" as const, thinking: "let me think", signature: "ANTHROPIC_SIG" };
    const deepseek = {
      type: "thinking" as const,
      thinking: "more",
      signature: encodeOriginSignature({ format: "openai", provider: "deepseek", field: "reasoning_content" }),
    };
    const response: ConversationResponse = {
      id: "msg_1",
      model: "m",
      message: {
        role: "assistant",
        parts: [
          anthropicThinking,
          { type: "text", text: "Checking." },
          deepseek,
          { type: "tool_call", id: "toolu_1", name: "weather", input: { city: "Paris" } },
        ],
      },
      stopReason: { unified: "tool_use", raw: "tool_use" },
      usage: { inputTokens: 1, outputTokens: 1 },
    };
    const encoded = coreToGeminiResponse(response).value;
    const parts = encoded.candidates![0]!.content!.parts;
    expect(parts.filter((part) => part.thought === true).map((part) => part.text)).toEqual(["let me think", "more"]);
    expect(JSON.stringify(parts)).not.toContain("ANTHROPIC_SIG");
    // Gemini CLI sends the history back without the thought parts.
    const kept = parts.filter((part) => part.thought !== true);
    const read = contentsToCore([{ role: "model", parts: kept }], clientReader, "contents").messages[0]!;
    expect(read.parts).toEqual(response.message.parts);
  });

  test("a streamed part whose origin came before its sealed content comes back with what its envelope seals", () => {
    const origin: ReasoningOrigin = { format: "responses", provider: "oai", field: "summary", id: "rs_1" };
    const reasoning = {
      type: "thinking" as const,
      thinking: "plan",
      signature: encodeOriginSignature({ ...origin, sealed: "gAAAA-sealed" }),
      origin,
    };
    const response: ConversationResponse = {
      id: "msg_1",
      model: "m",
      message: {
        role: "assistant",
        parts: [reasoning, { type: "tool_call", id: "call_1", name: "read_file", input: { file_path: "a" } }],
      },
      stopReason: { unified: "tool_use", raw: "tool_use" },
      usage: { inputTokens: 1, outputTokens: 1 },
    };
    const parts = coreToGeminiResponse(response).value.candidates![0]!.content!.parts;
    const kept = parts.filter((part) => part.thought !== true);
    const read = contentsToCore([{ role: "model", parts: kept }], clientReader, "contents").messages[0]!;
    expect(read.parts[0]).toEqual({ ...reasoning, origin: { ...origin, sealed: "gAAAA-sealed" } });
  });

  test("a Gemini provider's signatures come back to it through a Gemini client, on their parts", () => {
    const core = geminiResponseToCore(answer, { provider: "google" }).value;
    const client = coreToGeminiResponse(core).value.candidates![0]!.content!;
    const kept = { role: "model", parts: client.parts.filter((part) => part.thought !== true) };
    const back = contentsToCore([kept], clientReader, "contents").messages[0]!;
    const request = coreToGeminiRequest(
      { model: "m", messages: [{ role: "user", parts: [{ type: "text", text: "q" }] }, back] },
      { provider: "google" },
    ).value;
    expect(request.contents[1]!.parts).toEqual([
      { functionCall: { id: "call_resp1_0", name: "weather", args: { city: "Paris" } }, thoughtSignature: "SIG_A" },
      { functionCall: { id: "call_resp1_1", name: "weather", args: { city: "Oslo" } } },
    ]);
  });

  test("Gemini CLI's skip value carries nothing and never reaches a provider as a signature", () => {
    const contents: GeminiContent[] = [
      { role: "user", parts: [{ text: "q" }] },
      { role: "model", parts: [{ functionCall: { id: "x", name: "f", args: {} }, thoughtSignature: SKIP_SIGNATURE }] },
    ];
    const { messages } = contentsToCore(contents, clientReader, "contents");
    expect(messages[1]!.parts).toEqual([{ type: "tool_call", id: "x", name: "f", input: {} }]);
  });

  test("models list in Gemini's shape, and a provider's list read with its limits", () => {
    const list = geminiClient.models!.list([
      { id: "gemini-2.5-pro", createdAt: "", contextWindow: 1048576, maxOutputTokens: 65536 },
    ]);
    expect(list).toEqual({
      models: [
        {
          name: "models/gemini-2.5-pro",
          displayName: "gemini-2.5-pro",
          supportedGenerationMethods: ["generateContent", "streamGenerateContent", "countTokens"],
          inputTokenLimit: 1048576,
          outputTokenLimit: 65536,
        },
      ],
    });
    expect(
      parseGeminiModels({
        models: [
          { name: "models/embedding-001", supportedGenerationMethods: ["embedContent"] },
          ...(list as { models: unknown[] }).models,
        ],
      }),
    ).toEqual([{ id: "gemini-2.5-pro", contextWindow: 1048576, maxOutputTokens: 65536 }]);
  });
});

describe("history", () => {
  test("a provider's history writes back as it came", () => {
    const contents: GeminiContent[] = [
      { role: "user", parts: [{ text: "q" }] },
      {
        role: "model",
        parts: [
          { text: "thinking...", thought: true },
          { text: "Let me look.", thoughtSignature: "S1" },
          { functionCall: { id: "c1", name: "f", args: { a: 1 } }, thoughtSignature: "S2" },
        ],
      },
      { role: "user", parts: [{ functionResponse: { id: "c1", name: "f", response: { output: "ok" } } }] },
    ];
    const core = contentsToCore(contents, clientReader, "contents").messages;
    const writer = new ContentsWriter({ kind: "provider", reasoning: "think-tags" });
    expect(writer.contents(core)).toEqual(contents);
    expect(writer.lossy).toEqual([]);
  });

  test("a request Gemini would refuse for unknown fields carries none", () => {
    const request: GeminiRequest = coreToGeminiRequest({
      model: "m",
      messages: [
        {
          role: "user",
          parts: [{ type: "text", text: "q", extra: { anthropic: { cache_control: { type: "ephemeral" } } } }],
        },
      ],
      extra: { openai: { stream_options: { include_usage: true } } },
    }).value;
    expect(request).toEqual({ contents: [{ role: "user", parts: [{ text: "q" }] }] });
  });
});
