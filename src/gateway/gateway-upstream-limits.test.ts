import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { type Json, postJson, startTestGateway } from "../../test/support/gateway-harness.js";
import type { ScriptedUpstream } from "../../test/support/scripted-upstream.js";

/**
 * An upstream that breaks after its headers, or sends too much, too slowly or without end: every case ends in the
 * documented status (a whole answer's failure is retried like one before the headers), never a bare 500, and
 * nothing the upstream sends is held beyond the configured limits.
 */
type Play = (res: ServerResponse, attempt: number, req: IncomingMessage) => void;

interface RawUpstream {
  url: string;
  attempts: number;
  server: Server;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A bare node:http upstream whose every answer is written by `play` (the n-th attempt counts from 1). */
async function rawUpstream(play: Play): Promise<RawUpstream> {
  const upstream: RawUpstream = { url: "", attempts: 0, server: createServer() };
  upstream.server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    // Only calls of the API count as attempts; the gateway's model discovery (GET /models) finds nothing here.
    if (req.method !== "POST") {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
      return;
    }
    req.on("end", () => play(res, ++upstream.attempts, req));
  });
  await new Promise<void>((resolve) => upstream.server.listen(0, "127.0.0.1", resolve));
  upstream.url = `http://127.0.0.1:${(upstream.server.address() as AddressInfo).port}`;
  cleanups.push(async () => {
    upstream.server.closeAllConnections();
    await new Promise<void>((resolve) => upstream.server.close(() => resolve()));
  });
  return upstream;
}

async function gatewayFor(upstream: RawUpstream, type: "openai" | "anthropic", file: Record<string, unknown> = {}) {
  const stub = { baseUrl: type === "openai" ? `${upstream.url}/v1` : upstream.url } as ScriptedUpstream;
  const gateway = await startTestGateway({
    providers: { up: { upstream: stub, type } },
    file: { retries: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 }, ...file },
  });
  cleanups.push(() => gateway.close());
  return gateway;
}

const answer = JSON.stringify({
  id: "c",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello there" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 },
});
const request = (stream: boolean) => ({
  model: "m",
  max_tokens: 64,
  stream,
  messages: [{ role: "user", content: "Say hello." }],
});
const json = { "content-type": "application/json" };

/** Headers and half the answer, then the connection reset. */
const resetMidBody: Play = (res) => {
  res.writeHead(200, { ...json, "content-length": answer.length });
  res.write(answer.slice(0, 40), () => res.socket?.resetAndDestroy());
};

