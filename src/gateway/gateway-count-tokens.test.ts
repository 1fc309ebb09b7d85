import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { type Json, postJson, startTestGateway } from "../../test/support/gateway-harness.js";
import { actAsGemini, countedTokens, type GeminiServer, geminiError } from "../../test/support/gemini-server.js";
import { mockTokenCount, mockTokenize, renderChatML } from "../../test/support/mock-tokenizer.js";
import {
  type RecordedRequest,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../test/support/scripted-upstream.js";
import { VLLM } from "../../test/support/server-shapes.js";
import { type ShapedUpstream, startShapedUpstream } from "../../test/support/shaped-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * A client's token count through the gateway, an Anthropic client's `count_tokens` and a Gemini client's
 * `:countTokens`, against each provider that counts (Anthropic, llama.cpp, vLLM, Gemini; scripted as each answers,
 * see test/fixtures/scripted/server-shapes.md) and one that does not: the provider's own count where it gives one,
 * the gateway's estimate where it does not, and the estimate again when the provider's count hangs past
 * `timeouts.countTokensMs`, fails, or cannot be read, each said in the request's log line.
 */

const VLLM_MODEL = VLLM.models[0]!.id;
const COUNT_TIMEOUT_MS = 800;

let anthropic: ScriptedUpstream;
let llamacpp: ScriptedUpstream;
let vllm: ShapedUpstream;
let gemini: ScriptedUpstream;
let plain: ScriptedUpstream;
let geminiServer: GeminiServer;
let gateway: RunningGateway;
const logLines: Array<Record<string, unknown>> = [];
/** The gateway's estimate for the requests below (`anthropicBody`, `geminiBody`). */
let anthropicEstimate: number;
let geminiEstimate: number;

/** llama.cpp's own endpoints as the real server answers them (test/fixtures/llamacpp-server/). */
const llamacppReplies = {
  countTokens: 0,
  apply: (body: unknown) => ({ prompt: renderChatML(body as Parameters<typeof renderChatML>[0]) }),
};

beforeAll(async () => {
  anthropic = await startScriptedUpstream("anthropic");
  llamacpp = await startScriptedUpstream("openai");
  llamacpp.otherRoutes = (request) => {
    const path = request.path.split("?")[0];
    if (request.method !== "POST") return undefined;
    if (path === "/v1/messages/count_tokens")
      return { kind: "json", body: { input_tokens: llamacppReplies.countTokens } };
    if (path === "/apply-template") return { kind: "json", body: llamacppReplies.apply(request.body) };
    if (path === "/tokenize") {
      const content = (request.body as { content: string }).content;
      return { kind: "json", body: { tokens: mockTokenize(content) } };
    }
    return undefined;
  };
  vllm = await startShapedUpstream(VLLM);
  gemini = await startScriptedUpstream("gemini");
  geminiServer = { replies: [], key: "google-key" };
  actAsGemini(gemini, geminiServer);
  plain = await startScriptedUpstream("openai");
  gateway = await startTestGateway({
    providers: {
      anthropic: { upstream: anthropic, type: "anthropic", apiKey: "sk-ant-upstream" },
      llamacpp: { upstream: llamacpp, type: "openai", preset: "llamacpp", apiKey: "llama-key" },
      vllm: { upstream: vllm, type: "openai", preset: "vllm", apiKey: "vllm-key" },
      google: { upstream: gemini, type: "gemini", apiKey: "google-key" },
      plain: { upstream: plain, type: "openai", defaultModel: "m" },
    },
    defaultProvider: "plain",
    routes: [
      { match: "claude-*", provider: "anthropic", model: "claude-sonnet-4-5" },
      { match: "llama-*", provider: "llamacpp", model: "tiny-qwen3" },
      { match: "qwen-*", provider: "vllm", model: VLLM_MODEL },
      { match: "unserved-*", provider: "vllm", model: "no/such-model" },
      { match: "gemini-*", provider: "google", model: "gemini-3-pro-preview" },
    ],
    file: {
      timeouts: { countTokensMs: COUNT_TIMEOUT_MS },
      retries: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
    },
    logLines,
  });
  await gateway.discovery;
  // The gateway's estimate for the same requests, asked of a provider that cannot count.
  anthropicEstimate = (await countAnthropic("local-model")).count;
  geminiEstimate = (await countGemini("local-model")).count;
});

afterAll(async () => {
  await gateway.close();
  for (const upstream of [anthropic, llamacpp, vllm, gemini, plain]) await upstream.close();
});

beforeEach(() => {
  for (const upstream of [anthropic, llamacpp, vllm, gemini, plain]) {
    upstream.requests.length = 0;
    upstream.otherRequests.length = 0;
  }
  geminiServer.replies.length = 0;
});

const tool = {
  name: "Bash",
  description: "Run a shell command and return its output",
  input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
};

/** Claude Code's shape: system, tools, and a tool loop (thinking, a call, its result). */
const anthropicBody = (model: string) => ({
  model,
  system: [{ type: "text", text: "You are a careful coding agent. Use the tools to answer." }],
  tools: [tool],
  messages: [
    { role: "user", content: "Which files are in this directory?" },
    {
      role: "assistant",
      content: [
        { type: "text", text: "I will list them." },
        { type: "tool_use", id: "toolu_01", name: "Bash", input: { command: "ls" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "README.md\nsrc\ntest\n" }] },
  ],
});

/** Gemini CLI's shape, the whole request under `generateContentRequest`. */
const geminiBody = () => ({
  generateContentRequest: {
    systemInstruction: { parts: [{ text: "You are a careful coding agent. Use the tools to answer." }] },
    tools: [
      {
        functionDeclarations: [
          {
            name: "run_shell_command",
            description: "Run a shell command and return its output",
            parametersJsonSchema: { type: "object", properties: { command: { type: "string" } } },
          },
        ],
      },
    ],
    contents: [
      { role: "user", parts: [{ text: "Which files are in this directory?" }] },
      { role: "model", parts: [{ functionCall: { name: "run_shell_command", args: { command: "ls" } } }] },
      {
        role: "user",
        parts: [{ functionResponse: { name: "run_shell_command", response: { output: "README.md\nsrc\ntest\n" } } }],
      },
    ],
  },
});

const countAnthropic = (model: string) =>
  postJson(`${gateway.url}/v1/messages/count_tokens`, anthropicBody(model)).then((reply) => ({
    status: reply.status,
    count: (reply.body as Json).input_tokens as number,
    body: reply.body as Json,
  }));
const countGemini = (model: string) =>
  postJson(`${gateway.url}/v1beta/models/${model}:countTokens`, geminiBody()).then((reply) => ({
    status: reply.status,
    count: (reply.body as Json).totalTokens as number,
    body: reply.body as Json,
  }));

/** The request's log line, once it is written (right after the answer). */
async function logLineOf(route: string): Promise<Record<string, unknown>> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const line = logLines.findLast((entry) => entry.msg === "request" && entry.route === route);
    if (line !== undefined) {
      logLines.length = 0;
      return line;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no log line for ${route}`);
}
const ANTHROPIC_ROUTE = "POST /v1/messages/count_tokens";
const GEMINI_ROUTE = "POST /v1beta/models/{model}:countTokens";

describe("a provider that cannot count: the gateway's estimate", () => {
  test("an OpenAI-compatible server without a count of its own is not asked", async () => {
    logLines.length = 0;
    const fromAnthropic = await countAnthropic("local-model");
    expect(fromAnthropic).toMatchObject({ status: 200, count: anthropicEstimate });
    const line = await logLineOf(ANTHROPIC_ROUTE);
    expect(line).toMatchObject({ tokenCount: "estimate", inputTokens: anthropicEstimate });
    expect(line.tokenCountError).toBeUndefined();
    expect(await countGemini("local-model")).toMatchObject({ status: 200, count: geminiEstimate });
    expect(plain.requests.length + plain.otherRequests.filter((request) => request.method === "POST").length).toBe(0);
    // system, tools, the call and its result all count
    expect(anthropicEstimate).toBeGreaterThan(60);
    expect(geminiEstimate).toBeGreaterThan(60);
  });
});

describe("Anthropic", () => {
  test("an Anthropic client's body goes to count_tokens as it came, the model renamed, with the provider's key", async () => {
    anthropic.enqueue({ kind: "json", body: { input_tokens: 4242 } });
    const reply = await countAnthropic("claude-opus-4-5");
    expect(reply).toMatchObject({ status: 200, body: { input_tokens: 4242 } });
    const sent = anthropic.requests[0]!;
    expect(sent.path).toBe("/v1/messages/count_tokens");
    expect(sent.headers["x-api-key"]).toBe("sk-ant-upstream");
    expect(sent.body).toEqual(anthropicBody("claude-sonnet-4-5"));
    expect(await logLineOf(ANTHROPIC_ROUTE)).toMatchObject({ tokenCount: "upstream", provider: "anthropic" });
  });

  test("a Gemini client's request is written as Messages, cut to what count_tokens takes", async () => {
    anthropic.enqueue({ kind: "json", body: { input_tokens: 77 } });
    const reply = await countGemini("claude-opus-4-5");
    expect(reply).toMatchObject({ status: 200, body: { totalTokens: 77 } });
    const sent = anthropic.requests[0]!;
    expect(sent.path).toBe("/v1/messages/count_tokens");
    const body = sent.body as Json;
    expect(Object.keys(body).sort()).toEqual(["messages", "model", "system", "tools"]);
    expect(body.model).toBe("claude-sonnet-4-5");
    expect(body.tools[0].name).toBe("run_shell_command");
    expect(body.messages.map((message: Json) => message.role)).toEqual(["user", "assistant", "user"]);
  });

  test("an error (529, after its retry) gives the estimate, the error in the log line", async () => {
    const overloaded = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
    anthropic.enqueue(
      { kind: "error", status: 529, body: overloaded },
      { kind: "error", status: 529, body: overloaded },
    );
    logLines.length = 0;
    const reply = await countAnthropic("claude-opus-4-5");
    expect(reply).toMatchObject({ status: 200, count: anthropicEstimate });
    expect(anthropic.requests).toHaveLength(2);
    const line = await logLineOf(ANTHROPIC_ROUTE);
    expect(line).toMatchObject({ tokenCount: "estimate", provider: "anthropic" });
    expect(line.tokenCountError).toContain("Overloaded");
  });

  test("a count that hangs past timeouts.countTokensMs gives the estimate", async () => {
    anthropic.enqueue({ kind: "stall" });
    logLines.length = 0;
    const started = performance.now();
    const reply = await countAnthropic("claude-opus-4-5");
    const elapsed = performance.now() - started;
    expect(reply).toMatchObject({ status: 200, count: anthropicEstimate });
    expect(elapsed).toBeGreaterThanOrEqual(COUNT_TIMEOUT_MS - 20);
    expect(elapsed).toBeLessThan(COUNT_TIMEOUT_MS + 3_000);
    expect(await anthropic.waitForAbort(1_000)).toBe(true);
    const line = await logLineOf(ANTHROPIC_ROUTE);
    expect(line).toMatchObject({ tokenCount: "estimate" });
    expect(line.tokenCountError).toContain("timeouts.countTokensMs");
  });
});

describe("llama.cpp", () => {
  test("an Anthropic client's body goes to its /v1/messages/count_tokens", async () => {
    llamacppReplies.countTokens = 123;
    const reply = await countAnthropic("llama-3");
    expect(reply).toMatchObject({ status: 200, body: { input_tokens: 123 } });
    const sent = llamacpp.otherRequests.find((request) => request.path === "/v1/messages/count_tokens")!;
    expect(sent.body).toEqual(anthropicBody("tiny-qwen3"));
    expect(sent.headers.authorization).toBe("Bearer llama-key");
  });

  test("a Gemini client's request is rendered at /apply-template, as Parley sends it, and counted at /tokenize", async () => {
    const reply = await countGemini("llama-3");
    expect(reply.status).toBe(200);
    const [applied, tokenized] = llamacpp.otherRequests.filter((request) => request.method === "POST");
    expect(applied!.path).toBe("/apply-template");
    const chat = applied!.body as Json;
    expect(chat.model).toBe("tiny-qwen3");
    expect(chat.tools[0].function.name).toBe("run_shell_command");
    expect(tokenized!.path).toBe("/tokenize");
    expect(tokenized!.body).toEqual({ content: renderChatML(chat), add_special: true, parse_special: true });
    expect(reply.count).toBe(mockTokenCount(renderChatML(chat)));
    expect(await logLineOf(GEMINI_ROUTE)).toMatchObject({ tokenCount: "upstream", provider: "llamacpp" });
  });

  test("an older server without the endpoint (404) gives the estimate", async () => {
    const saved = llamacpp.otherRoutes;
    llamacpp.otherRoutes = () => undefined;
    try {
      const reply = await countAnthropic("llama-3");
      expect(reply).toMatchObject({ status: 200, count: anthropicEstimate });
    } finally {
      llamacpp.otherRoutes = saved;
    }
  });
});

describe("vLLM", () => {
  /** The chat-form body vLLM's /tokenize was sent. */
  const tokenizeRequest = (): RecordedRequest => {
    const found = vllm.otherRequests.find((request) => request.path === "/tokenize");
    if (found === undefined) throw new Error("vLLM was not asked to tokenize");
    return found;
  };

  test.each([
    ["an Anthropic client", () => countAnthropic("qwen-coder"), ANTHROPIC_ROUTE],
    ["a Gemini client", () => countGemini("qwen-coder"), GEMINI_ROUTE],
  ])("%s: /tokenize at the server's root, chat form, the count it answers", async (_client, count, route) => {
    const reply = await count();
    expect(reply.status).toBe(200);
    const sent = tokenizeRequest();
    expect(sent.headers.authorization).toBe("Bearer vllm-key");
    const body = sent.body as Json;
    expect(Object.keys(body).sort()).toEqual(["add_generation_prompt", "messages", "model", "tools"]);
    expect(body).toMatchObject({ model: VLLM_MODEL, add_generation_prompt: true });
    expect(body.messages.map((message: Json) => message.role)).toEqual(["system", "user", "assistant", "tool"]);
    // vLLM's own count of what it was sent: its template, its tokenizer
    expect(reply.count).toBe(mockTokenize(renderChatML(body)).length);
    expect(reply.count).not.toBe(route === ANTHROPIC_ROUTE ? anthropicEstimate : geminiEstimate);
    expect(await logLineOf(route)).toMatchObject({ tokenCount: "upstream", provider: "vllm" });
  });

  test("a model it does not serve: its 404, and the estimate", async () => {
    logLines.length = 0;
    const reply = await countAnthropic("unserved-model");
    expect(reply).toMatchObject({ status: 200, count: anthropicEstimate });
    const line = await logLineOf(ANTHROPIC_ROUTE);
    expect(line).toMatchObject({ tokenCount: "estimate", provider: "vllm" });
    expect(line.tokenCountError).toContain("does not exist");
  });

  test("an answer without a count, or not JSON at all: the estimate", async () => {
    const saved = vllm.otherRoutes;
    try {
      for (const answer of [
        { kind: "json" as const, body: { count: "many" } },
        { kind: "json" as const, body: "<html>" },
      ]) {
        vllm.otherRoutes = (request) => (request.path === "/tokenize" ? answer : saved?.(request));
        logLines.length = 0;
        const reply = await countGemini("qwen-coder");
        expect(reply).toMatchObject({ status: 200, count: geminiEstimate });
        expect((await logLineOf(GEMINI_ROUTE)).tokenCountError).toMatch(/without a count|not JSON/);
      }
    } finally {
      vllm.otherRoutes = saved;
    }
  });

  test("a /tokenize that hangs: the estimate once timeouts.countTokensMs has passed", async () => {
    const saved = vllm.otherRoutes;
    vllm.otherRoutes = (request) => (request.path === "/tokenize" ? { kind: "stall" } : saved?.(request));
    try {
      const started = performance.now();
      const reply = await countGemini("qwen-coder");
      expect(reply).toMatchObject({ status: 200, count: geminiEstimate });
      expect(performance.now() - started).toBeGreaterThanOrEqual(COUNT_TIMEOUT_MS - 20);
    } finally {
      vllm.otherRoutes = saved;
    }
  });
});

describe("Gemini", () => {
  /** The scripted Gemini's count of what it was sent (`generateContentRequest` without its model). */
  const geminiCount = (request: RecordedRequest) => {
    const { model: _model, ...generate } = (request.body as Json).generateContentRequest;
    const { text, image } = countedTokens(generate);
    return text + image;
  };

  test.each([
    ["a Gemini client", () => countGemini("gemini-3"), GEMINI_ROUTE],
    ["an Anthropic client", () => countAnthropic("gemini-3"), ANTHROPIC_ROUTE],
  ])("%s: countTokens with the whole request, system instruction and tools included", async (_client, count, route) => {
    const reply = await count();
    expect(reply.status).toBe(200);
    const sent = gemini.requests[0]!;
    expect(sent.path).toBe("/v1beta/models/gemini-3-pro-preview:countTokens");
    expect(sent.headers["x-goog-api-key"]).toBe("google-key");
    const generate = (sent.body as Json).generateContentRequest;
    expect(Object.keys(sent.body as Json)).toEqual(["generateContentRequest"]);
    expect(generate.model).toBe("models/gemini-3-pro-preview");
    expect(generate.systemInstruction.parts[0].text).toContain("careful coding agent");
    expect(generate.tools[0].functionDeclarations[0].name).toMatch(/run_shell_command|Bash/);
    expect(reply.count).toBe(geminiCount(sent));
    expect(await logLineOf(route)).toMatchObject({ tokenCount: "upstream", provider: "google" });
  });

  test("its error (a 429, retried once) gives the estimate", async () => {
    const exhausted = geminiError(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).");
    gemini.enqueue(
      { kind: "error", status: 429, body: exhausted, retryAfter: "0" },
      { kind: "error", status: 429, body: exhausted, retryAfter: "0" },
    );
    logLines.length = 0;
    const reply = await countGemini("gemini-3");
    expect(reply).toMatchObject({ status: 200, count: geminiEstimate });
    expect(gemini.requests).toHaveLength(2);
    expect((await logLineOf(GEMINI_ROUTE)).tokenCountError).toContain("Resource has been exhausted");
  });

  test("a countTokens that hangs: the estimate once timeouts.countTokensMs has passed", async () => {
    gemini.enqueue({ kind: "stall" });
    const started = performance.now();
    const reply = await countAnthropic("gemini-3");
    expect(reply).toMatchObject({ status: 200, count: anthropicEstimate });
    expect(performance.now() - started).toBeGreaterThanOrEqual(COUNT_TIMEOUT_MS - 20);
  });
});
