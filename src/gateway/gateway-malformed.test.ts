import { connect } from "node:net";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { getJson, type Json, postJson, startTestGateway } from "../../test/support/gateway-harness.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/** Malformed requests get the status that says why and an error body in the route's shape, never a 500. */
let upstream: ScriptedUpstream;
let gateway: RunningGateway;

const answer = {
  id: "c",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  upstream.fallback = () => ({ kind: "json", body: answer });
  gateway = await startTestGateway({ providers: { local: { type: "openai", upstream } } });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

/** Raw bytes on a socket, and everything the gateway answered until it closed the connection. */
function raw(data: string, halfClose: boolean): Promise<string> {
  const { port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () => {
      socket.write(data);
      if (halfClose) socket.end();
    });
    let reply = "";
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString();
    });
    socket.on("close", () => resolve(reply));
    socket.on("error", reject);
  });
}

function parseRaw(reply: string): { status: number; body: Json } {
  const [head = "", body = ""] = reply.split("\r\n\r\n");
  return { status: Number(head.split(" ")[1]), body: JSON.parse(body) };
}

describe("JSON nested deeper than any real request", () => {
  test("is a 400 naming the body on every JSON route, in the route's shape", async () => {
    const deep = `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"metadata":{"x":${nested(5000)}}}`;
    for (const path of ["/v1/messages", "/v1/messages/count_tokens", "/v1/conversations"]) {
      const reply = await postJson(`${gateway.url}${path}`, deep);
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
      expect((reply.body as Json).error.message).toContain("deeper than 512");
    }
    const openai = await postJson(`${gateway.url}/v1/chat/completions`, deep);
    expect(openai.status).toBe(400);
    expect(openai.body).toMatchObject({ error: { type: "invalid_request_error", param: "body" } });
    const created = (await postJson(`${gateway.url}/v1/conversations`, {})).body as Json;
    const append = await postJson(`${gateway.url}/v1/conversations/${created.id}/messages`, deep);
    expect(append.status).toBe(400);
  });

  test("nesting up to the limit still goes through, brackets inside strings do not count", async () => {
    const input = JSON.parse(nested(400));
    const reply = await postJson(`${gateway.url}/v1/messages`, {
      model: "m",
      max_tokens: 5,
      messages: [
        { role: "user", content: `${"[".repeat(2000)} text` },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "t", input: { deep: input } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "done" }] },
      ],
    });
    expect(reply.status).toBe(200);
  });

  test("an upstream answer nested that deep is a 502, not a 500", async () => {
    upstream.enqueue({ kind: "json", body: `{"id":"c","choices":[],"x":${nested(5000)}}` });
    const reply = await postJson(`${gateway.url}/v1/messages`, {
      model: "m",
      max_tokens: 5,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(reply.status).toBe(502);
  });

  test("so is one sent whole to a streaming request, and the error says why", async () => {
    const message = { role: "assistant", content: "ok" };
    upstream.enqueue({
      kind: "json",
      body: `{"id":"c","choices":[{"index":0,"message":${JSON.stringify(message)},"finish_reason":"stop"}],"x":${nested(20000)}}`,
    });
    const reply = await postJson(`${gateway.url}/v1/messages`, {
      model: "m",
      max_tokens: 5,
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(reply.status).toBe(502);
    expect((reply.body as Json).error.message).toContain("deeper than 512");
  });
});

describe("POST /v1/conversations with a chunked body", () => {
  test("the body is read: its id is used, and a bad body is refused", async () => {
    const chunked = (text: string) => Readable.from([Buffer.from(text)]);
    const created = await postJson(`${gateway.url}/v1/conversations`, chunked('{"id":"chunked-conv"}'));
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: "chunked-conv" });
    const again = await postJson(`${gateway.url}/v1/conversations`, chunked('{"id":"chunked-conv"}'));
    expect(again.status).toBe(409);
    const bad = await postJson(`${gateway.url}/v1/conversations`, chunked('{"id": 7}'));
    expect(bad.status).toBe(400);
    const empty = await postJson(`${gateway.url}/v1/conversations`, chunked(""));
    expect(empty.status).toBe(201);
  });
});

describe("requests Node's parser refuses", () => {
  test("a URL over 16 KB is a 431 with an error body", async () => {
    const reply = parseRaw(
      await raw(`GET /v1/models?${"a".repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, false),
    );
    expect(reply.status).toBe(431);
    expect(reply.body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
  });

  test("a request cut short is a 400 with an error body, in OpenAI's shape under /v1/chat", async () => {
    const headers = parseRaw(await raw("POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty", true));
    expect(headers.status).toBe(400);
    expect(headers.body).toMatchObject({ type: "error", error: { message: expect.stringContaining("ended") } });
    const body = parseRaw(
      await raw(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
        true,
      ),
    );
    expect(body.status).toBe(400);
    expect(body.body).toMatchObject({ error: { type: "invalid_request_error" } });
  });

  test("the gateway serves on afterwards", async () => {
    expect((await getJson(`${gateway.url}/health`)).status).toBe(200);
  });
});

describe("/v1/chat/ with a trailing slash", () => {
  test("answers in OpenAI's shape", async () => {
    for (const path of ["/v1/chat/", "/v1/chat", "/v1/chat/nothing/"]) {
      const reply = await getJson(`${gateway.url}${path}`);
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ error: { type: "not_found_error", code: "not_found" } });
    }
    const wrongMethod = await getJson(`${gateway.url}/v1/chat/completions/`);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body).toMatchObject({ error: { type: "invalid_request_error" } });
  });
});

describe("a request without Host", () => {
  test("is answered like any other, in the route's shape, not with a bare 400", async () => {
    const health = await raw("GET /health HTTP/1.1\r\nConnection: close\r\n\r\n", false);
    expect(parseRaw(health)).toEqual({ status: 200, body: { status: "ok" } });
    const body = '{"model":"m","max_tokens":5}';
    const refused = parseRaw(
      await raw(
        `POST /v1/messages HTTP/1.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        false,
      ),
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(JSON.stringify(refused.body)).toContain("messages");
  });
});
