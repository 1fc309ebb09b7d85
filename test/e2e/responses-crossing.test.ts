import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { decodeOriginSignature } from "../../src/core/index.js";
import { framesFromChunksFile, framesFromSseFile, type ScriptedUpstream } from "../support/scripted-upstream.js";
import { chatMessages, type E2eWorld, fixtureJson, fixturePath, startWorld, upstreamBody } from "./e2e-support.js";

/**
 * Reasoning crossing the Responses API, with the official SDKs on each side: Anthropic and Chat clients in front
 * of a Responses provider (`openai-responses`), and a Responses client in front of an Anthropic provider. What a
 * provider sealed goes back to it, unmodified, and to no one else.
 */

let world: E2eWorld;

beforeEach(async () => {
  world = await startWorld({
    openai: { type: "openai-responses" },
    other: { type: "openai-responses" },
    anthropic: { type: "anthropic" },
  });
});

afterEach(async () => {
  await world.close();
});

const upstream = (name: string): ScriptedUpstream => world.upstreams[name]!;
type Json = Record<string, unknown>;

const recordedStream = "openai-responses/gpt-5.1-codex-max-reasoning-tool-call.chunks.jsonl";
const recorded = () => framesFromChunksFile(fixturePath(recordedStream), "openai-responses").map((frame) => frame);
/** The reasoning item the recorded stream ends with: what its provider must get back, byte for byte. */
function recordedReasoning(): Json {
  const done = recorded()
    .map((frame) => JSON.parse(frame.split("data: ")[1]!) as Json)
    .find((event) => event.type === "response.output_item.done")!;
  return done.item as Json;
}

const calculator = {
  name: "calculator",
  description: "A minimal calculator",
  input_schema: {
    type: "object" as const,
    properties: { a: { type: "number" }, b: { type: "number" }, op: { type: "string" } },
  },
};

const doneAnswer = {
  kind: "json" as const,
  body: fixtureJson("openai-responses/gpt-5-mini-reasoning-encrypted.json"),
};

describe("an Anthropic client on a Responses provider", () => {
  test("its tool loop: thinking signed with the origin envelope goes back to the provider as the item it made", async () => {
    const client = new Anthropic({ baseURL: world.gateway.url, apiKey: "sk-ant", maxRetries: 0 });
    upstream("openai").enqueue({ kind: "sse", frames: recorded() }, doneAnswer);
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "Compute (12+7)*3*10 step by step." }];
    const stream = client.messages.stream({
      model: "openai-gpt-5.1-codex-max",
      max_tokens: 2048,
      tools: [calculator],
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages,
    });
    const first = await stream.finalMessage();
    expect(first.content.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
    const thinking = first.content[0] as Anthropic.ThinkingBlock;
    const item = recordedReasoning();
    expect(thinking.thinking).toBe(((item.summary as Json[])[0] as { text: string }).text);
    expect(decodeOriginSignature(thinking.signature)).toMatchObject({ provider: "openai", id: item.id });
    expect(first.stop_reason).toBe("tool_use");
    // The request asked for reasoning summaries, as thinking on asks, and for the sealed reasoning back.
    expect(upstreamBody(upstream("openai"), 0)).toMatchObject({
      reasoning: { summary: "auto" },
      store: false,
      include: ["reasoning.encrypted_content"],
    });

    const call = first.content[1] as Anthropic.ToolUseBlock;
    const second = await client.messages.create({
      model: "openai-gpt-5.1-codex-max",
      max_tokens: 2048,
      tools: [calculator],
      thinking: { type: "enabled", budget_tokens: 1024 },
      messages: [
        ...messages,
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "19" }] },
      ],
    });
    expect(second.content.map((block) => block.type)).toEqual(["thinking", "text"]);
    const input = upstreamBody(upstream("openai"), 1).input as Json[];
    expect(input).toEqual([
      { role: "user", content: "Compute (12+7)*3*10 step by step." },
      { id: item.id, type: "reasoning", summary: item.summary, encrypted_content: item.encrypted_content },
      { type: "function_call", call_id: call.id, name: "calculator", arguments: '{"a":12,"b":7,"op":"add"}' },
      { type: "function_call_output", call_id: call.id, output: "19" },
    ]);
  });

  test("the same reasoning routed to another Responses provider goes as text, never sealed", async () => {
    const client = new Anthropic({ baseURL: world.gateway.url, apiKey: "sk-ant", maxRetries: 0 });
    upstream("openai").enqueue({ kind: "sse", frames: recorded() });
    upstream("other").enqueue(doneAnswer);
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "Compute." }];
    const first = await client.messages
      .stream({ model: "openai-x", max_tokens: 512, tools: [calculator], messages })
      .finalMessage();
    const call = first.content[1] as Anthropic.ToolUseBlock;
    await client.messages.create({
      model: "other-y",
      max_tokens: 512,
      tools: [calculator],
      messages: [
        ...messages,
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "19" }] },
      ],
    });
    const sent = JSON.stringify(upstreamBody(upstream("other"), 0));
    const item = recordedReasoning();
    expect(sent).not.toContain(item.encrypted_content as string);
    expect(sent).not.toContain("parley.v1.");
    expect(sent).toContain("**Calculating step-by-step using calculator**");
  });
});

