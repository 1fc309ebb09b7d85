import { readFileSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { framesFromChunksFile, framesFromSseFile, type ScriptedUpstream } from "../support/scripted-upstream.js";
import {
  chatMessages,
  chunkedAnswer,
  type E2eWorld,
  everyObject,
  fixtureJson,
  fixturePath,
  lossyEntries,
  startWorld,
  upstreamBody,
} from "./e2e-support.js";
import { addTool, magicTool, multiplyTool, runTool, toolResultsFor, weatherTool } from "./sdk-tools.js";

/**
 * The official Anthropic SDK against the gateway, scripted upstreams replaying recorded provider traffic.
 * Each test asserts on what the SDK received and on what the upstream was sent.
 */

let world: E2eWorld;
let client: Anthropic;

beforeEach(async () => {
  world = await startWorld(
    {
      deepseek: { type: "openai", preset: "deepseek" },
      vllm: { type: "openai", preset: "vllm" },
      generic: { type: "openai" },
      local: { type: "openai", compat: { textToolCallFormat: "hermes" } },
      openrouter: { type: "openai", preset: "openrouter" },
      capped: { type: "openai", compat: { supportsToolChoice: false, maxTokensCap: 8192 } },
      anthropic: { type: "anthropic" },
    },
    { routes: [{ match: "claude-opus-*", provider: "deepseek", model: "deepseek-v4-flash" }] },
  );
  client = new Anthropic({ baseURL: world.gateway.url, apiKey: "sk-ant-e2e", maxRetries: 0 });
});

afterEach(async () => {
  await world.close();
});

function upstream(name: string): ScriptedUpstream {
  return world.upstreams[name]!;
}

function json(relative: string) {
  return { kind: "json" as const, body: fixtureJson(relative) };
}

function sse(relative: string) {
  return { kind: "sse" as const, frames: framesFromSseFile(fixturePath(relative)) };
}

function chunks(relative: string) {
  return { kind: "sse" as const, frames: framesFromChunksFile(fixturePath(relative), "openai") };
}

type Params = Omit<Anthropic.MessageCreateParamsNonStreaming, "stream">;

/** One turn, non-streaming (`messages.create`) or streaming (`messages.stream(...).finalMessage()`). */
async function ask(params: Params, stream: boolean): Promise<Anthropic.Message> {
  if (!stream) return client.messages.create({ ...params, stream: false });
  return client.messages.stream(params).finalMessage();
}

/** Turn 1, the test runs the tools, turn 2: what a client's agent loop does. */
async function toolLoop(params: Params, stream: boolean) {
  const first = await ask(params, stream);
  expect(first.stop_reason).toBe("tool_use");
  const results = toolResultsFor(first.content);
  expect(results.length).toBeGreaterThan(0);
  const secondMessages: Anthropic.MessageParam[] = [
    ...params.messages,
    { role: "assistant", content: first.content },
    { role: "user", content: results },
  ];
  const second = await ask({ ...params, messages: secondMessages }, stream);
  return { first, second, results, secondMessages };
}

function reasoningOfChunks(relative: string, field: string): string {
  return readFileSync(fixturePath(relative), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map(
      (line) => (JSON.parse(line) as { choices: Array<{ delta: Record<string, unknown> }> }).choices[0]?.delta[field],
    )
    .filter((piece): piece is string => typeof piece === "string")
    .join("");
}

function thinkingOf(message: Anthropic.Message): Anthropic.ThinkingBlock {
  const block = message.content.find((part): part is Anthropic.ThinkingBlock => part.type === "thinking");
  if (block === undefined) throw new Error(`no thinking block in ${JSON.stringify(message.content)}`);
  return block;
}

function textOf(message: Anthropic.Message): string {
  return message.content
    .filter((part): part is Anthropic.TextBlock => part.type === "text")
    .map((part) => part.text)
    .join("");
}

function assistantWithToolCalls(body: Record<string, unknown>) {
  const found = chatMessages(body).find((message) => message.role === "assistant" && Array.isArray(message.tool_calls));
  if (found === undefined) throw new Error(`no assistant tool-call message in ${JSON.stringify(body.messages)}`);
  return found as {
    role: string;
    content?: unknown;
    tool_calls: Array<{ id: string; function: { name: string; arguments: string } }>;
  } & Record<string, unknown>;
}

const weatherQuestion: Anthropic.MessageParam[] = [{ role: "user", content: "What is the weather in San Francisco?" }];
const thinkingOn = { type: "enabled", budget_tokens: 1024 } as const;

describe("a whole tool loop with thinking on", () => {
  const deepseekReasoning = fixtureJson<{ choices: Array<{ message: { reasoning_content: string } }> }>(
    "deepseek/deepseek-reasoner-tool-call.json",
  ).choices[0]!.message.reasoning_content;

  test("reasoning_content is passed back on the second turn of a tool loop (peers #1)", async () => {
    upstream("deepseek").enqueue(
      json("deepseek/deepseek-reasoner-tool-call.json"),
      json("azure/deepseek-v4-pro-reasoning.json"),
    );
    const { first, second } = await toolLoop(
      {
        model: "deepseek-reasoner",
        max_tokens: 2048,
        thinking: thinkingOn,
        tools: [weatherTool],
        messages: weatherQuestion,
      },
      false,
    );
    expect(first.content.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
    expect(thinkingOf(first).thinking).toBe(deepseekReasoning);
    expect(first.content[1]).toMatchObject({ type: "tool_use", name: "weather", input: { location: "San Francisco" } });
    expect(textOf(second)).toContain("BRUNSON");

    const turn2 = upstreamBody(upstream("deepseek"), 1);
    const assistant = assistantWithToolCalls(turn2);
    expect(assistant.reasoning_content).toBe(deepseekReasoning);
    expect(assistant.tool_calls[0]!.id).toBe("call_00_9V0vrf86Pc9aelHCJMZqnJBo");
    expect(JSON.parse(assistant.tool_calls[0]!.function.arguments)).toEqual({ location: "San Francisco" });
    const tool = chatMessages(turn2).find((message) => message.role === "tool");
    expect(tool).toMatchObject({ tool_call_id: "call_00_9V0vrf86Pc9aelHCJMZqnJBo" });
    expect(JSON.stringify(tool?.content)).toContain("San Francisco: 21 degrees and sunny");
    // Parley's origin envelope is for the client's eyes only.
    expect(upstream("deepseek").requests[1]!.rawBody).not.toContain("parley.v1.");
  });

  test("reasoning_content is passed back on the second turn of a tool loop, streaming (peers #1)", async () => {
    upstream("deepseek").enqueue(
      chunks("deepseek/deepseek-reasoner-tool-call.chunks.jsonl"),
      sse("deepseek/deepseek-reasoner-thinking.sse"),
    );
    const { first, second } = await toolLoop(
      {
        model: "deepseek-reasoner",
        max_tokens: 2048,
        thinking: thinkingOn,
        tools: [weatherTool],
        messages: weatherQuestion,
      },
      true,
    );
    const reasoning = reasoningOfChunks("deepseek/deepseek-reasoner-tool-call.chunks.jsonl", "reasoning_content");
    expect(first.content.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
    expect(thinkingOf(first).thinking).toBe(reasoning);
    expect(first.content[1]).toMatchObject({ type: "tool_use", input: { location: "San Francisco" } });
    expect(second.stop_reason).toBe("end_turn");
    expect(thinkingOf(second).thinking.length).toBeGreaterThan(0);
    expect(textOf(second).length).toBeGreaterThan(0);

    const assistant = assistantWithToolCalls(upstreamBody(upstream("deepseek"), 1));
    expect(assistant.reasoning_content).toBe(reasoning);
    expect(JSON.parse(assistant.tool_calls[0]!.function.arguments)).toEqual({ location: "San Francisco" });
  });

  test("a tool-call turn that lost its thinking still reaches DeepSeek with non-empty reasoning_content (peers #1)", async () => {
    upstream("deepseek").enqueue(json("azure/deepseek-v4-pro-reasoning.json"));
    const { response } = await client.messages
      .create({
        model: "deepseek-reasoner",
        max_tokens: 1024,
        thinking: thinkingOn,
        tools: [weatherTool],
        messages: [
          ...weatherQuestion,
          {
            role: "assistant",
            content: [
              { type: "tool_use", id: "call_lost_thinking", name: "weather", input: { location: "San Francisco" } },
            ],
          },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "call_lost_thinking", content: "foggy" }] },
        ],
      })
      .withResponse();
    const assistant = assistantWithToolCalls(upstreamBody(upstream("deepseek"), 0));
    expect(typeof assistant.reasoning_content).toBe("string");
    expect((assistant.reasoning_content as string).trim()).not.toBe("");
    expect(lossyEntries(response.headers.get("x-parley-lossy")).length).toBeGreaterThan(0);
  });

  test("vLLM-style reasoning goes back in the reasoning field on the second turn", async () => {
    const recorded = fixtureJson<{ choices: Array<{ message: { reasoning: string } }> }>(
      "cerebras/zai-glm-4.7-reasoning-tool-call.json",
    );
    upstream("vllm").enqueue(
      json("cerebras/zai-glm-4.7-reasoning-tool-call.json"),
      json("azure/deepseek-v4-pro-reasoning.json"),
    );
    const { first } = await toolLoop(
      {
        model: "vllm-glm-4.7",
        max_tokens: 2048,
        thinking: thinkingOn,
        tools: [magicTool],
        messages: [{ role: "user", content: "What is the magic number?" }],
      },
      false,
    );
    expect(thinkingOf(first).thinking).toBe(recorded.choices[0]!.message.reasoning);
    const assistant = assistantWithToolCalls(upstreamBody(upstream("vllm"), 1));
    expect(assistant.reasoning).toBe(recorded.choices[0]!.message.reasoning);
    expect(assistant.reasoning_content).toBeUndefined();
    expect(assistant.tool_calls[0]!.id).toBe("85e4fd267");
    expect(chatMessages(upstreamBody(upstream("vllm"), 1)).at(-1)).toMatchObject({
      role: "tool",
      tool_call_id: "85e4fd267",
    });
  });

  for (const stream of [false, true]) {
    test(`<think> tags become a thinking block and go back inline to a generic upstream (peers #3)${stream ? ", streaming" : ""}`, async () => {
      upstream("generic").enqueue(
        stream ? sse("scripted/think-inline-tool-call.sse") : json("scripted/think-inline-tool-call.json"),
        stream ? sse("llamacpp/gpt-oss-20b-after-tool-result.sse") : json("azure/deepseek-v4-pro-reasoning.json"),
      );
      const { first, second } = await toolLoop(
        {
          model: "generic-qwen3",
          max_tokens: 2048,
          thinking: thinkingOn,
          tools: [weatherTool],
          messages: [{ role: "user", content: "Weather in Lisbon?" }],
        },
        stream,
      );
      expect(first.content.map((block) => block.type)).toEqual(["thinking", "text", "tool_use"]);
      expect(thinkingOf(first).thinking).toContain("The user wants the weather in Lisbon.");
      // Claude Code drops thinking blocks without a signature: Parley signs them with its origin envelope.
      expect(thinkingOf(first).signature.length).toBeGreaterThan(0);
      expect(textOf(first)).not.toMatch(/<\/?think>/);
      expect(textOf(first).trim()).toBe("Let me look that up.");
      expect(first.content[2]).toMatchObject({ type: "tool_use", name: "weather", input: { location: "Lisbon" } });
      expect(textOf(second).length).toBeGreaterThan(0);

      const assistant = assistantWithToolCalls(upstreamBody(upstream("generic"), 1));
      expect(typeof assistant.content).toBe("string");
      expect(assistant.content as string).toMatch(
        /^<think>[\s\S]*The user wants the weather in Lisbon\.[\s\S]*<\/think>[\s\S]*Let me look that up\./,
      );
      expect(JSON.parse(assistant.tool_calls[0]!.function.arguments)).toEqual({ location: "Lisbon" });
    });
  }
});

describe("parallel tool calls", () => {
  for (const stream of [false, true]) {
    test(`two calls in one answer become two tool_use blocks and two tool messages in order${stream ? ", streaming" : ""}`, async () => {
      upstream("generic").enqueue(
        stream ? sse("zai/glm-4.7-flash-parallel-tools.sse") : json("zai/glm-4.7-flash-parallel-tools.json"),
        stream ? sse("zai/glm-4.7-flash-thinking-after-tool-result.sse") : json("azure/deepseek-v4-pro-reasoning.json"),
      );
      const { first, results } = await toolLoop(
        {
          model: "generic-glm-4.7-flash",
          max_tokens: 2048,
          tools: [addTool, multiplyTool],
          messages: [{ role: "user", content: "Add and multiply 2 and 3, both at once." }],
        },
        stream,
      );
      const calls = first.content.filter((block): block is Anthropic.ToolUseBlock => block.type === "tool_use");
      expect(calls.map((call) => [call.name, call.input])).toEqual([
        ["add", { a: 2, b: 3 }],
        ["multiply", { a: 2, b: 3 }],
      ]);
      expect(new Set(calls.map((call) => call.id)).size).toBe(2);
      expect(results.map((result) => result.content)).toEqual(["5", "6"]);

      const turn2 = chatMessages(upstreamBody(upstream("generic"), 1));
      const assistant = assistantWithToolCalls({ messages: turn2 });
      expect(assistant.tool_calls.map((call) => call.id)).toEqual(calls.map((call) => call.id));
      const tools = turn2.filter((message) => message.role === "tool");
      expect(tools.map((message) => message.tool_call_id)).toEqual(calls.map((call) => call.id));
      const contents = tools.map((message) =>
        typeof message.content === "string" ? message.content : JSON.stringify(message.content),
      );
      expect(contents[0]).toContain("5");
      expect(contents[1]).toContain("6");
    });
  }
});

describe("an Anthropic upstream", () => {
  test("thinking blocks and signatures reach the upstream byte-for-byte on turn 2, beta query forwarded (invariant 8)", async () => {
    upstream("anthropic").enqueue(
      { kind: "sse", frames: framesFromSseFile(fixturePath("anthropic/claude-sonnet-4-thinking-tool-use.sse")) },
      { kind: "sse", frames: framesFromSseFile(fixturePath("anthropic/claude-sonnet-4-thinking-long.sse")) },
    );
    const params = {
      model: "anthropic-sonnet",
      max_tokens: 4096,
      thinking: thinkingOn,
      tools: [weatherTool],
      messages: [{ role: "user" as const, content: "Weather in Florence?" }],
      betas: ["interleaved-thinking-2025-05-14"],
    };
    // Claude Code calls `/v1/messages?beta=true`; the SDK is told to do the same.
    const beta = { query: { beta: "true" } };
    const first = await client.beta.messages.stream(params, beta).finalMessage();
    expect(first.content.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
    const signature = (first.content[0] as Anthropic.Beta.BetaThinkingBlock).signature;
    expect(signature).toMatch(/^EtYDCkYICxgCKkAVHEWRYo6RgSMs4Z/);
    const toolUse = first.content[1] as Anthropic.Beta.BetaToolUseBlock;
    const messages: Anthropic.Beta.BetaMessageParam[] = [
      ...params.messages,
      { role: "assistant", content: first.content },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: toolUse.id, content: runTool(toolUse.name, toolUse.input) }],
      },
    ];
    const second = await client.beta.messages.stream({ ...params, messages }, beta).finalMessage();
    expect(second.content.map((block) => block.type)).toEqual(["thinking", "text"]);

    const recorded = upstream("anthropic").requests[1]!;
    expect(recorded.path).toContain("beta=true");
    expect(recorded.headers["anthropic-beta"]).toContain("interleaved-thinking-2025-05-14");
    expect((recorded.body as { messages: unknown }).messages).toEqual(JSON.parse(JSON.stringify(messages)));
    expect(recorded.rawBody).toContain(JSON.stringify(signature));
    expect(second.model).toBe("anthropic-sonnet");
  });

  test("thinking from an OpenAI-compatible model is never replayed to Anthropic as a signed block (peers #2)", async () => {
    upstream("deepseek").enqueue(json("deepseek/deepseek-reasoner-tool-call.json"));
    upstream("anthropic").enqueue(json("anthropic/claude-sonnet-4.5-thinking-signature.json"));
    const params: Params = {
      model: "deepseek-reasoner",
      max_tokens: 2048,
      thinking: thinkingOn,
      tools: [weatherTool],
      messages: weatherQuestion,
    };
    const first = await ask(params, false);
    const messages: Anthropic.MessageParam[] = [
      ...weatherQuestion,
      { role: "assistant", content: first.content },
      { role: "user", content: toolResultsFor(first.content) },
    ];
    const { data: second, response } = await client.messages
      .create({ ...params, model: "anthropic-sonnet", messages, stream: false })
      .withResponse();
    expect(second.content.map((block) => block.type)).toEqual(["thinking", "text"]);

    const body = upstreamBody(upstream("anthropic"), 0);
    const thinkingBlocks = everyObject(body.messages).filter((block) => block.type === "thinking");
    expect(thinkingBlocks).toEqual([]);
    expect(upstream("anthropic").requests[0]!.rawBody).not.toContain("parley.v1.");
    // Turned into text, never silently dropped, and reported.
    expect(JSON.stringify(body.messages)).toContain(thinkingOf(first).thinking.slice(0, 60));
    expect(lossyEntries(response.headers.get("x-parley-lossy")).some((entry) => entry.code.startsWith("repair:"))).toBe(
      true,
    );
  });
});

