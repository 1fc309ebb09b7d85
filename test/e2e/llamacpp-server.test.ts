import { readFileSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RunningGateway } from "../../src/gateway/server.js";
import { type RecordingProxy, startRecordingProxy } from "../support/claude-code.js";
import { getJson, postJson } from "../support/gateway-harness.js";
import {
  ensureLlamaServer,
  LLAMA_SERVER_BUILD_TIMEOUT_MS,
  type LlamaServerBuild,
  type RunningLlamaServer,
  startLlamaServer,
  startParleyFor,
} from "../support/llama-server.js";
import {
  ESTIMATE_BAND,
  estimateAgainst,
  type RecordedCount,
  readCountFixture,
  recordingTokenCounts,
  tokenCountRequests,
  writeCountFixture,
} from "../support/token-count-requests.js";

/**
 * The official SDKs through Parley to a real model server: llama.cpp's `llama-server` (built from the source
 * node-llama-cpp ships) on a tiny generated model whose hand-set weights always say, for a plain question,
 *
 *     <think>\nLet me think.</think>\n\nHello from llama!<|im_end|>
 *
 * and, when tools are offered and no tool result is in the conversation yet, a `<tool_call>` after the thinking
 * whose JSON the server's grammar writes. Parley is started as a new user would, with only `--upstream`, on a
 * port no preset is guessed from: it must recognise the server by what the server says of itself.
 */

const THINKING = "Let me think.";
const ANSWER = "Hello from llama!";

let build: LlamaServerBuild;
let server: RunningLlamaServer;
/** Between Parley and the server, recording what Parley sent. */
let proxy: RecordingProxy;
let parley: RunningGateway;

beforeAll(async () => {
  build = await ensureLlamaServer();
  server = await startLlamaServer(build);
  proxy = await startRecordingProxy(server.origin);
  parley = await startParleyFor(`${proxy.url}/v1`);
}, LLAMA_SERVER_BUILD_TIMEOUT_MS);

afterAll(async () => {
  await parley?.close();
  await proxy?.close();
  await server?.stop();
});

/** The bodies Parley sent to the server's chat endpoint while `run` ran. */
async function sentDuring(run: () => Promise<unknown>): Promise<Array<Record<string, unknown>>> {
  const before = proxy.exchanges.length;
  await run();
  return proxy.exchanges
    .slice(before)
    .filter((exchange) => exchange.path === "/v1/chat/completions")
    .map((exchange) => exchange.body as Record<string, unknown>);
}

interface TestTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

const weather: TestTool = {
  name: "weather",
  description: "Current weather at a location",
  // bounded, so that the grammar-constrained string stays short
  parameters: {
    type: "object",
    properties: { location: { type: "string", maxLength: 12 } },
    required: ["location"],
  },
};
const clock: TestTool = {
  name: "clock",
  description: "The time in a city",
  parameters: { type: "object", properties: { city: { type: "string", maxLength: 12 } }, required: ["city"] },
};
const chatTool = (tool: TestTool): OpenAI.ChatCompletionTool => ({ type: "function", function: tool });
const anthropicTool = (tool: TestTool): Anthropic.Tool => ({
  name: tool.name,
  description: tool.description,
  input_schema: tool.parameters as Anthropic.Tool.InputSchema,
});
const question = "What is the weather in Paris?";

function chatClient(gateway: RunningGateway = parley): OpenAI {
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: "sk-local", maxRetries: 0 });
}

function anthropicClient(gateway: RunningGateway = parley): Anthropic {
  return new Anthropic({ baseURL: gateway.url, apiKey: "sk-ant-local", maxRetries: 0 });
}

type ReasoningMessage = OpenAI.ChatCompletionMessage & { reasoning_content?: string };

