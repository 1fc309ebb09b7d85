import { request } from "undici";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestGateway } from "../../test/support/gateway-harness.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import { parseSse } from "../stream/sse.js";
import type { RunningGateway } from "./server.js";

/**
 * An upstream slow to send even its headers (a long prefill on a local model): a streaming client gets its status
 * line, message_start and pings after the hold time all the same, so that a client that gives up after minutes
 * without a first byte keeps waiting; a client that leaves cancels the upstream request.
 */

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  gateway = await startTestGateway({
    providers: { local: { type: "openai", upstream } },
    file: { retries: { maxAttempts: 1 }, timeouts: { firstEventHoldMs: 150, pingIntervalMs: 100, idleMs: 5_000 } },
  });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const chunk = (delta: object, finish: string | null = null) => ({
  id: "c",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

const body = JSON.stringify({
  model: "local-model",
  max_tokens: 100,
  stream: true,
  messages: [{ role: "user", content: "Summarise this long file." }],
});

function post(signal?: AbortSignal) {
  return request(`${gateway.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    ...(signal === undefined ? {} : { signal }),
  });
}

describe("an upstream slow to send its headers", () => {
  test("the client gets 200, message_start and pings before the upstream's headers, then the answer", async () => {
    upstream.enqueue({
      kind: "sse",
      headersDelayMs: 1_200,
      frames: openaiFrames([chunk({ content: "done" }), chunk({}, "stop")]),
    });
    const sent = performance.now();
    const response = await post();
    const statusAfter = performance.now() - sent;
    expect(response.statusCode).toBe(200);
    expect(statusAfter).toBeLessThan(1_000);
    const text = await response.body.text();
    const events = parseSse(text);
    const names = events.map((event) => event.event);
    expect(names[0]).toBe("message_start");
    expect(names.filter((name) => name === "message_start")).toHaveLength(1);
    const firstContent = names.indexOf("content_block_start");
    expect(names.slice(1, firstContent)).toContain("ping");
    expect(text).toContain('"text":"done"');
    expect(names.at(-1)).toBe("message_stop");
  });

  test("a client that leaves while the upstream prefills cancels the upstream request", async () => {
    upstream.enqueue({ kind: "stall" });
    const abort = new AbortController();
    const response = await post(abort.signal);
    expect(response.statusCode).toBe(200);
    const reader = response.body[Symbol.asyncIterator]();
    await reader.next();
    abort.abort();
    await reader.return?.().catch(() => undefined);
    expect(await upstream.waitForAbort(3_000)).toBe(true);
  });

  test("an upstream error that comes after the status line is an error event", async () => {
    upstream.enqueue({
      kind: "error",
      status: 400,
      delayMs: 800,
      body: { error: { message: "'max_tokens' is too large: 100000.", type: "BadRequestError", code: 400 } },
    });
    const response = await post();
    expect(response.statusCode).toBe(200);
    const events = parseSse(await response.body.text());
    const last = events.at(-1)!;
    expect(last.event).toBe("error");
    expect(JSON.parse(last.data)).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: "upstream: 'max_tokens' is too large: 100000." },
    });
  });
});
