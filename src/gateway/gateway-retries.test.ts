import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { postJson, startTestGateway } from "../../test/support/gateway-harness.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  gateway = await startTestGateway({
    providers: { local: { type: "openai", upstream } },
    file: { retries: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 20, maxRetryAfterMs: 5000 } },
  });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const body = { model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };
const answer = {
  id: "c",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};

test("429 with Retry-After is retried after the wait, invisibly to the client", async () => {
  upstream.enqueue({ kind: "error", status: 429, body: "busy", retryAfter: "1" }, { kind: "json", body: answer });
  const started = performance.now();
  const reply = await postJson(`${gateway.url}/v1/messages`, body);
  expect(reply.status).toBe(200);
  expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  expect(upstream.requests).toHaveLength(2);
});

test("500, 529 and a dropped connection are retried, before anything is sent", async () => {
  upstream.requests.length = 0;
  upstream.enqueue({ kind: "error", status: 500, body: "x" }, { kind: "destroy" }, { kind: "json", body: answer });
  const reply = await postJson(`${gateway.url}/v1/messages`, { ...body, stream: false });
  expect(reply.status).toBe(200);
  expect(upstream.requests).toHaveLength(3);
  upstream.enqueue({ kind: "error", status: 529, body: "x" }, { kind: "json", body: answer });
  expect((await postJson(`${gateway.url}/v1/messages`, body)).status).toBe(200);
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  // One retry in the test before, three here.
  expect(metrics).toMatch(/parley_upstream_retries_total\{provider="local"\} 4/);
});

test("a stream that breaks before content and then meets errors stops at maxAttempts in all", async () => {
  upstream.requests.length = 0;
  const roleOnly = {
    id: "c",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta: { role: "assistant" }, finish_reason: null }],
  };
  upstream.enqueue(
    { kind: "sse", frames: [`data: ${JSON.stringify(roleOnly)}\n\n`], destroyAfterFrames: 1 },
    { kind: "error", status: 500, body: "x" },
    { kind: "error", status: 500, body: "x" },
    { kind: "json", body: answer },
  );
  const reply = await postJson(`${gateway.url}/v1/messages`, { ...body, stream: true });
  expect(reply.status).toBe(500);
  expect(reply.body).toMatchObject({ type: "error", error: { type: "api_error" } });
  expect(upstream.requests).toHaveLength(3);
  upstream.enqueue({ kind: "json", body: answer });
  expect((await postJson(`${gateway.url}/v1/messages`, body)).status).toBe(200);
});

describe("a rate limit longer than the stream's hold", () => {
  // An upstream of its own: the tests above leave replies queued on theirs.
  let limited: ScriptedUpstream;
  let held: RunningGateway;
  beforeAll(async () => {
    limited = await startScriptedUpstream("openai");
    held = await startTestGateway({
      providers: { local: { type: "openai", upstream: limited } },
      file: { timeouts: { firstEventHoldMs: 1000 } },
    });
  });
  afterAll(async () => {
    await held.close();
    await limited.close();
  });

  test.each([
    ["/v1/messages", { ...body, stream: true }, "rate_limit_error"],
    [
      "/v1/chat/completions",
      { model: "m", stream: true, messages: [{ role: "user", content: "hi" }] },
      "rate_limit_error",
    ],
  ])(
    "reaches a streaming client on %s at once, as a 429 with retry-after, not as 200 and an error event",
    async (path, request, type) => {
      limited.requests.length = 0;
      limited.enqueue({ kind: "error", status: 429, body: "busy", retryAfter: "7" });
      const started = performance.now();
      const reply = await postJson(`${held.url}${path}`, request);
      expect(reply.status).toBe(429);
      expect(reply.headers["retry-after"]).toBe("7");
      expect(JSON.stringify(reply.body)).toContain(type);
      expect(performance.now() - started).toBeLessThan(900);
      expect(limited.requests).toHaveLength(1);
    },
  );

  test("a shorter one is still waited for within the hold", async () => {
    limited.requests.length = 0;
    limited.enqueue({ kind: "error", status: 429, body: "busy", retryAfter: "0" }, { kind: "json", body: answer });
    const reply = await postJson(`${held.url}/v1/messages`, { ...body, stream: true });
    expect(reply.status).toBe(200);
    expect(limited.requests).toHaveLength(2);
  });
});