describe("the server as it is: its list, its window", () => {
  test("the OpenAI client lists the server's model with its per-slot window (meta.n_ctx)", async () => {
    const models = await chatClient().models.list();
    const listed = models.data.find((model) => model.id === server.alias) as
      | (OpenAI.Model & { context_length?: number })
      | undefined;
    expect(listed?.context_length).toBe(2048);
  });

  test("the Anthropic client reads the same window as max_input_tokens", async () => {
    const reply = await getJson(`${parley.url}/v1/models`, { "anthropic-version": "2023-06-01", "x-api-key": "k" });
    const listed = (reply.body as { data: Array<Record<string, unknown>> }).data.find(
      (model) => model.id === server.alias,
    );
    expect(listed).toMatchObject({ max_input_tokens: 2048 });
  });
});

describe("a Chat Completions client to /v1/chat/completions", () => {
  test("not streamed: reasoning in reasoning_content, the answer in content, usage", async () => {
    const completion = await chatClient().chat.completions.create({
      model: server.alias,
      messages: [{ role: "user", content: question }],
      max_tokens: 64,
    });
    const message = completion.choices[0]!.message as ReasoningMessage;
    expect(message.reasoning_content).toBe(THINKING);
    expect(message.content).toBe(ANSWER);
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(5);
    expect(completion.usage?.completion_tokens).toBeGreaterThan(5);
  });

  test("streamed: the same text, usage in the last chunk", async () => {
    const stream = await chatClient().chat.completions.create({
      model: server.alias,
      messages: [{ role: "user", content: question }],
      max_tokens: 64,
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = "";
    let reasoning = "";
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string | null; reasoning_content?: string } | undefined;
      content += delta?.content ?? "";
      reasoning += delta?.reasoning_content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect([reasoning, content, finish]).toEqual([THINKING, ANSWER, "stop"]);
    expect(usage?.completion_tokens).toBeGreaterThan(5);
  });

  test.each([
    // with a free choice, which of the two the grammar lets the model name is the sampler's: either will do
    ["auto", "auto" as const, /^(weather|clock)$/],
    ["required", "required" as const, /^(weather|clock)$/],
    ["a named tool", { type: "function" as const, function: { name: "clock" } }, /^clock$/],
  ])("tool choice %s: the call the client asked for, with arguments that parse", async (_name, choice, expected) => {
    let completion: OpenAI.ChatCompletion | undefined;
    const sent = await sentDuring(async () => {
      completion = await chatClient().chat.completions.create({
        model: server.alias,
        messages: [{ role: "user", content: question }],
        tools: [chatTool(weather), chatTool(clock)],
        tool_choice: choice,
        max_tokens: 128,
      });
    });
    // The server takes only the string forms: a named tool is `required` with that one tool offered.
    if (typeof choice === "object")
      expect(sent[0]).toMatchObject({ tool_choice: "required", tools: [chatTool(clock)] });
    const choiceOut = completion!.choices[0]!;
    expect(choiceOut.finish_reason).toBe("tool_calls");
    const call = choiceOut.message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toMatch(expected);
    expect(typeof JSON.parse(call.function.arguments)).toBe("object");
    expect((choiceOut.message as ReasoningMessage).reasoning_content).toBe(THINKING);
  });

  test("the tool loop: the result goes back, the model answers in text", async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: question }];
    const first = await chatClient().chat.completions.create({
      model: server.alias,
      messages,
      tools: [chatTool(weather)],
      max_tokens: 128,
    });
    const assistant = first.choices[0]!.message;
    const call = assistant.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    const second = await chatClient().chat.completions.create({
      model: server.alias,
      messages: [...messages, assistant, { role: "tool", tool_call_id: call.id, content: "21 degrees, sunny" }],
      tools: [chatTool(weather)],
      max_tokens: 64,
    });
    expect(second.choices[0]!.message.content).toBe(ANSWER);
    expect(second.choices[0]!.finish_reason).toBe("stop");
  });

  test("reasoning_effort none switches thinking off on this server", async () => {
    const completion = await chatClient().chat.completions.create({
      model: server.alias,
      messages: [{ role: "user", content: question }],
      reasoning_effort: "none" as OpenAI.ReasoningEffort,
      max_tokens: 64,
    });
    const message = completion.choices[0]!.message as ReasoningMessage;
    expect(message.content).toBe(ANSWER);
    expect(message.reasoning_content ?? "").toBe("");
  });

  test("a prompt over the window: 400 with OpenAI's context_length_exceeded, the numbers kept", async () => {
    const long = "hello ".repeat(2_500);
    const reply = await postJson(`${parley.url}/v1/chat/completions`, {
      model: server.alias,
      messages: [{ role: "user", content: long }],
      max_tokens: 8,
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ error: { code: "context_length_exceeded" } });
    expect((reply.body as { error: { message: string } }).error.message).toMatch(/2048/);
  });

  test("an image the model cannot see: a 400 in the server's words, asked once", async () => {
    let reply: Awaited<ReturnType<typeof postJson>> | undefined;
    const sent = await sentDuring(async () => {
      reply = await postJson(`${parley.url}/v1/chat/completions`, {
        model: server.alias,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "What is this?" },
              { type: "image_url", image_url: { url: `data:image/png;base64,${TINY_PNG}` } },
            ],
          },
        ],
        max_tokens: 8,
      });
    });
    expect(reply?.status).toBe(400);
    expect(reply?.text).toContain("image input is not supported");
    expect(sent).toHaveLength(1);
  });
});

