import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { rebuildResponse } from "../../src/formats/openai-chat/test-support/chunks.js";
import { postJson, postStream } from "../support/gateway-harness.js";
import { checkResponsesStream } from "../support/responses-stream.js";
import { framesFromChunksFile, type ScriptedUpstream } from "../support/scripted-upstream.js";
import {
  chatMessages,
  type E2eWorld,
  fixtureJson,
  fixturePath,
  lossyEntries,
  startWorld,
  upstreamBody,
} from "./e2e-support.js";
import { runTool, weatherTool } from "./sdk-tools.js";

/**
 * The official OpenAI SDK against the gateway's `POST /v1/responses`, to OpenAI-compatible Chat upstreams replaying
 * recorded traffic: whole and streamed answers, the function-calling round trip, and the answers Parley keeps; and
 * `responses.compact` on a Chat and on a Responses upstream.
 */

let world: E2eWorld;
let client: OpenAI;

beforeEach(async () => {
  world = await startWorld({ deepseek: { type: "openai", preset: "deepseek" }, generic: { type: "openai" } });
  client = new OpenAI({ baseURL: `${world.gateway.url}/v1`, apiKey: "sk-e2e", maxRetries: 0 });
});

afterEach(async () => {
  await world.close();
});

const upstream = (name: string): ScriptedUpstream => world.upstreams[name]!;

const weather: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: weatherTool.name,
  description: weatherTool.description ?? "",
  parameters: weatherTool.input_schema as Record<string, unknown>,
  strict: false,
};

const question: OpenAI.Responses.ResponseInputItem[] = [
  { role: "user", content: "What is the weather in San Francisco?" },
];

const chunksFile = "deepseek/deepseek-reasoner-tool-call.chunks.jsonl";

/** What a client sends back after running the calls of an answer: the answer's items, then each call's output. */
function withOutputs(output: OpenAI.Responses.ResponseOutputItem[]): OpenAI.Responses.ResponseInputItem[] {
  const calls = output.filter(
    (item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === "function_call",
  );
  return [
    ...(output as OpenAI.Responses.ResponseInputItem[]),
    ...calls.map((call) => ({
      type: "function_call_output" as const,
      call_id: call.call_id,
      output: runTool(call.name, JSON.parse(call.arguments)),
    })),
  ];
}

/** A response without what differs from one request to the next: ids and the clock. */
function comparable(response: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, created_at: _created, output_text: _text, ...rest } = response;
  const output = (rest.output as Array<Record<string, unknown>>).map(({ id: _itemId, ...item }) => item);
  return { ...rest, output };
}