/** A streamed Chat answer as a client that keeps reasoning gathers it: its text, reasoning, details and calls. */
async function gather(stream: AsyncIterable<OpenAI.ChatCompletionChunk>) {
  const message = {
    role: "assistant" as const,
    content: "",
    reasoning_content: "",
    reasoning_details: [] as Json[],
    tool_calls: [] as Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>,
  };
  for await (const chunk of stream) {
    const delta = (chunk.choices[0]?.delta ?? {}) as Json;
    message.content += (delta.content as string | undefined) ?? "";
    message.reasoning_content += (delta.reasoning_content as string | undefined) ?? "";
    message.reasoning_details.push(...((delta.reasoning_details as Json[] | undefined) ?? []));
    for (const call of (delta.tool_calls as Json[] | undefined) ?? []) {
      const index = call.index as number;
      const fn = (call.function ?? {}) as { name?: string; arguments?: string };
      message.tool_calls[index] ??= { id: call.id as string, type: "function", function: { name: "", arguments: "" } };
      message.tool_calls[index]!.function.name += fn.name ?? "";
      message.tool_calls[index]!.function.arguments += fn.arguments ?? "";
    }
  }
  return message;
}

describe("a Chat client on a Responses provider", () => {
  test("sealed reasoning rides in reasoning_details and goes back to its provider unmodified", async () => {
    const client = new OpenAI({ baseURL: `${world.gateway.url}/v1`, apiKey: "sk", maxRetries: 0 });
    upstream("openai").enqueue({ kind: "sse", frames: recorded() }, doneAnswer);
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: "function", function: { name: "calculator", parameters: calculator.input_schema } },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Compute." }];
    const first = await gather(
      await client.chat.completions.create({ model: "openai-m", messages, tools, stream: true }),
    );
    const item = recordedReasoning();
    expect(first.reasoning_content).toBe(((item.summary as Json[])[0] as { text: string }).text);
    expect(first.reasoning_details).toHaveLength(1);
    expect(decodeOriginSignature(first.reasoning_details![0]!.signature as string)).toMatchObject({
      format: "responses",
      provider: "openai",
      sealed: item.encrypted_content,
    });
    const call = first.tool_calls[0]!;
    const second = await client.chat.completions.create({
      model: "openai-m",
      tools,
      messages: [
        ...messages,
        first as unknown as OpenAI.ChatCompletionAssistantMessageParam,
        { role: "tool", tool_call_id: call.id, content: "19" },
      ],
    });
    expect(second.choices[0]!.message.content).toContain("570");
    const input = upstreamBody(upstream("openai"), 1).input as Json[];
    expect(input[1]).toEqual({
      id: item.id,
      type: "reasoning",
      summary: item.summary,
      encrypted_content: item.encrypted_content,
    });
    expect(input.slice(2)).toEqual([
      { type: "function_call", call_id: call.id, name: "calculator", arguments: call.function.arguments },
      { type: "function_call_output", call_id: call.id, output: "19" },
    ]);
  });
});