describe("an Anthropic client to /v1/chat/completions", () => {
  test("not streamed: a thinking block, then the text; usage; end_turn", async () => {
    const message = await anthropicClient().messages.create({
      model: server.alias,
      max_tokens: 256,
      messages: [{ role: "user", content: question }],
    });
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "text"]);
    expect(message.content[0]).toMatchObject({ thinking: THINKING });
    expect(message.content[1]).toMatchObject({ text: ANSWER });
    expect(message.stop_reason).toBe("end_turn");
    // the server's prompt cache holds all but the last token of a prompt it has seen: Anthropic counts them apart
    expect(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0)).toBeGreaterThan(5);
    expect(message.usage.output_tokens).toBeGreaterThan(5);
  });

  test("streamed: the SDK's final message is the same", async () => {
    const stream = anthropicClient().messages.stream({
      model: server.alias,
      max_tokens: 256,
      messages: [{ role: "user", content: question }],
    });
    const message = await stream.finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "text"]);
    expect(message.content[1]).toMatchObject({ text: ANSWER });
    expect(message.usage.output_tokens).toBeGreaterThan(5);
  });

  test.each([
    ["auto", { type: "auto" as const }, /^(weather|clock)$/],
    ["any", { type: "any" as const }, /^(weather|clock)$/],
    ["a named tool", { type: "tool" as const, name: "clock" }, /^clock$/],
  ])("tool_choice %s: a tool_use block for the tool asked for", async (_name, choice, expected) => {
    let message: Anthropic.Message | undefined;
    const sent = await sentDuring(async () => {
      message = await anthropicClient().messages.create({
        model: server.alias,
        max_tokens: 256,
        messages: [{ role: "user", content: question }],
        tools: [anthropicTool(weather), anthropicTool(clock)],
        tool_choice: choice,
      });
    });
    if (choice.type === "tool") expect(sent[0]).toMatchObject({ tool_choice: "required", tools: [chatTool(clock)] });
    expect(message!.stop_reason).toBe("tool_use");
    const use = message!.content.find((block) => block.type === "tool_use") as Anthropic.ToolUseBlock;
    expect(use.name).toMatch(expected);
    expect(typeof use.input).toBe("object");
  });

  test("thinking disabled: the server is told (enable_thinking false) and answers without thinking", async () => {
    let message: Anthropic.Message | undefined;
    const sent = await sentDuring(async () => {
      message = await anthropicClient().messages.create({
        model: server.alias,
        max_tokens: 256,
        thinking: { type: "disabled" },
        messages: [{ role: "user", content: question }],
      });
    });
    expect(sent[0]).toMatchObject({ chat_template_kwargs: { enable_thinking: false } });
    expect(message!.content.map((block) => block.type)).toEqual(["text"]);
    expect(message!.content[0]).toMatchObject({ text: ANSWER });
  });

  test("thinking with a budget: the budget goes as thinking_budget_tokens, and the model still thinks", async () => {
    let message: Anthropic.Message | undefined;
    const sent = await sentDuring(async () => {
      message = await anthropicClient().messages.create({
        model: server.alias,
        max_tokens: 2048,
        thinking: { type: "enabled", budget_tokens: 1024 },
        messages: [{ role: "user", content: question }],
      });
    });
    // (the budget is lowered with max_tokens to what the window leaves)
    expect(sent[0]).toMatchObject({ chat_template_kwargs: { enable_thinking: true } });
    expect(sent[0]!.thinking_budget_tokens).toBeGreaterThan(0);
    expect(sent[0]!.thinking_budget_tokens).toBeLessThanOrEqual(1024);
    expect(message!.content.map((block) => block.type)).toEqual(["thinking", "text"]);
  });

  test("count_tokens is the server's own count, through its template", async () => {
    const request = { model: server.alias, messages: [{ role: "user" as const, content: question }] };
    const own = await postJson(`${server.origin}/v1/messages/count_tokens`, request);
    const counted = await anthropicClient().messages.countTokens(request);
    expect(counted.input_tokens).toBe((own.body as { input_tokens: number }).input_tokens);
    expect(counted.input_tokens).toBeGreaterThan(10);
  });

  test("a prompt over the window: Anthropic's `prompt is too long`, the numbers kept", async () => {
    const error = await anthropicClient()
      .messages.create({
        model: server.alias,
        max_tokens: 16,
        messages: [{ role: "user", content: "hello ".repeat(2_500) }],
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as Error).message).toMatch(/prompt is too long: \d+ tokens > 2048 maximum/);
  });
});

