import { readFileSync } from "node:fs";
import { request } from "undici";
import { afterEach, describe, expect, test } from "vitest";
import { postJson, postStream, type StreamReply, startTestGateway } from "../support/gateway-harness.js";
import {
  framesFromSseFile,
  openaiFrames,
  type ScriptedUpstream,
  startScriptedUpstream,
  type UpstreamKind,
} from "../support/scripted-upstream.js";

/**
 * The gateway in front of an upstream that fails the ways real ones do: error statuses (with Retry-After),
 * connections lost before or during an answer, silence, and clients that leave or read slowly. Every test
 * ends by checking that the same gateway still serves a normal request.
 */
const fixture = (path: string) => new URL(`../fixtures/${path}`, import.meta.url).pathname;
const RETRIES = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 50 };

type Gateway = Awaited<ReturnType<typeof startTestGateway>>;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(kind: UpstreamKind = "openai", file: Record<string, unknown> = {}) {
  const upstream = await startScriptedUpstream(kind);
  cleanups.push(() => upstream.close());
  const gateway = await startTestGateway({
    providers: { up: { upstream, type: kind } },
    file: { retries: RETRIES, timeouts: { shutdownGraceMs: 500 }, ...file },
  });
  cleanups.push(() => gateway.close());
  return { upstream, gateway };
}

const anthropicBody = (stream: boolean) => ({
  model: "claude-sonnet-4-5",
  max_tokens: 512,
  stream,
  messages: [{ role: "user", content: "Say hello." }],
});
const openaiBody = (stream: boolean) => ({
  model: "gpt-4o",
  stream,
  messages: [{ role: "user", content: "Say hello." }],
});

const helloChunks = [
  {
    id: "c1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
  },
  {
    id: "c1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta: { content: "Hello" }, finish_reason: null }],
  },
  {
    id: "c1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta: { content: " there" }, finish_reason: null }],
  },
  {
    id: "c1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
    usage: { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 },
  },
];
const helloJson = {
  id: "c2",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello there" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 },
};
const anthropicHello = {
  id: "msg_01Hello",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5",
  content: [{ type: "text", text: "Hello there" }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 11, output_tokens: 2 },
};

/** A normal streamed and a normal whole answer, right after the fault. */
async function expectStillServes(gateway: Gateway, upstream: ScriptedUpstream, kind: UpstreamKind = "openai") {
  const before = upstream.requests.length;
  if (kind === "openai")
    upstream.enqueue({ kind: "sse", frames: openaiFrames(helloChunks) }, { kind: "json", body: helloJson });
  else upstream.enqueue({ kind: "json", body: anthropicHello }, { kind: "json", body: anthropicHello });
  if (kind === "openai") {
    const streamed = await postStream(`${gateway.url}/v1/messages`, anthropicBody(true));
    expect(streamed.status).toBe(200);
    expect(textOf(streamed)).toBe("Hello there");
    expect(streamed.data.at(-1)?.type).toBe("message_stop");
  } else {
    const first = await postJson(`${gateway.url}/v1/messages`, anthropicBody(false));
    expect(first.status).toBe(200);
  }
  const whole = await postJson(`${gateway.url}/v1/messages`, anthropicBody(false));
  expect(whole.status).toBe(200);
  expect((whole.body as { content: Array<{ text?: string }> }).content.map((block) => block.text).join("")).toBe(
    "Hello there",
  );
  expect(upstream.requests.length).toBe(before + 2);
}

function textOf(reply: StreamReply): string {
  return reply.data
    .filter((event) => event.type === "content_block_delta")
    .map((event) => (event.delta as { text?: string }).text ?? "")
    .join("");
}

function anthropicError(body: unknown): { type: string; message: string } {
  expect(body).toMatchObject({ type: "error", error: { type: expect.any(String), message: expect.any(String) } });
  return (body as { error: { type: string; message: string } }).error;
}