describe("a Responses client on an Anthropic provider", () => {
  test("a signed thinking block reaches it as a reasoning item and goes back to Anthropic exactly", async () => {
    const client = new OpenAI({ baseURL: `${world.gateway.url}/v1`, apiKey: "sk", maxRetries: 0 });
    const sse = framesFromSseFile(fixturePath("anthropic/claude-sonnet-4-thinking-tool-use.sse"));
    upstream("anthropic").enqueue(
      { kind: "sse", frames: sse },
      { kind: "json", body: fixtureJson("anthropic/claude-sonnet-4.5-thinking-signature.json") },
    );
    const tools: OpenAI.Responses.FunctionTool[] = [
      { type: "function", name: "get_weather", parameters: { type: "object", properties: {} }, strict: false },
    ];
    const stream = client.responses.stream({
      model: "anthropic-claude-sonnet-4",
      input: "Weather in Paris?",
      tools,
      reasoning: { summary: "auto", effort: "low" },
      store: false,
    });
    const first = await stream.finalResponse();
    expect(first.output.map((item) => item.type)).toEqual(["reasoning", "function_call"]);
    // Asking for reasoning turned thinking on, with a budget for the effort.
    expect(upstreamBody(upstream("anthropic"), 0)).toMatchObject({
      thinking: { type: "enabled", budget_tokens: 2048 },
      output_config: { effort: "low" },
    });
    const thinkingEvents = sse
      .map((frame) => JSON.parse(frame.split("data: ")[1]!) as Json)
      .filter((event) => event.type === "content_block_delta");
    const thought = thinkingEvents.map((event) => ((event.delta as Json).thinking as string) ?? "").join("");
    const signature = thinkingEvents.map((event) => ((event.delta as Json).signature as string) ?? "").join("");
    const reasoning = first.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary).toEqual([{ type: "summary_text", text: thought }]);

    const call = first.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
    await client.responses.create({
      model: "anthropic-claude-sonnet-4",
      input: [
        { role: "user", content: "Weather in Paris?" },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { type: "function_call_output", call_id: call.call_id, output: "sunny" },
      ],
      tools,
      reasoning: { summary: "auto", effort: "low" },
      store: false,
    });
    const messages = chatMessages(upstreamBody(upstream("anthropic"), 1));
    expect(messages[1]!.content).toEqual([
      { type: "thinking", thinking: thought, signature },
      { type: "tool_use", id: call.call_id, name: call.name, input: JSON.parse(call.arguments) },
    ]);
    expect(messages[2]).toEqual({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: call.call_id, content: "sunny" }],
    });
  });
});

describe("a Responses client on a Responses provider", () => {
  test("the provider's reasoning reaches the client sealed in the envelope and goes back unmodified; hosted tools go on", async () => {
    const client = new OpenAI({ baseURL: `${world.gateway.url}/v1`, apiKey: "sk", maxRetries: 0 });
    upstream("openai").enqueue({ kind: "sse", frames: recorded() }, doneAnswer);
    const tools: OpenAI.Responses.Tool[] = [
      { type: "function", name: "calculator", parameters: calculator.input_schema, strict: false },
      { type: "web_search" },
    ];
    const question: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "Compute." }];
    const params = {
      model: "openai-gpt-5.1-codex-max",
      tools,
      store: false,
      include: ["reasoning.encrypted_content" as const],
    };
    const first = await client.responses.stream({ ...params, input: question }).finalResponse();
    const item = recordedReasoning();
    const reasoning = first.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning).toMatchObject({ id: item.id, summary: item.summary });
    expect(reasoning.encrypted_content).not.toBe(item.encrypted_content);
    expect(upstreamBody(upstream("openai"), 0).tools).toEqual(tools);

    const call = first.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
    await client.responses.create({
      ...params,
      input: [
        ...question,
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { type: "function_call_output", call_id: call.call_id, output: "19" },
      ],
    });
    expect(upstreamBody(upstream("openai"), 1).input).toEqual([
      { role: "user", content: "Compute." },
      { id: item.id, type: "reasoning", summary: item.summary, encrypted_content: item.encrypted_content },
      { type: "function_call", call_id: call.call_id, name: "calculator", arguments: call.arguments },
      { type: "function_call_output", call_id: call.call_id, output: "19" },
    ]);
  });
});