describe("a Responses client to /v1/chat/completions", () => {
  test("not streamed: a reasoning item, then the message", async () => {
    const response = await chatClient().responses.create({ model: server.alias, input: question, store: false });
    expect(response.status).toBe("completed");
    expect(response.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    expect(response.output_text).toBe(ANSWER);
    expect(response.usage?.output_tokens).toBeGreaterThan(5);
  });

  test("streamed with a tool: the function call, arguments that parse", async () => {
    const stream = chatClient().responses.stream({
      model: server.alias,
      input: question,
      tools: [{ type: "function", strict: false, ...weather }],
      store: false,
    });
    const final = await stream.finalResponse();
    const call = final.output.find(
      (item) => item.type === "function_call",
    ) as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call.name).toBe("weather");
    expect(typeof JSON.parse(call.arguments)).toBe("object");
    expect(call.status).toBe("completed");
  });
});

/** A 1x1 PNG. */
const TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

describe("Parley's Anthropic-type upstream on the server's own /v1/messages", () => {
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startParleyFor(server.origin, "anthropic");
  });
  afterAll(async () => {
    await gateway?.close();
  });

  test("an Anthropic client, not streamed and streamed: thinking, then the text", async () => {
    const request = {
      model: server.alias,
      max_tokens: 256,
      messages: [{ role: "user" as const, content: question }],
    };
    const whole = await anthropicClient(gateway).messages.create(request);
    expect(whole.content.map((block) => block.type)).toEqual(["thinking", "text"]);
    expect(whole.content[1]).toMatchObject({ text: ANSWER });
    const streamed = await anthropicClient(gateway).messages.stream(request).finalMessage();
    // The server signs its thinking with "": the whole answer keeps "", the streamed one carries Parley's envelope
    // (an open question: the same answer should read the same streamed or not).
    const unsigned = (content: Anthropic.ContentBlock[]) =>
      content.map((block) => (block.type === "thinking" ? { ...block, signature: "" } : block));
    expect(unsigned(streamed.content)).toEqual(unsigned(whole.content));
    expect(streamed.stop_reason).toBe("end_turn");
  });

  test("an Anthropic client with a tool: a tool_use block", async () => {
    const message = await anthropicClient(gateway)
      .messages.stream({
        model: server.alias,
        max_tokens: 256,
        messages: [{ role: "user", content: question }],
        tools: [anthropicTool(weather)],
      })
      .finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content.find((block) => block.type === "tool_use")).toMatchObject({ name: "weather" });
  });

  test("a Chat client, streamed: reasoning_content, then the content", async () => {
    const stream = await chatClient(gateway).chat.completions.create({
      model: server.alias,
      messages: [{ role: "user", content: question }],
      max_tokens: 256,
      stream: true,
    });
    let content = "";
    let reasoning = "";
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string | null; reasoning_content?: string } | undefined;
      content += delta?.content ?? "";
      reasoning += delta?.reasoning_content ?? "";
    }
    expect([reasoning, content]).toEqual([THINKING, ANSWER]);
  });
});

