import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import type { RunningGateway } from "../../src/gateway/server.js";
import { startTestGateway } from "../support/gateway-harness.js";
import { framesFromSseFile, type ScriptedUpstream, startScriptedUpstream } from "../support/scripted-upstream.js";
import { fixtureJson, fixturePath } from "./e2e-support.js";

/**
 * What the real llama-server answered (recorded by scripts/llamacpp/record-fixtures.mjs into
 * test/fixtures/llamacpp-server/), replayed by a scripted upstream that lists its models as the real one does: the
 * fast tests keep the real server's behaviour. Parley gets the upstream with no preset and a port no preset is
 * guessed from, as `--upstream` alone gives it.
 */

interface Recorded {
  server: { version: string };
  request: { body: Record<string, unknown> };
  response: { status: number; body: Record<string, unknown> };
}

const recorded = (file: string) => fixtureJson<Recorded>(`llamacpp-server/${file}`);
const frames = (file: string) => framesFromSseFile(fixturePath(`llamacpp-server/${file}`));

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeEach(async () => {
  upstream = await startScriptedUpstream("openai");
  // the real server takes any field and answers its model list with `owned_by: "llamacpp"`
  upstream.server = undefined;
  const models = recorded("models.json").response.body;
  upstream.otherRoutes = (request) => {
    if (request.path === "/v1/models") return { kind: "json", body: models };
    // the count the real server gave for `question` (its template's framing included)
    if (request.path === "/v1/messages/count_tokens") return { kind: "json", body: { input_tokens: 15 } };
    return undefined;
  };
  gateway = await startTestGateway({ providers: { local: { upstream, type: "openai" } } });
  await gateway.discovery;
});

afterEach(async () => {
  await gateway.close();
  await upstream.close();
});

const chat = () => new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: "k", maxRetries: 0 });
const anthropic = () => new Anthropic({ baseURL: gateway.url, apiKey: "k", maxRetries: 0 });
const question = "What is the weather in Paris?";
const weather: Anthropic.Tool = {
  name: "weather",
  description: "Current weather at a location",
  input_schema: { type: "object", properties: { location: { type: "string", maxLength: 12 } }, required: ["location"] },
};

describe("llama-server's recorded answers", () => {
  test("the fixtures name the server's version", () => {
    expect(recorded("chat-reasoning.json").server.version).toBe("0.4.0-dev (build 1, commit 80fb11a)");
  });

  test("its model list names it: the preset is llamacpp, so a named tool goes as `required` with that tool", async () => {
    upstream.enqueue({ kind: "sse", frames: frames("chat-reasoning-tool-call.sse") });
    const message = await anthropic()
      .messages.stream({
        model: "tiny-qwen3",
        max_tokens: 256,
        messages: [{ role: "user", content: question }],
        tools: [weather, { ...weather, name: "clock" }],
        tool_choice: { type: "tool", name: "weather" },
      })
      .finalMessage();
    expect(upstream.requests[0]?.body).toMatchObject({
      tool_choice: "required",
      tools: [{ function: { name: "weather" } }],
    });
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
    expect(message.content[1]).toMatchObject({ name: "weather", input: { location: expect.any(String) } });
    expect(message.stop_reason).toBe("tool_use");
  });

  test("count_tokens asks the server's own Anthropic count endpoint", async () => {
    const counted = await anthropic().messages.countTokens({
      model: "tiny-qwen3",
      messages: [{ role: "user", content: question }],
    });
    expect(counted.input_tokens).toBe(15);
    const asked = upstream.otherRequests.find((request) => request.path === "/v1/messages/count_tokens");
    expect(asked?.body).toMatchObject({ model: "tiny-qwen3", messages: [{ role: "user", content: question }] });
  });

  test("a call cut by the output limit: the Responses item is incomplete, never completed", async () => {
    upstream.enqueue({ kind: "sse", frames: frames("chat-tool-call-cut.sse") });
    const stream = chat().responses.stream({
      model: "tiny-qwen3",
      input: question,
      tools: [{ type: "function", name: "weather", strict: false, parameters: weather.input_schema }],
      store: false,
    });
    const response = await stream.finalResponse();
    expect([response.status, response.incomplete_details?.reason]).toEqual(["incomplete", "max_output_tokens"]);
    const call = response.output.find((item) => item.type === "function_call");
    expect(call).toMatchObject({ name: "weather", arguments: "{", status: "incomplete" });
  });

  test("an answer cut inside its thinking: a thinking block alone, stop reason max_tokens", async () => {
    upstream.enqueue({ kind: "json", body: recorded("chat-reasoning-only-cut.json").response.body });
    const message = await anthropic().messages.create({
      model: "tiny-qwen3",
      max_tokens: 5,
      messages: [{ role: "user", content: question }],
    });
    expect(message.content.map((block) => block.type)).toEqual(["thinking"]);
    expect(message.stop_reason).toBe("max_tokens");
  });

  test("its 500 for an image it cannot see: a 400 in its words, not retried", async () => {
    const answer = recorded("chat-image-without-projector.json").response;
    upstream.fallback = () => ({ kind: "error", status: answer.status, body: answer.body });
    const error = await chat()
      .chat.completions.create({ model: "tiny-qwen3", messages: [{ role: "user", content: question }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain("image input is not supported");
    expect(upstream.requests).toHaveLength(1);
  });

  test("its context overflow: Anthropic's words and OpenAI's code, with the numbers", async () => {
    const answer = recorded("chat-exceeds-context.json").response;
    upstream.fallback = () => ({ kind: "error", status: answer.status, body: answer.body });
    const refused = await anthropic()
      .messages.create({ model: "tiny-qwen3", max_tokens: 8, messages: [{ role: "user", content: question }] })
      .catch((caught: unknown) => caught);
    expect((refused as Error).message).toMatch(/prompt is too long: 2509 tokens > 2048 maximum/);
    const coded = await chat()
      .chat.completions.create({ model: "tiny-qwen3", messages: [{ role: "user", content: question }] })
      .catch((caught: unknown) => caught);
    expect((coded as InstanceType<typeof OpenAI.APIError>).code).toBe("context_length_exceeded");
  });
});