describe("recurring complaints about gateways (peers section 4)", () => {
  for (const stream of [false, true]) {
    test(`tool calls printed as text by a local model are executed as tool_use (peers #4)${stream ? ", streaming" : ""}`, async () => {
      const recorded = fixtureJson("scripted/hermes-text-tool-call.json");
      upstream("local").enqueue(
        stream ? { kind: "sse", frames: chunkedAnswer(recorded, 7) } : { kind: "json", body: recorded },
      );
      const answer = await ask(
        {
          model: "local-qwen2.5",
          max_tokens: 512,
          tools: [weatherTool],
          messages: [{ role: "user", content: "Weather in Oslo?" }],
        },
        stream,
      );
      expect(answer.content.filter((block) => block.type === "tool_use")).toEqual([
        expect.objectContaining({ name: "weather", input: { location: "Oslo" } }),
      ]);
      expect(textOf(answer)).not.toContain("<tool_call>");
      expect(answer.stop_reason).toBe("tool_use");
    });
  }

  for (const stream of [false, true]) {
    test(`malformed, cut-off tool arguments reach the client as a valid input object (peers #5)${stream ? ", streaming" : ""}`, async () => {
      const recorded = fixtureJson<{ choices: Array<{ message: { tool_calls: unknown[] } }> }>(
        "scripted/truncated-tool-arguments.json",
      );
      const streamed = {
        kind: "sse" as const,
        frames: [
          `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "glm-4.5", choices: [{ index: 0, delta: { role: "assistant", tool_calls: [{ index: 0, id: "call_truncated_01", type: "function", function: { name: "weather", arguments: '{"location": "Ky' } }] }, finish_reason: null }] })}\n\n`,
          `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "glm-4.5", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: 'oto", "unit": "celsius"' } }] }, finish_reason: "tool_calls" }] })}\n\n`,
          "data: [DONE]\n\n",
        ],
      };
      expect(recorded.choices[0]!.message.tool_calls).toHaveLength(1);
      upstream("generic").enqueue(stream ? streamed : json("scripted/truncated-tool-arguments.json"));
      const answer = await ask(
        {
          model: "generic-glm-4.5",
          max_tokens: 512,
          tools: [weatherTool],
          messages: [{ role: "user", content: "Weather in Kyoto?" }],
        },
        stream,
      );
      const call = answer.content.find((block): block is Anthropic.ToolUseBlock => block.type === "tool_use");
      expect(call?.input).toEqual({ location: "Kyoto", unit: "celsius" });
    });
  }

  test("a tool_use left without its tool_result (an interrupted session) does not break the next turn (peers #6)", async () => {
    upstream("generic").enqueue(json("azure/deepseek-v4-pro-reasoning.json"));
    const { data, response } = await client.messages
      .create({
        model: "generic-model",
        max_tokens: 512,
        tools: [weatherTool],
        messages: [
          { role: "user", content: "Weather in Rome?" },
          {
            role: "assistant",
            content: [{ type: "tool_use", id: "toolu_interrupted", name: "weather", input: { location: "Rome" } }],
          },
          { role: "user", content: "Never mind, tell me a story instead." },
        ],
      })
      .withResponse();
    expect(data.stop_reason).toBe("end_turn");
    const messages = chatMessages(upstreamBody(upstream("generic"), 0));
    const assistantIndex = messages.findIndex((message) => message.role === "assistant");
    expect(messages[assistantIndex + 1]).toMatchObject({ role: "tool", tool_call_id: "toolu_interrupted" });
    expect(JSON.stringify(messages.at(-1))).toContain("tell me a story");
    expect(lossyEntries(response.headers.get("x-parley-lossy")).some((entry) => entry.code.startsWith("repair:"))).toBe(
      true,
    );
  });

  test("a stream carries text as text_delta and tool input as input_json_delta only (peers #7)", async () => {
    upstream("generic").enqueue(sse("scripted/think-inline-tool-call.sse"));
    const stream = client.messages.stream({
      model: "generic-qwen3",
      max_tokens: 512,
      thinking: thinkingOn,
      tools: [weatherTool],
      messages: [{ role: "user", content: "Weather in Lisbon?" }],
    });
    const events: Anthropic.MessageStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const blockTypes = new Map<number, string>();
    for (const event of events) {
      if (event.type === "content_block_start") blockTypes.set(event.index, event.content_block.type);
      if (event.type !== "content_block_delta") continue;
      const expected = { text: "text_delta", thinking: "thinking_delta", tool_use: "input_json_delta" }[
        blockTypes.get(event.index) ?? ""
      ];
      if (event.delta.type === "signature_delta") expect(blockTypes.get(event.index)).toBe("thinking");
      else expect(event.delta.type).toBe(expected);
    }
    expect(events[0]?.type).toBe("message_start");
    expect(events.at(-1)?.type).toBe("message_stop");
    expect([...blockTypes.values()]).toEqual(["thinking", "text", "tool_use"]);
  });

  test("thinking blocks are never forwarded raw to an OpenAI-compatible server (peers #8)", async () => {
    upstream("vllm").enqueue(json("azure/deepseek-v4-pro-reasoning.json"));
    const signed = fixtureJson<{ content: Anthropic.ContentBlock[] }>(
      "anthropic/claude-sonnet-4.5-thinking-signature.json",
    );
    await ask(
      {
        model: "vllm-kimi-k2.5",
        max_tokens: 512,
        thinking: thinkingOn,
        messages: [
          { role: "user", content: "What is 925 divided by 5?" },
          { role: "assistant", content: signed.content },
          { role: "user", content: "And divided by 37?" },
        ],
      },
      false,
    );
    const body = upstreamBody(upstream("vllm"), 0);
    const types = everyObject(body.messages).map((part) => part.type);
    expect(types).not.toContain("thinking");
    expect(types).not.toContain("redacted_thinking");
    expect(upstream("vllm").requests[0]!.rawBody).not.toContain("Er4BCkYICxgCKkCoxq");
  });

  test("images in a user message and in a tool_result reach the upstream (peers #9)", async () => {
    upstream("generic").enqueue(json("azure/deepseek-v4-pro-reasoning.json"));
    const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const screenshot = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";
    const { response } = await client.messages
      .create({
        model: "generic-vision",
        max_tokens: 512,
        tools: [weatherTool],
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "What is in this picture?" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: pixel } },
            ],
          },
          {
            role: "assistant",
            content: [{ type: "tool_use", id: "toolu_shot", name: "weather", input: { location: "here" } }],
          },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: "toolu_shot",
                content: [{ type: "image", source: { type: "base64", media_type: "image/gif", data: screenshot } }],
              },
            ],
          },
        ],
      })
      .withResponse();
    const raw = upstream("generic").requests[0]!.rawBody;
    expect(raw).toContain(`data:image/png;base64,${pixel}`);
    const carried = raw.includes(screenshot);
    const reported = lossyEntries(response.headers.get("x-parley-lossy")).some((entry) =>
      /image/i.test(entry.message + entry.code),
    );
    expect(carried || reported).toBe(true);
  });

  test("usage is the upstream's, cached tokens as cache_read_input_tokens, never subtracted twice (peers #10)", async () => {
    upstream("deepseek").enqueue(json("deepseek/deepseek-reasoner-tool-call.json"));
    const answer = await ask(
      { model: "deepseek-reasoner", max_tokens: 1024, tools: [weatherTool], messages: weatherQuestion },
      false,
    );
    expect(answer.usage).toMatchObject({ input_tokens: 19, cache_read_input_tokens: 320, output_tokens: 92 });
  });

  test("a stream's message_start carries an input count and its final usage is the upstream's (peers #10)", async () => {
    upstream("deepseek").enqueue(chunks("deepseek/deepseek-reasoner-tool-call.chunks.jsonl"));
    const stream = client.messages.stream({
      model: "deepseek-reasoner",
      max_tokens: 1024,
      tools: [weatherTool],
      messages: weatherQuestion,
    });
    let startInput: number | undefined;
    stream.on("streamEvent", (event) => {
      if (event.type === "message_start") startInput = event.message.usage.input_tokens;
    });
    const answer = await stream.finalMessage();
    expect(startInput).toBeGreaterThan(0);
    expect(answer.usage).toMatchObject({ input_tokens: 19, cache_read_input_tokens: 320, output_tokens: 83 });
  });

  test("count_tokens answers with a real count that grows with the input (peers #11)", async () => {
    const short = await client.messages.countTokens({
      model: "deepseek-reasoner",
      messages: [{ role: "user", content: "Hello" }],
    });
    const long = await client.messages.countTokens({
      model: "deepseek-reasoner",
      system: "You are a careful assistant.",
      tools: [weatherTool],
      messages: [
        { role: "user", content: "Hello there, how is the weather in Paris, Lisbon and Rome today? ".repeat(20) },
      ],
    });
    expect(short.input_tokens).toBeGreaterThan(0);
    expect(long.input_tokens).toBeGreaterThan(short.input_tokens + 200);
    expect(Object.values(world.upstreams).every((scripted) => scripted.requests.length === 0)).toBe(true);
  });

  test("Anthropic-only cache_control and context_management are stripped for an OpenAI upstream and reported (peers #12)", async () => {
    upstream("deepseek").enqueue(json("azure/deepseek-v4-pro-reasoning.json"));
    const { data, response } = await client.beta.messages
      .create({
        model: "deepseek-v4",
        max_tokens: 1024,
        betas: ["context-management-2025-06-27"],
        system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral", ttl: "1h" } }],
        context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
        messages: [
          {
            role: "user",
            content: [{ type: "text", text: "Invent a holiday.", cache_control: { type: "ephemeral" } }],
          },
        ],
      })
      .withResponse();
    expect(data.stop_reason).toBe("end_turn");
    const body = upstreamBody(upstream("deepseek"), 0);
    expect(everyObject(body).some((object) => "cache_control" in object)).toBe(false);
    expect("context_management" in body).toBe(false);
    const reported = JSON.stringify(lossyEntries(response.headers.get("x-parley-lossy")));
    expect(reported).toContain("cache_control");
    expect(reported).toContain("context_management");
  });

  test("tool_choice is left out for a provider that refuses it and max_tokens is capped (peers #13)", async () => {
    upstream("capped").enqueue(json("deepseek/deepseek-reasoner-tool-call.json"));
    const { response } = await client.messages
      .create(
        {
          model: "capped-reasoner",
          max_tokens: 128_000,
          tools: [weatherTool],
          tool_choice: { type: "auto" },
          messages: weatherQuestion,
        },
        { timeout: 60_000 },
      )
      .withResponse();
    const body = upstreamBody(upstream("capped"), 0);
    expect("tool_choice" in body).toBe(false);
    expect(Number(body.max_tokens ?? body.max_completion_tokens)).toBeLessThanOrEqual(8192);
    expect(JSON.stringify(lossyEntries(response.headers.get("x-parley-lossy")))).toContain("tool_choice");
  });

  test("Gemini's encrypted reasoning_details through OpenRouter go back unchanged with the tool calls (peers #14)", async () => {
    const details = readFileSync(fixturePath("openrouter/gemini-3.1-flash-lite-parallel-tools.sse"), "utf8")
      .split("\n")
      .filter((line) => line.startsWith("data: {"))
      .flatMap(
        (line) =>
          (JSON.parse(line.slice(6)) as { choices: Array<{ delta: { reasoning_details?: Array<{ data: string }> } }> })
            .choices,
      )
      .flatMap((choice) => choice.delta.reasoning_details ?? []);
    expect(details.length).toBeGreaterThan(0);
    upstream("openrouter").enqueue(
      sse("openrouter/gemini-3.1-flash-lite-parallel-tools.sse"),
      sse("scripted/openai-vllm-reasoning.sse"),
    );
    await toolLoop(
      {
        model: "openrouter/google/gemini-3.1-flash-lite-preview",
        max_tokens: 2048,
        thinking: thinkingOn,
        tools: [addTool, multiplyTool],
        messages: [{ role: "user", content: "Add and multiply 2 and 3." }],
      },
      true,
    );
    const assistant = assistantWithToolCalls(upstreamBody(upstream("openrouter"), 1));
    const sentBack = JSON.stringify(assistant.reasoning_details);
    for (const detail of details) expect(sentBack).toContain(JSON.stringify(detail.data));
    expect(assistant.tool_calls.map((call) => call.id)).toEqual([
      "tool_add_kZJN6iFNozVOBiXBMA2Y",
      "tool_multiply_7Pq02EcannPbKks8kXlA",
    ]);
  });

  test("switching provider mid-session keeps the conversation working (peers #15)", async () => {
    upstream("deepseek").enqueue(json("deepseek/deepseek-reasoner-tool-call.json"));
    upstream("vllm").enqueue(json("azure/deepseek-v4-pro-reasoning.json"));
    const params: Params = {
      model: "deepseek-reasoner",
      max_tokens: 2048,
      thinking: thinkingOn,
      tools: [weatherTool],
      messages: weatherQuestion,
    };
    const first = await ask(params, false);
    const messages: Anthropic.MessageParam[] = [
      ...weatherQuestion,
      { role: "assistant", content: first.content },
      { role: "user", content: toolResultsFor(first.content) },
    ];
    const { data: second, response } = await client.messages
      .create({ ...params, model: "vllm-qwen3", messages, stream: false })
      .withResponse();
    expect(second.stop_reason).toBe("end_turn");
    const body = upstreamBody(upstream("vllm"), 0);
    const raw = upstream("vllm").requests[0]!.rawBody;
    expect(raw).not.toContain("parley.v1.");
    // DeepSeek's reasoning is not replayed as vLLM's own in DeepSeek's field; it is carried or reported.
    expect(assistantWithToolCalls(body).reasoning_content).toBeUndefined();
    const carried = raw.includes(thinkingOf(first).thinking.slice(0, 60));
    const reported = lossyEntries(response.headers.get("x-parley-lossy")).length > 0;
    expect(carried || reported).toBe(true);
  });
});