describe("Parley's Responses-type upstream on the server's own /v1/responses", () => {
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startParleyFor(`${server.origin}/v1`, "openai-responses");
  });
  afterAll(async () => {
    await gateway?.close();
  });

  test("a Responses client, not streamed and streamed: a reasoning item, then the message", async () => {
    const whole = await chatClient(gateway).responses.create({ model: server.alias, input: question, store: false });
    expect(whole.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    expect(whole.output_text).toBe(ANSWER);
    const stream = chatClient(gateway).responses.stream({ model: server.alias, input: question, store: false });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(final.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    expect(final.output_text).toBe(ANSWER);
  });

  test("a Chat client, streamed, and an Anthropic client with a tool", async () => {
    const stream = await chatClient(gateway).chat.completions.create({
      model: server.alias,
      messages: [{ role: "user", content: question }],
      max_tokens: 256,
      stream: true,
    });
    let content = "";
    for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? "";
    expect(content).toBe(ANSWER);
    const message = await anthropicClient(gateway)
      .messages.stream({
        model: server.alias,
        max_tokens: 256,
        messages: [{ role: "user", content: question }],
        tools: [anthropicTool(weather)],
      })
      .finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
    expect(message.stop_reason).toBe("tool_use");
  });
});

/**
 * Parley splits the tags out of the content byte for byte: the template's newline after `<think>` and blank line
 * after `</think>` stay in the thinking and the text (llama.cpp's own parser trims them), hence the trims here.
 */