describe("a whole answer that fails after its headers", () => {
  test("a reset mid-body is retried, and the next attempt's answer goes to the client", async () => {
    const upstream = await rawUpstream((res, attempt, req) =>
      attempt === 1 ? resetMidBody(res, attempt, req) : res.writeHead(200, json).end(answer),
    );
    const gateway = await gatewayFor(upstream, "openai");
    const reply = await postJson(`${gateway.url}/v1/messages`, request(false));
    expect(reply.status).toBe(200);
    expect((reply.body as Json).content[0].text).toBe("Hello there");
    expect(upstream.attempts).toBe(2);
  });

  test("a reset mid-body on every attempt is a 502 api_error, on both routes", async () => {
    const upstream = await rawUpstream(resetMidBody);
    const gateway = await gatewayFor(upstream, "openai");
    const anthropic = await postJson(`${gateway.url}/v1/messages`, request(false));
    expect(anthropic.status).toBe(502);
    expect(anthropic.body).toMatchObject({ type: "error", error: { type: "api_error" } });
    expect((anthropic.body as Json).error.message).toMatch(/upstream connection failed/);
    expect(upstream.attempts).toBe(3);
    const openai = await postJson(`${gateway.url}/v1/chat/completions`, request(false));
    expect(openai.status).toBe(502);
    expect(openai.body).toMatchObject({ error: { type: "api_error" } });
  });

  test("silence mid-body past the idle timeout is retried, then a 504 timeout_error", async () => {
    const upstream = await rawUpstream((res) => {
      res.writeHead(200, json);
      res.write(answer.slice(0, 40));
    });
    const gateway = await gatewayFor(upstream, "openai", { timeouts: { idleMs: 150 } });
    const reply = await postJson(`${gateway.url}/v1/messages`, request(false));
    expect(reply.status).toBe(504);
    expect(reply.body).toMatchObject({ type: "error", error: { type: "timeout_error" } });
    expect(upstream.attempts).toBe(3);
  });

  test("an answer that trickles in, never silent for long, ends at timeouts.answerMs with a 504", async () => {
    const upstream = await rawUpstream((res) => {
      res.writeHead(200, json);
      const timer = setInterval(() => res.write(" "), 20);
      res.on("close", () => clearInterval(timer));
    });
    const gateway = await gatewayFor(upstream, "openai", { timeouts: { idleMs: 1_000, answerMs: 400 } });
    const started = performance.now();
    const reply = await postJson(`${gateway.url}/v1/messages`, request(false));
    expect(reply.status).toBe(504);
    expect((reply.body as Json).error.message).toContain("timeouts.answerMs");
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(upstream.attempts).toBe(1);
  });

  // A count is advice: where the provider's fails, the gateway's estimate answers (gateway-count-tokens.test.ts).
  test("count_tokens through an Anthropic upstream that answers with something not JSON: the estimate", async () => {
    const upstream = await rawUpstream((res) => res.writeHead(200, { "content-type": "text/html" }).end("<html>"));
    const gateway = await gatewayFor(upstream, "anthropic");
    const reply = await postJson(`${gateway.url}/v1/messages/count_tokens`, {
      model: "claude-sonnet-4-5",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(reply.status).toBe(200);
    expect((reply.body as Json).input_tokens).toBeGreaterThan(0);
    expect(upstream.attempts).toBe(1);
  });

  test("count_tokens through an Anthropic upstream that resets mid-body: retried, then the estimate", async () => {
    const upstream = await rawUpstream(resetMidBody);
    const gateway = await gatewayFor(upstream, "anthropic");
    const reply = await postJson(`${gateway.url}/v1/messages/count_tokens`, {
      model: "claude-sonnet-4-5",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(reply.status).toBe(200);
    expect((reply.body as Json).input_tokens).toBeGreaterThan(0);
    expect(upstream.attempts).toBe(3);
  });
});

describe("limits on what an upstream sends", () => {
  const LIMITS = { limits: { maxAnswerBytes: 1024 * 1024, maxEventBytes: 64 * 1024 } };

  test("a whole answer over limits.maxAnswerBytes is a 502 naming the limit, not retried", async () => {
    const big = `{"pad":"${"x".repeat(4 * 1024 * 1024)}"}`;
    const upstream = await rawUpstream((res) => res.writeHead(200, json).end(big));
    const gateway = await gatewayFor(upstream, "openai", LIMITS);
    const reply = await postJson(`${gateway.url}/v1/messages`, request(false));
    expect(reply.status).toBe(502);
    expect((reply.body as Json).error.message).toContain("limits.maxAnswerBytes");
    expect(upstream.attempts).toBe(1);
  });

  test("a stream over limits.maxAnswerBytes ends with an error event", async () => {
    const frame = (content: string) =>
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
    const upstream = await rawUpstream((res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const piece = frame("y".repeat(16 * 1024));
      const write = () => {
        while (res.write(piece)) {}
        res.once("drain", write);
      };
      res.on("close", () => res.off("drain", write));
      write();
    });
    const gateway = await gatewayFor(upstream, "openai", LIMITS);
    const reply = await postJson(`${gateway.url}/v1/messages`, request(true));
    expect(reply.status).toBe(200);
    expect(reply.text).toMatch(/event: error\ndata: .*limits\.maxAnswerBytes/);
  });

  test("an SSE line without end is a 502 before the status line, an error event after it", async () => {
    const endless =
      (prefix: string): Play =>
      (res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(prefix);
        const piece = "z".repeat(16 * 1024);
        const write = () => {
          while (res.write(piece)) {}
          res.once("drain", write);
        };
        res.on("close", () => res.off("drain", write));
        write();
      };
    const first = await rawUpstream(endless("data: "));
    const before = await postJson(`${(await gatewayFor(first, "openai", LIMITS)).url}/v1/messages`, request(true));
    expect(before.status).toBe(502);
    expect((before.body as Json).error.message).toContain("limits.maxEventBytes");

    const content = `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "Hi" }, finish_reason: null }] })}\n\n`;
    const second = await rawUpstream(endless(`${content}data: `));
    const after = await postJson(`${(await gatewayFor(second, "openai", LIMITS)).url}/v1/messages`, request(true));
    expect(after.status).toBe(200);
    expect(after.text).toMatch(/event: error\ndata: .*limits\.maxEventBytes/);
  });

  test("a huge error body is read only for its message: the mapped status, at once", async () => {
    const upstream = await rawUpstream((res) => {
      res.writeHead(400, json);
      res.write(`{"error":{"message":"bad request","pad":"`);
      const piece = "e".repeat(64 * 1024);
      const write = () => {
        while (res.write(piece)) {}
        res.once("drain", write);
      };
      res.on("close", () => res.off("drain", write));
      write();
    });
    const gateway = await gatewayFor(upstream, "openai");
    const reply = await postJson(`${gateway.url}/v1/messages`, request(false));
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(reply.text.length).toBeLessThan(4_000);
  });
});