describe("upstream error statuses", () => {
  test("a 429 with Retry-After is retried after the wait the upstream asked for, then succeeds", async () => {
    const { upstream, gateway } = await setUp();
    const rateLimited = JSON.parse(readFileSync(fixture("openrouter/rate-limited-error.json"), "utf8"));
    upstream.enqueue(
      { kind: "error", status: 429, body: rateLimited, retryAfter: "1" },
      { kind: "json", body: helloJson },
    );
    const started = performance.now();
    const reply = await postJson(`${gateway.url}/v1/messages`, anthropicBody(false));
    expect(reply.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(upstream.requests).toHaveLength(2);
    await expectStillServes(gateway, upstream);
  });

  test("a 429 on a streamed request is retried before the status line goes out", async () => {
    const { upstream, gateway } = await setUp();
    upstream.enqueue({ kind: "error", status: 429, body: { error: { message: "slow down" } }, retryAfter: "0" });
    upstream.enqueue({ kind: "sse", frames: openaiFrames(helloChunks) });
    const reply = await postStream(`${gateway.url}/v1/messages`, anthropicBody(true));
    expect(reply.status).toBe(200);
    expect(textOf(reply)).toBe("Hello there");
    expect(upstream.requests).toHaveLength(2);
    await expectStillServes(gateway, upstream);
  });

  const exhausted: Array<{
    name: string;
    status: number;
    retryable: boolean;
    expected: { status: number; type: string };
  }> = [
    { name: "429", status: 429, retryable: true, expected: { status: 429, type: "rate_limit_error" } },
    { name: "500", status: 500, retryable: true, expected: { status: 500, type: "api_error" } },
    { name: "503", status: 503, retryable: true, expected: { status: 529, type: "overloaded_error" } },
    { name: "529", status: 529, retryable: true, expected: { status: 529, type: "overloaded_error" } },
    {
      name: "400 (not retried)",
      status: 400,
      retryable: false,
      expected: { status: 400, type: "invalid_request_error" },
    },
    {
      name: "401 (the gateway's key, not the client's)",
      status: 401,
      retryable: false,
      expected: { status: 500, type: "api_error" },
    },
  ];
  for (const { name, status, retryable, expected } of exhausted) {
    for (const stream of [false, true]) {
      test(`upstream ${name} on every attempt -> ${expected.status} ${expected.type}, ${stream ? "streamed" : "whole"}`, async () => {
        const { upstream, gateway } = await setUp();
        const message = `upstream says ${status}`;
        upstream.fallback = () => ({ kind: "error", status, body: { error: { message, type: "x" } }, retryAfter: "0" });
        const reply = await postJson(`${gateway.url}/v1/messages`, anthropicBody(stream));
        expect(reply.status).toBe(expected.status);
        expect(String(reply.headers["content-type"])).toContain("application/json");
        const error = anthropicError(reply.body);
        expect(error.type).toBe(expected.type);
        expect(error.message).toContain(message);
        expect(upstream.requests).toHaveLength(retryable ? RETRIES.maxAttempts : 1);
        upstream.fallback = undefined;
        await expectStillServes(gateway, upstream);
      });
    }
  }

  test("errors on /v1/chat/completions use OpenAI's shape with the same types", async () => {
    const { upstream, gateway } = await setUp();
    const cases = [
      { status: 429, type: "rate_limit_error", clientStatus: 429 },
      { status: 529, type: "overloaded_error", clientStatus: 529 },
      { status: 500, type: "api_error", clientStatus: 500 },
    ];
    for (const { status, type, clientStatus } of cases) {
      upstream.fallback = () => ({ kind: "error", status, body: { error: { message: `status ${status} here` } } });
      for (const stream of [false, true]) {
        const reply = await postJson(`${gateway.url}/v1/chat/completions`, openaiBody(stream));
        expect(reply.status).toBe(clientStatus);
        expect(reply.body).toMatchObject({
          error: { type, message: expect.stringContaining(`status ${status} here`) },
        });
        expect(Object.keys((reply.body as { error: object }).error).sort()).toEqual([
          "code",
          "message",
          "param",
          "type",
        ]);
      }
    }
    upstream.fallback = undefined;
    await expectStillServes(gateway, upstream);
  });

  test("an Anthropic upstream's 529 keeps its type and message", async () => {
    const { upstream, gateway } = await setUp("anthropic");
    upstream.fallback = () => ({
      kind: "error",
      status: 529,
      body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    });
    const reply = await postJson(`${gateway.url}/v1/messages`, anthropicBody(false));
    expect(reply.status).toBe(529);
    const error = anthropicError(reply.body);
    expect(error.type).toBe("overloaded_error");
    expect(error.message).toContain("Overloaded");
    upstream.fallback = undefined;
    await expectStillServes(gateway, upstream, "anthropic");
  });
});

describe("connections lost", () => {
  test("a connection reset before any answer is retried", async () => {
    const { upstream, gateway } = await setUp();
    upstream.enqueue({ kind: "destroy" }, { kind: "json", body: helloJson });
    const reply = await postJson(`${gateway.url}/v1/messages`, anthropicBody(false));
    expect(reply.status).toBe(200);
    expect(upstream.requests).toHaveLength(2);
    await expectStillServes(gateway, upstream);
  });

  test("an unreachable upstream is a 5xx api_error naming the cause, after the retries", async () => {
    const gone = await startScriptedUpstream("openai");
    await gone.close();
    const gateway = await startTestGateway({
      providers: { up: { upstream: gone, type: "openai" } },
      file: { retries: RETRIES },
    });
    cleanups.push(() => gateway.close());
    const reply = await postJson(`${gateway.url}/v1/messages`, anthropicBody(true));
    expect(reply.status).toBeGreaterThanOrEqual(500);
    expect(reply.status).toBeLessThan(600);
    const error = anthropicError(reply.body);
    expect(error.type).toBe("api_error");
    expect(error.message).toMatch(/unreachable|ECONNREFUSED|connect/i);
  });

  test("a socket destroyed mid-stream ends the stream with an error event, cleanly, without a retry", async () => {
    const { upstream, gateway } = await setUp();
    const frames = framesFromSseFile(fixture("deepseek/deepseek-reasoner-thinking.sse"));
    upstream.enqueue({ kind: "sse", frames, frameDelayMs: 2, destroyAfterFrames: 40 });
    const reply = await postStream(`${gateway.url}/v1/messages`, anthropicBody(true));
    expect(reply.status).toBe(200);
    const types = reply.data.map((event) => event.type);
    expect(types[0]).toBe("message_start");
    expect(types).toContain("content_block_delta");
    expect(types).not.toContain("message_stop");
    expect(types.at(-1)).toBe("error");
    expect(reply.events.at(-1)?.event).toBe("error");
    expect(anthropicError(reply.data.at(-1)).type).toBe("api_error");
    expect(upstream.requests).toHaveLength(1);
    await expectStillServes(gateway, upstream);
  });

  test("a socket destroyed mid-stream on /v1/chat/completions ends with an OpenAI error frame", async () => {
    const { upstream, gateway } = await setUp();
    upstream.enqueue({
      kind: "sse",
      frames: framesFromSseFile(fixture("deepseek/deepseek-reasoner-thinking.sse")),
      frameDelayMs: 2,
      destroyAfterFrames: 40,
    });
    const reply = await postJson(`${gateway.url}/v1/chat/completions`, openaiBody(true));
    expect(reply.status).toBe(200);
    const frames = reply.text.split("\n\n").filter((frame) => frame.startsWith("data: ") && frame !== "data: [DONE]");
    const last = JSON.parse(frames.at(-1)!.slice(6)) as { error?: { type: string; message: string } };
    expect(last.error).toMatchObject({ type: "api_error", message: expect.any(String) });
    expect(frames.some((frame) => frame.includes('"finish_reason":"stop"'))).toBe(false);
    await expectStillServes(gateway, upstream);
  });

  test("a socket destroyed after the headers but before any content is an error status, not 200", async () => {
    const { upstream, gateway } = await setUp();
    // Every attempt fails the same way, so the outcome does not depend on whether the gateway retries.
    upstream.fallback = () => ({ kind: "sse", frames: openaiFrames(helloChunks), destroyAfterFrames: 0 });
    const reply = await postJson(`${gateway.url}/v1/messages`, anthropicBody(true));
    expect(reply.status).toBeGreaterThanOrEqual(500);
    expect(String(reply.headers["content-type"])).toContain("application/json");
    expect(anthropicError(reply.body).type).toBe("api_error");
    upstream.fallback = undefined;
    await expectStillServes(gateway, upstream);
  });

  test("an upstream error event mid-stream (Groq's shape) reaches the client as an error event", async () => {
    const { upstream, gateway } = await setUp();
    upstream.enqueue({
      kind: "sse",
      frames: framesFromSseFile(fixture("groq/gpt-oss-120b-tool-use-failed-midstream.sse")),
    });
    const reply = await postStream(`${gateway.url}/v1/messages`, anthropicBody(true));
    expect(reply.status).toBe(200);
    expect(reply.data.map((event) => event.type)).toContain("content_block_delta");
    const last = reply.data.at(-1);
    expect(last?.type).toBe("error");
    expect(anthropicError(last).message).toContain("Tool call validation failed");
    await expectStillServes(gateway, upstream);
  });

  test("an error chunk after the finish (OpenRouter's shape) is not lost", async () => {
    const { upstream, gateway } = await setUp();
    upstream.enqueue({ kind: "sse", frames: framesFromSseFile(fixture("openrouter/minimax-m2-midstream-error.sse")) });
    const reply = await postStream(`${gateway.url}/v1/messages`, anthropicBody(true));
    expect(reply.status).toBe(200);
    const errors = reply.data.filter((event) => event.type === "error");
    expect(errors).toHaveLength(1);
    expect(anthropicError(errors[0]).message).toContain("Token limit reached");
    expect(reply.data.at(-1)?.type).toBe("error");
    await expectStillServes(gateway, upstream);
  });

  test("an Anthropic upstream's overloaded error event mid-stream keeps its type", async () => {
    const { upstream, gateway } = await setUp("anthropic");
    const frames = framesFromSseFile(fixture("anthropic/claude-sonnet-4-thinking-tool-use.sse")).slice(0, 6);
    const overloaded = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
    upstream.enqueue({ kind: "sse", frames: [...frames, `event: error\ndata: ${JSON.stringify(overloaded)}\n\n`] });
    const reply = await postStream(`${gateway.url}/v1/messages`, anthropicBody(true));
    expect(reply.status).toBe(200);
    const last = reply.data.at(-1);
    expect(last?.type).toBe("error");
    expect(anthropicError(last)).toMatchObject({
      type: "overloaded_error",
      message: expect.stringContaining("Overloaded"),
    });
    await expectStillServes(gateway, upstream, "anthropic");
  });
});

describe("silent upstreams", () => {
  test("an upstream that stalls mid-stream gets pings, then an idle-timeout error event", async () => {
    const { upstream, gateway } = await setUp("openai", {
      timeouts: { idleMs: 900, pingIntervalMs: 150, shutdownGraceMs: 500 },
    });
    upstream.enqueue({ kind: "sse", frames: openaiFrames(helloChunks), stallAfterFrames: 2 });
    const started = performance.now();
    const reply = await postStream(`${gateway.url}/v1/messages`, anthropicBody(true));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(reply.status).toBe(200);
    const types = reply.data.map((event) => event.type);
    const lastContent = types.lastIndexOf("content_block_delta");
    expect(lastContent).toBeGreaterThan(0);
    expect(types.slice(lastContent).filter((type) => type === "ping").length).toBeGreaterThanOrEqual(2);
    expect(types.at(-1)).toBe("error");
    expect(anthropicError(reply.data.at(-1)).type).toBe("timeout_error");
    await expectStillServes(gateway, upstream);
  });

  test("an upstream silent after its headers is a 504 timeout_error, not 200 then nothing", async () => {
    const { upstream, gateway } = await setUp("openai", { timeouts: { idleMs: 400, shutdownGraceMs: 500 } });
    upstream.enqueue({ kind: "sse", frames: openaiFrames(helloChunks), stallAfterFrames: 0 });
    const reply = await postJson(`${gateway.url}/v1/messages`, anthropicBody(true));
    expect(reply.status, reply.text).toBe(504);
    expect(anthropicError(reply.body).type).toBe("timeout_error");
    await expectStillServes(gateway, upstream);
  });

  test("an upstream that never answers hits the first-byte timeout: 504 timeout_error", async () => {
    const { upstream, gateway } = await setUp("openai", {
      timeouts: { firstByteMs: 300, shutdownGraceMs: 500 },
      retries: { ...RETRIES, maxAttempts: 2 },
    });
    upstream.enqueue({ kind: "stall" }, { kind: "stall" });
    const started = performance.now();
    const reply = await postJson(`${gateway.url}/v1/messages`, anthropicBody(false));
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(reply.status, reply.text).toBe(504);
    expect(anthropicError(reply.body).type).toBe("timeout_error");
    await expectStillServes(gateway, upstream);
  });
});

describe("clients that leave", () => {
  const longStream = () => {
    const words = Array.from({ length: 300 }, (_, index) => ({
      ...helloChunks[1]!,
      choices: [{ index: 0, delta: { content: ` word${index}` }, finish_reason: null }],
    }));
    return openaiFrames([helloChunks[0], ...words, helloChunks[3]]);
  };

  test("a client that disconnects mid-stream aborts the upstream request at once", async () => {
    const { upstream, gateway } = await setUp();
    upstream.enqueue({ kind: "sse", frames: longStream(), frameDelayMs: 10 });
    const controller = new AbortController();
    const response = await request(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(anthropicBody(true)),
      signal: controller.signal,
    });
    expect(response.statusCode).toBe(200);
    let seen = "";
    let leftAt = 0;
    try {
      for await (const chunk of response.body) {
        seen += chunk.toString();
        if (seen.includes("word5")) {
          leftAt = performance.now();
          controller.abort();
        }
      }
    } catch {
      // the abort ends the body with an error on the client side
    }
    expect(leftAt).toBeGreaterThan(0);
    expect(await upstream.waitForAbort(1_000)).toBe(true);
    expect(performance.now() - leftAt).toBeLessThan(1_000);
    expect(upstream.requests[0]!.aborted).toBe(true);
    expect(upstream.requests[0]!.framesWritten).toBeLessThan(200);
    await expectStillServes(gateway, upstream);
  });

  test("a client that disconnects while waiting for a whole answer aborts the upstream request", async () => {
    const { upstream, gateway } = await setUp();
    upstream.enqueue({ kind: "json", body: helloJson, delayMs: 3_000 });
    const controller = new AbortController();
    const pending = request(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(anthropicBody(false)),
      signal: controller.signal,
    }).catch(() => undefined);
    while (upstream.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const leftAt = performance.now();
    controller.abort();
    await pending;
    expect(await upstream.waitForAbort(1_000)).toBe(true);
    expect(performance.now() - leftAt).toBeLessThan(1_000);
    await expectStillServes(gateway, upstream);
  });
});
