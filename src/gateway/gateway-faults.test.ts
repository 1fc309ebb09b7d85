import { request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import {
  anthropicContentFromEvents,
  getJson,
  type Json,
  postJson,
  postStream,
  startTestGateway,
} from "../../test/support/gateway-harness.js";
import {
  anthropicFrames,
  openaiFrames,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../test/support/scripted-upstream.js";
import { parseSse } from "../stream/sse.js";
import type { RunningGateway } from "./server.js";

let openai: ScriptedUpstream;
let anthropic: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  openai = await startScriptedUpstream("openai");
  anthropic = await startScriptedUpstream("anthropic");
  gateway = await startTestGateway({
    providers: {
      local: { type: "openai", upstream: openai },
      claude: { type: "anthropic", upstream: anthropic, apiKey: "sk-ant-upstream" },
    },
    routes: [{ match: "claude-*", provider: "claude" }],
    file: {
      retries: { maxAttempts: 1 },
      timeouts: { idleMs: 400, firstByteMs: 2000, pingIntervalMs: 100, firstEventHoldMs: 2000 },
    },
  });
});

afterAll(async () => {
  await gateway.close();
  await openai.close();
  await anthropic.close();
});

afterEach(async () => {
  // After every fault the gateway still serves.
  expect((await getJson(`${gateway.url}/health`)).status).toBe(200);
  openai.requests.length = 0;
  anthropic.requests.length = 0;
});

const anthropicBody = (model: string, stream = false) => ({
  model,
  max_tokens: 100,
  stream,
  messages: [{ role: "user", content: "hi" }],
});
const textChunk = (text: string) => ({
  id: "c1",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
});
const finishChunk = {
  id: "c1",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
  usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
};