describe("errors as the SDK sees them", () => {
  test("bad input raises the SDK's BadRequestError with Anthropic's error type, and nothing reaches the upstream", async () => {
    const attempt = client.messages.create({
      model: "deepseek-reasoner",
      max_tokens: 64,
      messages: [{ role: "tool" as "user", content: "hi" }],
    });
    await expect(attempt).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    const error = (await attempt.catch((caught: unknown) => caught)) as InstanceType<typeof Anthropic.BadRequestError>;
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(error.message).toContain("messages[0].role");
    expect(Object.values(world.upstreams).every((scripted) => scripted.requests.length === 0)).toBe(true);
  });
});

describe("what Claude Code sends", () => {
  test("?beta=true, a system message in place, adaptive thinking and Claude-only fields are accepted and mapped", async () => {
    upstream("deepseek").enqueue(json("azure/deepseek-v4-pro-reasoning.json"));
    const params = {
      model: "claude-opus-5-5",
      max_tokens: 128_000,
      stream: false,
      betas: [
        "claude-code-20250219",
        "interleaved-thinking-2025-05-14",
        "context-management-2025-06-27",
        "advanced-tool-use-2025-11-20",
        "effort-2025-11-24",
      ],
      thinking: { type: "adaptive", display: "summarized" },
      output_config: { effort: "medium" },
      context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
      metadata: { user_id: JSON.stringify({ device_id: "d1", session_id: "s1" }) },
      system: [
        { type: "text", text: "x-anthropic-billing-header: cc_version=2.1.330" },
        { type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } },
      ],
      tools: [
        {
          name: "Bash",
          description: "Runs a shell command",
          input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
        },
        {
          name: "DeferredToolPlaceholder",
          description: "Deferred",
          input_schema: { type: "object" },
          defer_loading: true,
        },
      ],
      messages: [
        { role: "user", content: [{ type: "text", text: "Invent a holiday." }] },
        { role: "system", content: "Environment: linux, cwd /tmp" },
      ],
    };
    const { data, response } = await client.beta.messages
      .create(params as unknown as Anthropic.Beta.MessageCreateParamsNonStreaming, {
        timeout: 60_000,
        query: { beta: "true" },
      })
      .withResponse();
    expect(response.status).toBe(200);
    expect(data.model).toBe("claude-opus-5-5");
    expect(textOf(data as unknown as Anthropic.Message)).toContain("BRUNSON");

    const body = upstreamBody(upstream("deepseek"), 0);
    expect(body.model).toBe("deepseek-v4-flash");
    const roles = chatMessages(body).map((message) => message.role);
    expect(roles.slice(-2)).toEqual(["user", "system"]);
    expect(JSON.stringify(chatMessages(body).at(-1))).toContain("Environment: linux");
    // Adaptive thinking becomes DeepSeek's own switch.
    expect(body.thinking).toEqual({ type: "enabled" });
    for (const key of ["output_config", "context_management", "metadata", "betas"]) expect(key in body).toBe(false);
    expect(everyObject(body.tools).some((object) => "defer_loading" in object)).toBe(false);
    expect(lossyEntries(response.headers.get("x-parley-lossy")).length).toBeGreaterThan(0);
  });
});
