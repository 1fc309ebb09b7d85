import { readFileSync } from "node:fs";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { framesFromChunksFile, framesFromSseFile, type ScriptedUpstream } from "../support/scripted-upstream.js";
import {
  chatMessages,
  type E2eWorld,
  everyObject,
  fixtureJson,
  fixturePath,
  startWorld,
  upstreamBody,
} from "./e2e-support.js";
import { addTool, multiplyTool, runTool, weatherTool } from "./sdk-tools.js";

/**
 * The official OpenAI SDK against the gateway's `POST /v1/chat/completions`: to OpenAI-compatible upstreams and to
 * an Anthropic upstream, streaming and not, scripted upstreams replaying recorded traffic.
 */

let world: E2eWorld;
let client: OpenAI;

beforeEach(async () => {
  world = await startWorld({
    deepseek: { type: "openai", preset: "deepseek" },
    generic: { type: "openai" },
    anthropic: { type: "anthropic" },
  });
  client = new OpenAI({ baseURL: `${world.gateway.url}/v1`, apiKey: "sk-e2e", maxRetries: 0 });
});

afterEach(async () => {
  await world.close();
});

function upstream(name: string): ScriptedUpstream {
  return world.upstreams[name]!;
}

const asFunction = (tool: typeof weatherTool): OpenAI.ChatCompletionTool => ({
  type: "function",
  function: {
    name: tool.name,
    description: tool.description ?? "",
    parameters: tool.input_schema as Record<string, unknown>,
  },
});

/** An assistant message as a client gets it back, with the provider's reasoning field the SDK types do not name. */
type AssistantMessage = OpenAI.ChatCompletionMessage & { reasoning_content?: string };

interface Gathered {
  model: string;
  content: string;
  reasoning: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: string | null;
  usage: OpenAI.CompletionUsage | undefined;
}

/** Folds a streamed answer the way an OpenAI client does: content, reasoning and tool calls by index. */
async function gather(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<Gathered> {
  const gathered: Gathered = {
    model: "",
    content: "",
    reasoning: "",
    toolCalls: [],
    finishReason: null,
    usage: undefined,
  };
  for await (const chunk of stream) {
    gathered.model = chunk.model;
    if (chunk.usage) gathered.usage = chunk.usage;
    const choice = chunk.choices[0];
    if (choice === undefined) continue;
    const delta = choice.delta as OpenAI.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string | null };
    gathered.content += delta.content ?? "";
    gathered.reasoning += delta.reasoning_content ?? "";
    for (const call of delta.tool_calls ?? []) {
      const slot = gathered.toolCalls[call.index] ?? { id: "", name: "", arguments: "" };
      gathered.toolCalls[call.index] = slot;
      if (call.id) slot.id = call.id;
      if (call.function?.name) slot.name += call.function.name;
      slot.arguments += call.function?.arguments ?? "";
    }
    if (choice.finish_reason) gathered.finishReason = choice.finish_reason;
  }
  return gathered;
}

function toolMessages(
  calls: Array<{ id: string; name: string; arguments: string }>,
): OpenAI.ChatCompletionToolMessageParam[] {
  return calls.map((call) => ({
    role: "tool",
    tool_call_id: call.id,
    content: runTool(call.name, JSON.parse(call.arguments)),
  }));
}

const weatherQuestion: OpenAI.ChatCompletionMessageParam[] = [
  { role: "user", content: "What is the weather in San Francisco?" },
];