describe("upstream error statuses are mapped, in each API's shape", () => {
  test.each([
    [429, 429, "rate_limit_error"],
    [529, 529, "overloaded_error"],
    [503, 529, "overloaded_error"],
    [401, 500, "api_error"],
    [403, 500, "api_error"],
    [400, 400, "invalid_request_error"],
    [404, 404, "not_found_error"],
    [500, 500, "api_error"],
  ])("upstream %i -> %i %s", async (upstreamStatus, status, type) => {
    openai.enqueue(
      { kind: "error", status: upstreamStatus, body: { error: { message: `upstream says ${upstreamStatus}` } } },
      { kind: "error", status: upstreamStatus, body: { error: { message: `upstream says ${upstreamStatus}` } } },
    );
    const viaAnthropic = await postJson(`${gateway.url}/v1/messages`, anthropicBody("local-model"));
    expect(viaAnthropic.status).toBe(status);
    expect(viaAnthropic.body).toMatchObject({ type: "error", error: { type } });
    expect((viaAnthropic.body as Json).error.message).toContain(`upstream says ${upstreamStatus}`);
    const viaOpenAI = await postJson(`${gateway.url}/v1/chat/completions`, {
      model: "local-model",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(viaOpenAI.status).toBe(status);
    expect(viaOpenAI.body).toMatchObject({ error: { type, message: expect.stringContaining(`${upstreamStatus}`) } });
    expect(Object.keys((viaOpenAI.body as Json).error).sort()).toEqual(["code", "message", "param", "type"]);
  });

  test("a 429's Retry-After reaches the client when it is not waited for", async () => {
    openai.enqueue({ kind: "error", status: 429, body: "slow down", retryAfter: "7" });
    const reply = await postJson(`${gateway.url}/v1/messages`, anthropicBody("local-model"));
    expect(reply.status).toBe(429);
    expect(reply.headers["retry-after"]).toBe("7");
  });
});

describe("streams", () => {
  test("an error before any content becomes a real error status", async () => {
    anthropic.enqueue({
      kind: "sse",
      frames: anthropicFrames([
        {
          type: "message_start",
          message: {
            id: "msg_1",
            type: "message",
            role: "assistant",
            model: "x",
            content: [],
            usage: { input_tokens: 3, output_tokens: 0 },
          },
        } as never,
        { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } as never,
      ]),
    });
    const reply = await postJson(`${gateway.url}/v1/messages`, anthropicBody("claude-x", true));
    expect(reply.status).toBe(529);
    expect(reply.body).toMatchObject({ type: "error", error: { type: "overloaded_error" } });
  });

  test("an error after content is an error event of the right type", async () => {
    anthropic.enqueue({
      kind: "sse",
      frames: anthropicFrames([
        {
          type: "message_start",
          message: {
            id: "msg_1",
            type: "message",
            role: "assistant",
            model: "x",
            content: [],
            usage: { input_tokens: 3, output_tokens: 0 },
          },
        } as never,
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } as never,
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } } as never,
        { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } as never,
      ]),
    });
    const reply = await postStream(`${gateway.url}/v1/messages`, anthropicBody("claude-x", true));
    expect(reply.status).toBe(200);
    const last = reply.events.at(-1)!;
    expect(last.event).toBe("error");
    expect(JSON.parse(last.data)).toMatchObject({ type: "error", error: { type: "overloaded_error" } });
    expect(reply.data.some((event) => event.type === "message_stop")).toBe(false);
  });

  test("a socket destroyed mid-stream ends the stream with an error event", async () => {
    openai.enqueue({
      kind: "sse",
      frames: openaiFrames([textChunk("a"), textChunk("b"), textChunk("c"), finishChunk]),
      destroyAfterFrames: 2,
      frameDelayMs: 5,
    });
    const reply = await postStream(`${gateway.url}/v1/messages`, anthropicBody("local-model", true));
    expect(reply.status).toBe(200);
    expect(reply.events.at(-1)!.event).toBe("error");
    expect(JSON.parse(reply.events.at(-1)!.data).error.type).toBe("api_error");
  });

  test("a connection lost before any content is a real error status", async () => {
    openai.enqueue({ kind: "sse", frames: openaiFrames([textChunk("a"), finishChunk]), destroyAfterFrames: 0 });
    const reply = await postJson(`${gateway.url}/v1/messages`, anthropicBody("local-model", true));
    expect(reply.status).toBe(502);
    expect(reply.body).toMatchObject({ type: "error", error: { type: "api_error" } });
  });

  test("a stream that just stops, with no finish_reason and no [DONE], is an error, not a complete answer", async () => {
    // No `[DONE]`, no finish_reason: what a connection closed cleanly by a proxy mid-answer looks like.
    openai.enqueue({
      kind: "sse",
      frames: openaiFrames([textChunk("a"), textChunk("b")]).filter((f) => !f.includes("[DONE]")),
    });
    const reply = await postStream(`${gateway.url}/v1/messages`, anthropicBody("local-model", true));
    expect(reply.status).toBe(200);
    expect(reply.events.at(-1)!.event).toBe("error");
    expect(JSON.parse(reply.events.at(-1)!.data).error.message).toContain("ended before the answer was complete");
    expect(reply.events.some((event) => event.event === "message_stop")).toBe(false);
  });

  test("an upstream that ignores stream: true and answers in one JSON body is relayed as a stream", async () => {
    openai.enqueue({
      kind: "json",
      body: {
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: "<think>Short.</think>Whole answer." },
            finish_reason: "stop",
          },
        ],
        usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
      },
    });
    const reply = await postStream(`${gateway.url}/v1/messages`, anthropicBody("local-model", true));
    expect(reply.status).toBe(200);
    expect(anthropicContentFromEvents(reply.data)).toEqual([
      { type: "thinking", thinking: "Short.", signature: expect.any(String) },
      { type: "text", text: "Whole answer." },
    ]);
    expect(reply.data.at(-1)).toEqual({ type: "message_stop" });
    const delta = reply.data.find((event) => event.type === "message_delta");
    expect(delta).toMatchObject({ delta: { stop_reason: "end_turn" }, usage: { input_tokens: 9, output_tokens: 4 } });
  });

  test.each([false, true])(
    "a 2xx answer that is an error object, or has no choices, is an error status, never an empty message (stream %s)",
    async (stream) => {
      openai.enqueue({ kind: "json", body: { error: { message: "model is loading", type: "invalid_request_error" } } });
      const failed = await postJson(`${gateway.url}/v1/messages`, anthropicBody("local-model", stream));
      expect(failed.status).toBe(400);
      expect((failed.body as Json).error).toMatchObject({
        type: "invalid_request_error",
        message: expect.stringContaining("model is loading"),
      });
      openai.enqueue({ kind: "json", body: { id: "c", object: "chat.completion", choices: [] } });
      const empty = await postJson(`${gateway.url}/v1/messages`, anthropicBody("local-model", stream));
      expect(empty.status).toBe(502);
      expect((empty.body as Json).error).toMatchObject({
        type: "api_error",
        message: expect.stringContaining("choices"),
      });
    },
  );

  test("a stream request answered with a body that is not JSON nor SSE is a clear error", async () => {
    openai.enqueue({ kind: "json", body: '"a JSON string, not an answer"' });
    const reply = await postJson(`${gateway.url}/v1/messages`, anthropicBody("local-model", true));
    expect(reply.status).toBe(502);
    expect((reply.body as Json).error.message).toContain("not JSON");
  });

  test("on the OpenAI route a mid-stream failure is a data: error chunk", async () => {
    openai.enqueue({
      kind: "sse",
      frames: openaiFrames([textChunk("Hello there, "), textChunk("b"), textChunk("c"), finishChunk]),
      destroyAfterFrames: 2,
      frameDelayMs: 5,
    });
    const reply = await postStream(`${gateway.url}/v1/chat/completions`, {
      model: "local-model",
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(reply.status).toBe(200);
    expect(reply.data.at(-1)).toMatchObject({ error: { type: "api_error" } });
  });

  test("a stalled upstream hits the idle timeout, with pings while it is silent", async () => {
    openai.enqueue({
      kind: "sse",
      frames: openaiFrames([textChunk("a"), textChunk("b"), finishChunk]),
      stallAfterFrames: 1,
    });
    const reply = await postStream(`${gateway.url}/v1/messages`, anthropicBody("local-model", true));
    expect(reply.status).toBe(200);
    expect(reply.events.some((event) => event.event === "ping")).toBe(true);
    expect(JSON.parse(reply.events.at(-1)!.data)).toMatchObject({ type: "error", error: { type: "timeout_error" } });
  });

  test("an upstream silent past the hold time: the stream still opens with message_start, then pings", async () => {
    const quick = await startTestGateway({
      providers: { local: { type: "openai", upstream: openai } },
      file: { timeouts: { idleMs: 5000, pingIntervalMs: 50, firstEventHoldMs: 50 } },
    });
    try {
      openai.enqueue({ kind: "sse", frames: openaiFrames([textChunk("late"), finishChunk]), frameDelayMs: 1000 });
      const sent = performance.now();
      const response = await request(`${quick.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(anthropicBody("local-model", true)),
      });
      // The status line does not wait for the upstream's first frame once the hold time is over.
      expect(performance.now() - sent).toBeLessThan(700);
      expect(response.statusCode).toBe(200);
      const text = await response.body.text();
      const events = parseSse(text);
      const names = events.map((event) => event.event);
      expect(names[0]).toBe("message_start");
      expect(names.filter((name) => name === "message_start")).toHaveLength(1);
      expect(names.indexOf("ping")).toBeGreaterThan(0);
      expect(JSON.parse(events[0]!.data).message.usage.input_tokens).toBeGreaterThan(0);
      expect(text).toContain('"text":"late"');
      expect(names.at(-1)).toBe("message_stop");
    } finally {
      await quick.close();
    }
  });

  test("a client that leaves before a whole answer is logged and counted as 499, and the upstream call ends", async () => {
    openai.enqueue({ kind: "stall" });
    const before = openai.requests.length;
    const abort = new AbortController();
    const sent = request(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(anthropicBody("local-model", false)),
      signal: abort.signal,
    }).catch((error: unknown) => error);
    for (let attempt = 0; attempt < 100 && openai.requests.length === before; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    abort.abort();
    await sent;
    expect(await openai.waitForAbort(2000)).toBe(true);
    let metrics = "";
    for (let attempt = 0; attempt < 50 && !metrics.includes('status="499"'); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      metrics = (await getJson(`${gateway.url}/metrics`)).text;
    }
    expect(metrics).toMatch(/parley_requests_total\{route="POST \/v1\/messages",status="499"\} 1/);
  });

  test("a client that disconnects aborts the upstream request at once", async () => {
    openai.enqueue({
      kind: "sse",
      frames: openaiFrames(Array.from({ length: 200 }, (_, index) => textChunk(`t${index} `))),
      frameDelayMs: 20,
    });
    const response = await request(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(anthropicBody("local-model", true)),
    });
    expect(response.statusCode).toBe(200);
    for await (const _ of response.body) break;
    const started = performance.now();
    expect(await openai.waitForAbort(2000)).toBe(true);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test("a slow client pauses the upstream (backpressure), then gets everything", async () => {
    const total = 50_000;
    const filler = "x".repeat(400);
    openai.enqueue({
      kind: "sse",
      frames: openaiFrames([...Array.from({ length: total }, () => textChunk(filler)), finishChunk]),
    });
    const response = await request(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(anthropicBody("local-model", true)),
    });
    expect(response.statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const written = openai.requests[0]!.framesWritten;
    // About 25 MB from upstream would fit nowhere but in Parley's memory; the upstream must have been held back.
    expect(written).toBeLessThan(total / 2);
    const text = await response.body.text();
    expect(text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true);
    expect(openai.requests[0]!.framesWritten).toBe(total + 2);
  });
});

describe("upstream faults that are not the client's", () => {
  test("a redirect is a 502 naming where it points, on every route, never a 400 blaming the client", async () => {
    const location = "https://models.example.invalid/v1/chat/completions";
    for (const path of ["/v1/messages", "/v1/chat/completions"]) {
      openai.enqueue({ kind: "error", status: 301, body: "", headers: { location } });
      const body =
        path === "/v1/messages"
          ? anthropicBody("local-model")
          : { model: "local-model", messages: [{ role: "user", content: "hi" }] };
      const reply = await postJson(`${gateway.url}${path}`, body);
      expect(reply.status).toBe(502);
      expect(reply.text).toContain("redirected");
      expect(reply.text).toContain(location);
    }
  });

  test("a 200 whose streamed body is an HTML page, not events, is a 502 saying so", async () => {
    openai.enqueue({
      kind: "sse",
      frames: ["<html><body>Bad gateway login page</body></html>"],
      headers: { "content-type": "text/html; charset=utf-8" },
    });
    const reply = await postJson(`${gateway.url}/v1/messages`, anthropicBody("local-model", true));
    expect(reply.status).toBe(502);
    expect(reply.body).toMatchObject({ type: "error", error: { type: "api_error" } });
    expect((reply.body as Json).error.message).toMatch(/not an event stream|text\/html/);
  });
});
