import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { refusingPort } from "../../test/support/refusing-port.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import { UpstreamError } from "../core/index.js";
import { Cancellation } from "./cancellation.js";
import { UpstreamClient } from "./client.js";

let upstream: ScriptedUpstream;
let client: UpstreamClient;

beforeEach(async () => {
  upstream = await startScriptedUpstream("openai");
  client = new UpstreamClient({
    timeouts: { connectMs: 1000, firstByteMs: 1000, idleMs: 300 },
    retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 50, maxRetryAfterMs: 2000 },
  });
});

afterEach(async () => {
  await client.destroy();
  await upstream.close();
});

const call = (cancel?: Cancellation) =>
  client.post({
    url: `${upstream.baseUrl}/chat/completions`,
    headers: { "content-type": "application/json" },
    body: '{"model":"m"}',
    ...(cancel === undefined ? {} : { cancel }),
  });

describe("UpstreamClient", () => {
  test("retries a 429 after the Retry-After it was given", async () => {
    upstream.enqueue(
      { kind: "error", status: 429, body: { error: { message: "slow down" } }, retryAfter: "1" },
      { kind: "json", body: { ok: true } },
    );
    const started = performance.now();
    const response = await call();
    expect(response.status).toBe(200);
    expect(response.attempts).toBe(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(await response.body.json()).toEqual({ ok: true });
    expect(upstream.requests).toHaveLength(2);
  });

  test("tells onRetry which request it retries, so the log line carries its request id", async () => {
    const retries: Array<[number, string | undefined]> = [];
    const reporting = new UpstreamClient({
      retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 5 },
      onRetry: (attempt, _delay, _error, request) => retries.push([attempt, request.requestId]),
    });
    upstream.enqueue({ kind: "error", status: 500, body: "oops" }, { kind: "json", body: { ok: true } });
    const response = await reporting.post({
      url: `${upstream.baseUrl}/chat/completions`,
      headers: { "content-type": "application/json" },
      body: "{}",
      requestId: "req_42",
    });
    await response.body.text();
    await reporting.destroy();
    expect(retries).toEqual([[1, "req_42"]]);
  });

  test("retries 500 and 529, then gives up with the mapped error", async () => {
    upstream.enqueue(
      { kind: "error", status: 500, body: "oops" },
      { kind: "error", status: 529, body: { type: "error", error: { type: "overloaded_error", message: "busy" } } },
      {
        kind: "error",
        status: 529,
        body: { type: "error", error: { type: "overloaded_error", message: "still busy" } },
      },
    );
    const error = await call().catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ type: "overloaded_error", status: 529, upstreamStatus: 529 });
    expect((error as Error).message).toContain("still busy");
    expect(upstream.requests).toHaveLength(3);
  });

  test("does not retry a 400", async () => {
    upstream.enqueue({ kind: "error", status: 400, body: { error: { message: "bad field" } } });
    await expect(call()).rejects.toMatchObject({ type: "invalid_request_error", status: 400 });
    expect(upstream.requests).toHaveLength(1);
  });

  test("a Retry-After beyond the cap is not waited for", async () => {
    upstream.enqueue({ kind: "error", status: 429, body: "later", retryAfter: "120" });
    await expect(call()).rejects.toMatchObject({ type: "rate_limit_error", retryAfterMs: 120_000 });
    expect(upstream.requests).toHaveLength(1);
  });

  test("a destroyed socket is retried", async () => {
    upstream.enqueue({ kind: "destroy" }, { kind: "json", body: { ok: 1 } });
    const response = await call();
    expect(response.attempts).toBe(2);
  });

  test("a refused connection is an api_error after the retries", async () => {
    const held = await refusingPort();
    try {
      const refused = client.post({
        url: `http://127.0.0.1:${held.port}/v1/chat/completions`,
        headers: {},
        body: "{}",
      });
      await expect(refused).rejects.toMatchObject({ type: "api_error", status: 502 });
    } finally {
      await held.release();
    }
  });

  test("an upstream that never answers hits the first-byte timeout", async () => {
    upstream.fallback = () => ({ kind: "stall" });
    await expect(call()).rejects.toMatchObject({ type: "timeout_error" });
  });

  test("a silent body hits the idle timeout, a timeout_error for whoever reads it", async () => {
    upstream.enqueue({ kind: "sse", frames: ["data: 1\n\n", "data: 2\n\n"], stallAfterFrames: 1 });
    const response = await call();
    const reading = (async () => {
      for await (const _ of response.body) {
        // read until the idle timeout fires
      }
    })();
    await expect(reading).rejects.toMatchObject({ type: "timeout_error", status: 504, retryable: false });
  });

  test("an abort ends the upstream request at once", async () => {
    upstream.enqueue({
      kind: "sse",
      frames: Array.from({ length: 50 }, (_, index) => `data: ${index}\n\n`),
      frameDelayMs: 20,
    });
    const cancel = new Cancellation();
    const response = await call(cancel);
    cancel.abort(new Error("the client left"));
    await expect(response.body.text()).rejects.toThrow();
    expect(await upstream.waitForAbort(2000)).toBe(true);
  });

  test("keeps connections alive between calls", async () => {
    upstream.fallback = () => ({ kind: "json", body: {} });
    for (let index = 0; index < 6; index++) await (await call()).body.text();
    const ports = new Set(upstream.requests.map((request) => request.remotePort));
    expect(upstream.requests).toHaveLength(6);
    // Without keep-alive every call would open its own connection.
    expect(ports.size).toBeLessThanOrEqual(2);
  });
});