describe("a Responses client on a Chat upstream", () => {
  test("responses.create: reasoning as a reasoning item, the call as a function call, and the loop goes back whole", async () => {
    const recorded = fixtureJson<{ choices: Array<{ message: { reasoning_content: string } }> }>(
      "deepseek/deepseek-reasoner-tool-call.json",
    );
    upstream("deepseek").enqueue(
      { kind: "json", body: recorded },
      { kind: "json", body: fixtureJson("azure/deepseek-v4-pro-reasoning.json") },
    );
    const first = await client.responses.create({
      model: "deepseek-reasoner",
      input: question,
      tools: [weather],
      store: false,
    });
    expect(first.model).toBe("deepseek-reasoner");
    expect(first.status).toBe("completed");
    expect(first.output.map((item) => item.type)).toEqual(["reasoning", "function_call"]);
    const reasoning = first.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary).toEqual([{ type: "summary_text", text: recorded.choices[0]!.message.reasoning_content }]);
    expect(first.output[1]).toMatchObject({
      type: "function_call",
      name: "weather",
      call_id: "call_00_9V0vrf86Pc9aelHCJMZqnJBo",
    });
    expect(first.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) });

    const second = await client.responses.create({
      model: "deepseek-reasoner",
      input: [...question, ...withOutputs(first.output)],
      tools: [weather],
      store: false,
    });
    expect(second.output_text).toContain("BRUNSON");
    const turn2 = chatMessages(upstreamBody(upstream("deepseek"), 1));
    expect(turn2.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
    // DeepSeek's reasoning went back in the field it came in, on the message with its tool call.
    expect(turn2[1]).toMatchObject({
      reasoning_content: recorded.choices[0]!.message.reasoning_content,
      tool_calls: [expect.objectContaining({ id: "call_00_9V0vrf86Pc9aelHCJMZqnJBo" })],
    });
    expect(turn2[2]).toMatchObject({ role: "tool", content: "San Francisco: 21 degrees and sunny" });
  });

  test("responses.stream: the SDK's helper reads a valid event stream to the answer", async () => {
    upstream("deepseek").enqueue({ kind: "sse", frames: framesFromChunksFile(fixturePath(chunksFile), "openai") });
    const stream = client.responses.stream({
      model: "deepseek-reasoner",
      input: question,
      tools: [weather],
      store: false,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(types).toContain("response.reasoning_summary_text.delta");
    expect(types).toContain("response.function_call_arguments.done");
    expect(final.output.map((item) => item.type)).toEqual(["reasoning", "function_call"]);
    const call = final.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(JSON.parse(call.arguments)).toEqual({ location: "San Francisco" });
  });

  test("streamed or not, the same upstream answer is the same response (invariant 15)", async () => {
    const frames = framesFromChunksFile(fixturePath(chunksFile), "openai");
    const chunks = frames.filter((frame) => !frame.includes("[DONE]")).map((frame) => JSON.parse(frame.slice(6)));
    upstream("deepseek").enqueue({ kind: "sse", frames }, { kind: "json", body: rebuildResponse(chunks) });
    const body = { model: "deepseek-reasoner", input: question, tools: [weather], store: false };
    const streamed = await postStream(`${world.gateway.url}/v1/responses`, { ...body, stream: true });
    expect(streamed.status).toBe(200);
    const checked = checkResponsesStream(streamed.text);
    const whole = await postJson(`${world.gateway.url}/v1/responses`, body);
    expect(whole.status).toBe(200);
    expect(comparable(checked.assembled)).toEqual(comparable(whole.body as Record<string, unknown>));
    expect(comparable(checked.last)).toEqual(comparable(whole.body as Record<string, unknown>));
    expect(lossyEntries(String(streamed.headers["x-parley-lossy"] ?? ""))).toEqual(
      lossyEntries(String(whole.headers["x-parley-lossy"] ?? "")),
    );
  });

  test("an upstream's error reaches the SDK as OpenAI's error, and bad input is a 400 naming the field", async () => {
    upstream("generic").enqueue({
      kind: "error",
      status: 429,
      body: { error: { message: "slow down" } },
      retryAfter: "0",
    });
    upstream("generic").enqueue({
      kind: "error",
      status: 429,
      body: { error: { message: "slow down" } },
      retryAfter: "0",
    });
    upstream("generic").enqueue({
      kind: "error",
      status: 429,
      body: { error: { message: "slow down" } },
      retryAfter: "0",
    });
    const failed = await client.responses.create({ model: "generic-m", input: "hi" }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(OpenAI.RateLimitError);
    expect((failed as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      type: "rate_limit_error",
      code: "rate_limit_exceeded",
    });
    const bad = await postJson(`${world.gateway.url}/v1/responses`, {
      model: "generic-m",
      input: [{ type: "function_call_output", output: "x" }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      error: {
        message: "input[0].call_id: must be a non-empty string",
        type: "invalid_request_error",
        param: "input[0].call_id",
        code: null,
      },
    });
  });
});

describe("stored responses", () => {
  const answer = (text: string) => ({
    kind: "json" as const,
    body: {
      id: "c",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
      usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
    },
  });

  test("previous_response_id continues a kept answer; it reads back by id and is deleted", async () => {
    upstream("generic").enqueue(answer("Paris."), answer("About two million."));
    const first = await client.responses.create({
      model: "generic-m",
      instructions: "Answer in one line.",
      input: "Capital of France?",
    });
    expect((first as unknown as { store: boolean }).store).toBe(true);
    const stream = client.responses.stream({
      model: "generic-m",
      previous_response_id: first.id,
      input: "Population?",
    });
    const second = await stream.finalResponse();
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text).toBe("About two million.");
    // The upstream saw the whole conversation; the earlier instructions are not carried over (as OpenAI does).
    expect(chatMessages(upstreamBody(upstream("generic"), 1))).toEqual([
      { role: "user", content: "Capital of France?" },
      { role: "assistant", content: "Paris." },
      { role: "user", content: "Population?" },
    ]);
    // Read back as the client got it (the SDK's stream helper adds its `parsed` fields to what it got).
    const read = await client.responses.retrieve(second.id);
    expect(second).toMatchObject(JSON.parse(JSON.stringify(read)));
    expect(read.id).toBe(second.id);
    expect(await client.responses.delete(second.id)).toEqual({ id: second.id, object: "response", deleted: true });
    await expect(client.responses.retrieve(second.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const gone = await client.responses
      .create({ model: "generic-m", previous_response_id: second.id, input: "More?" })
      .catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(OpenAI.BadRequestError);
    expect((gone as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ param: "previous_response_id" });
  });

  test("store: false keeps nothing", async () => {
    upstream("generic").enqueue(answer("Paris."));
    const first = await client.responses.create({ model: "generic-m", input: "Capital of France?", store: false });
    expect((first as unknown as { store: boolean }).store).toBe(false);
    await expect(client.responses.retrieve(first.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe("stored responses with API keys", () => {
  test("belong to the tenant of the key that made them: another gets 404 and cannot continue them", async () => {
    await world.close();
    world = await startWorld(
      { generic: { type: "openai" } },
      { file: { apiKeys: ["key-a", "key-b", { key: "key-c", tenant: "team" }, { key: "key-d", tenant: "team" }] } },
    );
    world.upstreams.generic!.fallback = () => ({
      kind: "json",
      body: {
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      },
    });
    const a = new OpenAI({ baseURL: `${world.gateway.url}/v1`, apiKey: "key-a", maxRetries: 0 });
    const b = new OpenAI({ baseURL: `${world.gateway.url}/v1`, apiKey: "key-b", maxRetries: 0 });
    const kept = await a.responses.create({ model: "generic-m", input: "hi" });
    expect((await a.responses.retrieve(kept.id)).id).toBe(kept.id);
    await expect(b.responses.retrieve(kept.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(b.responses.delete(kept.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(
      b.responses.create({ model: "generic-m", previous_response_id: kept.id, input: "again" }),
    ).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    const none = new OpenAI({ baseURL: `${world.gateway.url}/v1`, apiKey: "wrong", maxRetries: 0 });
    await expect(none.responses.retrieve(kept.id)).rejects.toBeInstanceOf(OpenAI.AuthenticationError);

    // Two keys of one tenant share what it keeps, as they share its conversations.
    const c = new OpenAI({ baseURL: `${world.gateway.url}/v1`, apiKey: "key-c", maxRetries: 0 });
    const d = new OpenAI({ baseURL: `${world.gateway.url}/v1`, apiKey: "key-d", maxRetries: 0 });
    const shared = await c.responses.create({ model: "generic-m", input: "hi" });
    expect((await d.responses.retrieve(shared.id)).id).toBe(shared.id);
    const continued = await d.responses.create({ model: "generic-m", previous_response_id: shared.id, input: "again" });
    expect(continued.previous_response_id).toBe(shared.id);
    await expect(a.responses.retrieve(shared.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await d.responses.delete(shared.id)) as unknown).toMatchObject({ id: shared.id, deleted: true });
  });
});

describe("the model list a Responses client reads", () => {
  test("is OpenAI's shape, as for a Chat client: models.list and models.retrieve through the SDK", async () => {
    await world.close();
    world = await startWorld(
      { generic: { type: "openai" } },
      { routes: [{ match: "gpt-5-mini", provider: "generic" }] },
    );
    const sdk = new OpenAI({ baseURL: `${world.gateway.url}/v1`, apiKey: "sk-e2e", maxRetries: 0 });
    const listed = (await sdk.models.list()).data.find((model) => model.id === "gpt-5-mini");
    expect(listed).toMatchObject({ id: "gpt-5-mini", object: "model", owned_by: "generic" });
    expect(await sdk.models.retrieve("gpt-5-mini")).toMatchObject({ id: "gpt-5-mini", object: "model" });
  });
});

describe("responses.compact (OpenAI's `POST /v1/responses/compact`)", () => {
  const history: OpenAI.Responses.ResponseInputItem[] = [
    { role: "user", content: "Fix the parser in src/parse.ts." },
    { role: "assistant", content: "Fixed; the tests pass." },
  ];

  test("on a Chat upstream Parley compacts: the SDK reads one compaction item holding the model's summary", async () => {
    upstream("deepseek").enqueue({
      kind: "json",
      body: {
        id: "c1",
        object: "chat.completion",
        model: "deepseek-chat",
        choices: [{ index: 0, message: { role: "assistant", content: "The parser is fixed." }, finish_reason: "stop" }],
        usage: { prompt_tokens: 40, completion_tokens: 6, total_tokens: 46 },
      },
    });
    const compacted = await client.responses.compact({ model: "deepseek-chat", input: history });
    expect(compacted.object).toBe("response.compaction");
    expect(compacted.output.map((item) => item.type)).toEqual(["compaction"]);
    expect(compacted.usage).toMatchObject({ input_tokens: 40, output_tokens: 6 });
    expect(upstream("deepseek").requests[0]!.path).toBe("/v1/chat/completions");
  });

  test("on a Responses upstream it reaches the provider's own /responses/compact, and comes back as it made it", async () => {
    await world.close();
    world = await startWorld({ openai: { type: "openai-responses" } });
    client = new OpenAI({ baseURL: `${world.gateway.url}/v1`, apiKey: "sk-e2e", maxRetries: 0 });
    const made = {
      id: "resp_compacted",
      object: "response.compaction",
      created_at: 1,
      output: [
        {
          id: "msg_1",
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: "Fix the parser in src/parse.ts." }],
        },
        { id: "cmp_1", type: "compaction", encrypted_content: "gAAAAB-compacted==" },
      ],
      usage: {
        input_tokens: 40,
        output_tokens: 6,
        total_tokens: 46,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      },
    };
    upstream("openai").enqueue({ kind: "json", body: made });
    const compacted = await client.responses.compact({ model: "gpt-5.5", input: history });
    expect(compacted).toEqual(made);
    const sent = upstream("openai").requests[0]!;
    expect(sent.path).toBe("/v1/responses/compact");
    expect((sent.body as { input: unknown[] }).input).toHaveLength(2);
  });
});