describe("an OpenAI-compatible upstream", () => {
  test("a tool loop passes reasoning_content back on the second turn (peers #1)", async () => {
    const recorded = fixtureJson<{ choices: Array<{ message: { reasoning_content: string } }> }>(
      "deepseek/deepseek-reasoner-tool-call.json",
    );
    upstream("deepseek").enqueue(
      { kind: "json", body: recorded },
      { kind: "json", body: fixtureJson("azure/deepseek-v4-pro-reasoning.json") },
    );
    const params = { model: "deepseek-reasoner", tools: [asFunction(weatherTool)], reasoning_effort: "high" as const };
    const first = await client.chat.completions.create({ ...params, messages: weatherQuestion });
    expect(first.model).toBe("deepseek-reasoner");
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const message = first.choices[0]!.message as AssistantMessage;
    expect(message.reasoning_content).toBe(recorded.choices[0]!.message.reasoning_content);
    const calls = (message.tool_calls ?? []).map((call) => {
      if (call.type !== "function") throw new Error(`unexpected tool call type ${call.type}`);
      return { id: call.id, name: call.function.name, arguments: call.function.arguments };
    });
    expect(calls).toEqual([{ id: "call_00_9V0vrf86Pc9aelHCJMZqnJBo", name: "weather", arguments: expect.any(String) }]);

    const second = await client.chat.completions.create({
      ...params,
      messages: [...weatherQuestion, message as OpenAI.ChatCompletionAssistantMessageParam, ...toolMessages(calls)],
    });
    expect(second.choices[0]!.message.content).toContain("BRUNSON");
    const turn2 = chatMessages(upstreamBody(upstream("deepseek"), 1));
    expect(turn2.map((entry) => entry.role)).toEqual(["user", "assistant", "tool"]);
    expect(turn2[1]!.reasoning_content).toBe(recorded.choices[0]!.message.reasoning_content);
    expect(turn2[2]).toMatchObject({ tool_call_id: "call_00_9V0vrf86Pc9aelHCJMZqnJBo" });
    expect(String(turn2[2]!.content)).toContain("San Francisco: 21 degrees and sunny");
  });

  test("a streamed tool loop gives reasoning, tool calls and usage, and reasoning goes back on turn 2 (peers #1)", async () => {
    upstream("deepseek").enqueue(
      {
        kind: "sse",
        frames: framesFromChunksFile(fixturePath("deepseek/deepseek-reasoner-tool-call.chunks.jsonl"), "openai"),
      },
      { kind: "sse", frames: framesFromSseFile(fixturePath("deepseek/deepseek-reasoner-thinking.sse")) },
    );
    const params = {
      model: "deepseek-reasoner",
      tools: [asFunction(weatherTool)],
      stream: true as const,
      stream_options: { include_usage: true },
    };
    const first = await gather(await client.chat.completions.create({ ...params, messages: weatherQuestion }));
    const reasoning = readFileSync(fixturePath("deepseek/deepseek-reasoner-tool-call.chunks.jsonl"), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map(
        (line) =>
          (JSON.parse(line) as { choices: Array<{ delta: { reasoning_content?: string | null } }> }).choices[0]?.delta
            .reasoning_content ?? "",
      )
      .join("");
    expect(first.reasoning).toBe(reasoning);
    expect(first.finishReason).toBe("tool_calls");
    expect(first.toolCalls).toHaveLength(1);
    expect(JSON.parse(first.toolCalls[0]!.arguments)).toEqual({ location: "San Francisco" });
    expect(first.usage).toMatchObject({ prompt_tokens: 339, completion_tokens: 83 });

    const assistant = {
      role: "assistant" as const,
      content: first.content === "" ? null : first.content,
      reasoning_content: first.reasoning,
      tool_calls: first.toolCalls.map((call) => ({
        id: call.id,
        type: "function" as const,
        function: { name: call.name, arguments: call.arguments },
      })),
    };
    const second = await gather(
      await client.chat.completions.create({
        ...params,
        messages: [...weatherQuestion, assistant, ...toolMessages(first.toolCalls)],
      }),
    );
    expect(second.finishReason).toBe("stop");
    expect(second.content.length).toBeGreaterThan(0);
    const turn2 = chatMessages(upstreamBody(upstream("deepseek"), 1));
    expect(turn2[1]).toMatchObject({ role: "assistant", reasoning_content: reasoning });
    expect(turn2[2]).toMatchObject({ role: "tool", tool_call_id: first.toolCalls[0]!.id });
  });

  test("parallel tool calls stream as separate calls with their own ids and arguments", async () => {
    upstream("generic").enqueue({
      kind: "sse",
      frames: framesFromSseFile(fixturePath("openai/gpt-5-parallel-tools.sse")),
    });
    const answer = await gather(
      await client.chat.completions.create({
        model: "generic-gpt-5",
        stream: true,
        tools: [asFunction(addTool), asFunction(multiplyTool)],
        messages: [{ role: "user", content: "Add and multiply 2 and 3." }],
      }),
    );
    expect(answer.finishReason).toBe("tool_calls");
    expect(answer.toolCalls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([
      ["add", { a: 2, b: 3 }],
      ["multiply", { a: 2, b: 3 }],
    ]);
    expect(answer.toolCalls[0]!.id).toBe("call_8ElDxJj6u7IUDEwQIrwFbveM");
    expect(new Set(answer.toolCalls.map((call) => call.id)).size).toBe(2);
    expect(answer.model).toBe("generic-gpt-5");
  });
});

describe("an Anthropic upstream behind POST /v1/chat/completions", () => {
  test("a tool loop: thinking as reasoning_content, tool_use as tool_calls, the result back as tool_result", async () => {
    upstream("anthropic").enqueue(
      { kind: "json", body: fixtureJson("anthropic/claude-sonnet-4-thinking-tool-use.json") },
      { kind: "json", body: fixtureJson("anthropic/claude-sonnet-4.5-thinking-signature.json") },
    );
    const params = { model: "anthropic-sonnet", tools: [asFunction(weatherTool)], max_tokens: 2048 };
    const question: OpenAI.ChatCompletionMessageParam[] = [
      { role: "system", content: "You are a weather assistant." },
      { role: "user", content: "Weather in Florence?" },
    ];
    const first = await client.chat.completions.create({ ...params, messages: question });
    const message = first.choices[0]!.message as AssistantMessage;
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    expect(message.reasoning_content).toMatch(/^The user is asking about the weather in Florence/);
    const call = message.tool_calls?.[0];
    if (call?.type !== "function")
      throw new Error(`expected a function tool call, got ${JSON.stringify(message.tool_calls)}`);
    expect(call.id).toBe("toolu_014azqsWLU8Djh6RhmBGRC2u");
    expect(JSON.parse(call.function.arguments)).toEqual({ location: "Florence, Italy" });
    expect(first.usage).toMatchObject({ prompt_tokens: 424, completion_tokens: 118 });

    const calls = [{ id: call.id, name: call.function.name, arguments: call.function.arguments }];
    const second = await client.chat.completions.create({
      ...params,
      messages: [...question, message as OpenAI.ChatCompletionAssistantMessageParam, ...toolMessages(calls)],
    });
    expect(second.choices[0]!.message.content).toBe("925 ÷ 5 = 185");
    expect(second.model).toBe("anthropic-sonnet");

    const body = upstreamBody(upstream("anthropic"), 1);
    expect(body.system).toEqual(expect.anything());
    expect(JSON.stringify(body.system)).toContain("You are a weather assistant.");
    const messages = body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    expect(messages.map((entry) => entry.role)).toEqual(["user", "assistant", "user"]);
    expect(
      Array.isArray(messages[1]!.content)
        ? messages[1]!.content.filter((block) => block.type === "tool_use")
        : messages[1],
    ).toEqual([
      expect.objectContaining({
        id: "toolu_014azqsWLU8Djh6RhmBGRC2u",
        name: "weather",
        input: { location: "Florence, Italy" },
      }),
    ]);
    expect(messages[2]!.content[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: "toolu_014azqsWLU8Djh6RhmBGRC2u",
    });
    expect(JSON.stringify(messages[2]!.content[0])).toContain("Florence, Italy: 21 degrees and sunny");
    // Thinking that came back without its signature never reaches Anthropic as an unsigned thinking block.
    for (const block of everyObject(messages))
      if (block.type === "thinking") expect(block.signature).toEqual(expect.any(String));
  });

  test("streaming: Anthropic events become chunks with reasoning, tool calls and usage", async () => {
    upstream("anthropic").enqueue(
      { kind: "sse", frames: framesFromSseFile(fixturePath("anthropic/claude-sonnet-4-parallel-tool-use.sse")) },
      { kind: "sse", frames: framesFromSseFile(fixturePath("anthropic/claude-sonnet-4-thinking-long.sse")) },
    );
    const params = {
      model: "anthropic-sonnet",
      max_tokens: 2048,
      stream: true as const,
      stream_options: { include_usage: true },
      tools: [asFunction(weatherTool)],
    };
    const question: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in two cities?" }];
    const first = await gather(await client.chat.completions.create({ ...params, messages: question }));
    expect(first.finishReason).toBe("tool_calls");
    expect(first.toolCalls.length).toBe(2);
    for (const call of first.toolCalls) expect(call.id).toMatch(/^toolu_/);
    expect(first.usage?.completion_tokens).toBeGreaterThan(0);
    const firstRequest = upstreamBody(upstream("anthropic"), 0);
    expect(firstRequest.stream).toBe(true);

    const assistant = {
      role: "assistant" as const,
      content: first.content === "" ? null : first.content,
      tool_calls: first.toolCalls.map((call) => ({
        id: call.id,
        type: "function" as const,
        function: { name: call.name, arguments: call.arguments },
      })),
    };
    const results = first.toolCalls.map((call) => ({
      role: "tool" as const,
      tool_call_id: call.id,
      content: `result of ${call.id}`,
    }));
    const second = await gather(
      await client.chat.completions.create({ ...params, messages: [...question, assistant, ...results] }),
    );
    expect(second.finishReason).toBe("stop");
    expect(second.reasoning.length).toBeGreaterThan(0);
    expect(second.content.length).toBeGreaterThan(0);

    const messages = upstreamBody(upstream("anthropic"), 1).messages as Array<{
      role: string;
      content: Array<Record<string, unknown>>;
    }>;
    // Both results in the one user message after the assistant's two tool_use blocks, in order.
    expect(messages.map((entry) => entry.role)).toEqual(["user", "assistant", "user"]);
    expect(
      Array.isArray(messages[1]!.content)
        ? messages[1]!.content.filter((block) => block.type === "tool_use").map((block) => block.id)
        : [],
    ).toEqual(first.toolCalls.map((call) => call.id));
    expect(messages[2]!.content.map((block) => block.tool_use_id)).toEqual(first.toolCalls.map((call) => call.id));
  });
});

describe("errors as the SDK sees them", () => {
  test("bad input raises the SDK's BadRequestError with param naming the field", async () => {
    const attempt = client.chat.completions.create({
      model: "generic-model",
      messages: [{ role: "user", content: [{ type: "text", text: 5 as unknown as string }] }],
    });
    await expect(attempt).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    const error = (await attempt.catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error.status).toBe(400);
    expect(error.param).toBe("messages[0].content[0].text");
    expect(error.type).toBe("invalid_request_error");
    expect(upstream("generic").requests).toEqual([]);
  });
});
