import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { type Json, postJson, startTestGateway } from "../../test/support/gateway-harness.js";
import {
  type ScriptedReply,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * A prompt and its model's window (issue 34): `max_tokens` is lowered to what the window leaves; a prompt that alone
 * fills a known window is the client's own context-overflow error at once (Anthropic's `prompt is too long: N
 * tokens > M maximum`, OpenAI's `context_length_exceeded`), never sent; and an upstream's own overflow error
 * (llama.cpp's, vLLM's, Anthropic's) reaches each client in those words, numbers kept, whatever its route.
 */

let small: ScriptedUpstream;
let local: ScriptedUpstream;
let anthropic: ScriptedUpstream;
let gateway: RunningGateway;

const chatAnswer = {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
};

const LLAMA_CPP_OVERFLOW: ScriptedReply = {
  kind: "error",
  status: 400,
  body: {
    error: {
      code: 400,
      message: "request (5120 tokens) exceeds the available context size (4096 tokens), try increasing it",
      type: "exceed_context_size_error",
      n_prompt_tokens: 5120,
      n_ctx: 4096,
    },
  },
};
const VLLM_OVERFLOW: ScriptedReply = {
  kind: "error",
  status: 400,
  body: {
    object: "error",
    message:
      "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
    type: "BadRequestError",
    param: null,
    code: 400,
  },
};
const ANTHROPIC_OVERFLOW: ScriptedReply = {
  kind: "error",
  status: 400,
  body: {
    type: "error",
    error: { type: "invalid_request_error", message: "prompt is too long: 208310 tokens > 200000 maximum" },
  },
};

beforeAll(async () => {
  [small, local, anthropic] = await Promise.all([
    startScriptedUpstream("openai"),
    startScriptedUpstream("openai"),
    startScriptedUpstream("anthropic"),
  ]);
  small.fallback = () => ({ kind: "json", body: chatAnswer });
  gateway = await startTestGateway({
    providers: {
      small: { type: "openai", upstream: small, limits: { contextWindow: 4_096 } },
      local: { type: "openai", upstream: local },
      anthropic: { type: "anthropic", upstream: anthropic },
    },
    routes: [
      { match: "small-*", provider: "small" },
      { match: "claude-*", provider: "anthropic" },
      { match: "*", provider: "local" },
    ],
  });
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([small.close(), local.close(), anthropic.close()]);
});

beforeEach(() => {
  for (const upstream of [small, local, anthropic]) upstream.requests.length = 0;
});

/** About ten tokens a sentence. */
const prose = (sentences: number) => "The quick brown fox jumps over the lazy dog. ".repeat(sentences);

const lossyOf = (headers: Record<string, unknown>): Array<{ code: string; message: string; path?: string }> =>
  JSON.parse((headers["x-parley-lossy"] as string | undefined) ?? "[]");

/** The same request on each client route, in its API's shape. */
const routes = {
  messages: (model: string, text: string, stream = false) => ({
    path: "/v1/messages",
    body: { model, max_tokens: 128_000, stream, messages: [{ role: "user", content: text }] },
  }),
  chat: (model: string, text: string, stream = false) => ({
    path: "/v1/chat/completions",
    body: { model, max_tokens: 128_000, stream, messages: [{ role: "user", content: text }] },
  }),
  responses: (model: string, text: string, stream = false) => ({
    path: "/v1/responses",
    body: { model, max_output_tokens: 128_000, stream, store: false, input: text },
  }),
};

/** What each client's API says for a prompt of N tokens over a window of M, as its clients recognise it. */
function expectOverflow(route: keyof typeof routes, body: Json, prompt: number | RegExp, window: number): void {
  const number = typeof prompt === "number" ? String(prompt) : prompt.source;
  if (route === "messages") {
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toMatch(new RegExp(`^prompt is too long: ${number} tokens > ${window} maximum$`));
    return;
  }
  expect(body.error).toMatchObject({
    type: "invalid_request_error",
    code: "context_length_exceeded",
    param: route === "chat" ? "messages" : "input",
  });
  expect(body.error.message).toMatch(new RegExp(number));
  expect(body.error.message).toContain(String(window));
}

describe("max_tokens always fits a known window", () => {
  test.each(Object.keys(routes) as Array<keyof typeof routes>)(
    "%s: a 4,096-token model never gets max_tokens 128000 beside a 3,000-token prompt",
    async (route) => {
      const { path, body } = routes[route]("small-model", prose(300));
      const reply = await postJson(`${gateway.url}${path}`, body);
      expect(reply.status, reply.text).toBe(200);
      const sent = small.requests[0]!.body as Json;
      expect(sent.max_tokens).toBeGreaterThan(0);
      expect(sent.max_tokens).toBeLessThan(4_096 - 2_500);
      expect(lossyOf(reply.headers)).toContainEqual(
        expect.objectContaining({ code: "max_tokens-lowered", path: "max_tokens" }),
      );
    },
  );
});

describe("a prompt that alone fills a known window", () => {
  for (const stream of [false, true]) {
    test.each(Object.keys(routes) as Array<keyof typeof routes>)(
      `%s${stream ? ", streamed" : ""}: the client's own overflow error at once, nothing sent`,
      async (route) => {
        const { path, body } = routes[route]("small-model", prose(2_000), stream);
        const reply = await postJson(`${gateway.url}${path}`, body);
        expect(reply.status, reply.text).toBe(400);
        expectOverflow(route, reply.body, /\d{5}/, 4_096);
        expect(small.requests).toHaveLength(0);
      },
    );
  }
});

describe("an upstream's own overflow error, in each client's words", () => {
  for (const [server, reply, prompt, window] of [
    ["llama.cpp", LLAMA_CPP_OVERFLOW, 5_120, 4_096],
    ["vLLM", VLLM_OVERFLOW, 40_000, 32_768],
  ] as const) {
    for (const stream of [false, true]) {
      test.each(Object.keys(routes) as Array<keyof typeof routes>)(
        `${server}${stream ? ", streamed" : ""}, to %s`,
        async (route) => {
          local.enqueue(reply);
          const { path, body } = routes[route]("qwen3-coder", "Summarise the conversation.", stream);
          const answer = await postJson(`${gateway.url}${path}`, body);
          expect(answer.status, answer.text).toBe(400);
          expectOverflow(route, answer.body, prompt, window);
          expect(local.requests).toHaveLength(1);
        },
      );
    }
  }

  test.each(["chat", "responses"] as const)("Anthropic's, to %s", async (route) => {
    anthropic.enqueue(ANTHROPIC_OVERFLOW);
    const { path, body } = routes[route]("claude-opus-5-5", "Summarise the conversation.");
    const answer = await postJson(`${gateway.url}${path}`, body);
    expect(answer.status, answer.text).toBe(400);
    expectOverflow(route, answer.body, 208_310, 200_000);
  });

  test("Anthropic's, to an Anthropic client, as it came", async () => {
    anthropic.enqueue(ANTHROPIC_OVERFLOW);
    const { path, body } = routes.messages("claude-opus-5-5", "Summarise the conversation.");
    const answer = await postJson(`${gateway.url}${path}`, body);
    expect(answer.status).toBe(400);
    expect((answer.body as Json).error.message).toBe("prompt is too long: 208310 tokens > 200000 maximum");
  });
});