describe("the server with --reasoning-format none: thinking stays in content as <think>...</think>", () => {
  let plain: RunningLlamaServer;
  let gateway: RunningGateway;
  beforeAll(async () => {
    plain = await startLlamaServer(build, { reasoningFormat: "none" });
    gateway = await startParleyFor(`${plain.origin}/v1`);
  });
  afterAll(async () => {
    await gateway?.close();
    await plain?.stop();
  });

  test("an Anthropic client gets a thinking block and the text, streamed and not", async () => {
    const request = {
      model: plain.alias,
      max_tokens: 256,
      messages: [{ role: "user" as const, content: question }],
    };
    const trimmed = (content: Anthropic.ContentBlock[]) =>
      content.map((block) =>
        block.type === "thinking" ? block.thinking.trim() : block.type === "text" ? block.text.trim() : block.type,
      );
    const whole = await anthropicClient(gateway).messages.create(request);
    expect(trimmed(whole.content)).toEqual([THINKING, ANSWER]);
    expect(whole.content.map((block) => block.type)).toEqual(["thinking", "text"]);
    const streamed = await anthropicClient(gateway).messages.stream(request).finalMessage();
    expect(streamed.content).toEqual(whole.content);
  });

  test("a Responses client gets a reasoning item and the message", async () => {
    const response = await chatClient(gateway).responses.create({ model: plain.alias, input: question, store: false });
    expect(response.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    expect(response.output_text.trim()).toBe(ANSWER);
  });

  test("a Chat client gets the thinking in reasoning_content, the preset's field, and the rest as content", async () => {
    const completion = await chatClient(gateway).chat.completions.create({
      model: plain.alias,
      messages: [{ role: "user", content: question }],
      max_tokens: 64,
    });
    const message = completion.choices[0]!.message as ReasoningMessage;
    expect([message.reasoning_content?.trim(), message.content?.trim()]).toEqual([THINKING, ANSWER]);
  });
});

describe("token counts: the server's own, and the estimate against them", () => {
  /** The server's own count of an Anthropic request, through its template and tokenizer. */
  const serverCount = async (body: Record<string, unknown>) => {
    const reply = await postJson(`${server.origin}/v1/messages/count_tokens`, body);
    expect(reply.status).toBe(200);
    return (reply.body as { input_tokens: number }).input_tokens;
  };

  test("the recorded counts are this server's, and the estimate keeps its documented band against them", async () => {
    if (recordingTokenCounts) {
      const counts: RecordedCount[] = [];
      for (const spec of tokenCountRequests()) counts.push({ ...spec, inputTokens: await serverCount(spec.body) });
      writeCountFixture({
        server: {
          name: "llama.cpp llama-server",
          source: `${build.version} (llama/gitRelease.bundle), commit ${build.commit}`,
          model:
            "the project's tiny generated model (scripts/llamacpp/tiny-model.py): Qwen2's vocabulary, Qwen3's template",
          endpoint: "POST /v1/messages/count_tokens",
        },
        counts,
      });
    }
    const { counts } = readCountFixture();
    for (const recorded of counts) expect(await serverCount(recorded.body), recorded.name).toBe(recorded.inputTokens);
    for (const row of await estimateAgainst(counts)) {
      expect(row.ratio, row.name).toBeGreaterThanOrEqual(ESTIMATE_BAND.countTokens.low);
      expect(row.ratio, row.name).toBeLessThanOrEqual(ESTIMATE_BAND.countTokens.high);
      expect(row.approximateRatio, row.name).toBeGreaterThanOrEqual(ESTIMATE_BAND.messageStart.low);
      expect(row.approximateRatio, row.name).toBeLessThanOrEqual(ESTIMATE_BAND.messageStart.high);
    }
  });

  test("Claude Code's first turn through Parley: the server's count, not the estimate", async () => {
    const first = readCountFixture().counts.find((recorded) => recorded.name === "first-turn")!;
    const counted = await anthropicClient().messages.countTokens(
      first.body as unknown as Anthropic.MessageCountTokensParams,
    );
    expect(counted.input_tokens).toBe(first.inputTokens);
  });

  test("a Gemini client's countTokens: Parley's request rendered at /apply-template, counted at /tokenize", async () => {
    const before = proxy.exchanges.length;
    const reply = await postJson(`${parley.url}/v1beta/models/${server.alias}:countTokens`, {
      contents: [{ role: "user", parts: [{ text: question }] }],
    });
    expect(reply.status).toBe(200);
    const asked = proxy.exchanges.slice(before);
    expect(asked.map((exchange) => exchange.path)).toEqual(["/apply-template", "/tokenize"]);
    const tokens = (JSON.parse(asked[1]!.responseText) as { tokens: number[] }).tokens;
    expect((reply.body as { totalTokens: number }).totalTokens).toBe(tokens.length);
    // the same question through the server's own Anthropic count: the same template, the same tokens
    const own = await serverCount({ model: server.alias, messages: [{ role: "user", content: question }] });
    expect(tokens.length).toBe(own);
  });

  test("an image on a server without a vision projector: it refuses to count, Parley estimates", async () => {
    const screenshot = readFileSync(
      new URL("../fixtures/llamacpp-server/chat-image-without-projector.json", import.meta.url),
      "utf8",
    );
    const data = /base64,([A-Za-z0-9+/=]+)/.exec(screenshot)![1]!;
    const counted = await anthropicClient().messages.countTokens({
      model: server.alias,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image", source: { type: "base64", media_type: "image/png", data } },
          ],
        },
      ],
    });
    // "What is this?" and a 1 x 1 image (one token by Anthropic's formula), with the message's framing
    expect(counted.input_tokens).toBeGreaterThan(4);
    expect(counted.input_tokens).toBeLessThan(12);
  });
});
