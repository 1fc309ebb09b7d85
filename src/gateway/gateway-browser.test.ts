import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { getJson, type Json, postJson, startTestGateway } from "../../test/support/gateway-harness.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * Web pages cannot drive the gateway: a page's cross-origin POST, with a content type a browser sends without
 * asking (text/plain, a form), reached the upstream and spent tokens, and a DNS-rebinding page (its own name
 * re-pointed at 127.0.0.1) could read the answers. Clients that are not browsers send no Origin and pass as before;
 * the gateway's own pages (the inspector) and configured origins pass too.
 */
let upstream: ScriptedUpstream;
let gateway: RunningGateway;
let port: string;

const answer = {
  id: "c",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};
const body = { model: "m", max_tokens: 16, messages: [{ role: "user", content: "hi" }] };

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  upstream.fallback = () => ({ kind: "json", body: answer });
  gateway = await startTestGateway({
    providers: { local: { type: "openai", upstream } },
    file: { allowedOrigins: ["https://app.example.com"], allowedHosts: ["parley.internal"] },
  });
  port = new URL(gateway.url).port;
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

beforeEach(() => {
  upstream.requests.length = 0;
});

/** node:http, so that the Host header is the test's to choose. */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  payload?: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: Json }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${gateway.url}${path}`, { method, headers }, (response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => {
        text += chunk.toString();
      });
      response.on("end", () => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: parsed });
      });
    });
    request.on("error", reject);
    request.end(payload);
  });
}

describe("content types", () => {
  test.each([
    ["text/plain"],
    ["text/plain;charset=UTF-8"],
    ["application/x-www-form-urlencoded"],
    ["multipart/form-data; boundary=x"],
  ])("%s on a JSON route is a 415, and nothing reaches the upstream", async (type) => {
    for (const path of ["/v1/messages", "/v1/chat/completions", "/v1/messages/count_tokens", "/v1/conversations"]) {
      const reply = await postJson(`${gateway.url}${path}`, JSON.stringify(body), { "content-type": type });
      expect(reply.status).toBe(415);
      expect(JSON.stringify(reply.body)).toContain("content-type must be application/json");
    }
    expect(upstream.requests).toHaveLength(0);
  });

  test("a body with no content type is a 415; application/json with a charset and +json types pass", async () => {
    expect((await send("POST", "/v1/messages", {}, JSON.stringify(body))).status).toBe(415);
    for (const type of ["application/json; charset=utf-8", "application/vnd.api+json", "APPLICATION/JSON"]) {
      expect((await postJson(`${gateway.url}/v1/messages`, body, { "content-type": type })).status).toBe(200);
    }
  });
});

describe("Origin", () => {
  test("a page of another origin is refused with a 403 before anything else, whatever the content type", async () => {
    for (const origin of ["https://evil.example", "null", `http://127.0.0.1:${Number(port) + 1}`]) {
      const reply = await postJson(`${gateway.url}/v1/messages`, body, { origin });
      expect(reply.status).toBe(403);
      expect(reply.body).toMatchObject({ type: "error", error: { type: "permission_error" } });
      expect(reply.headers["access-control-allow-origin"]).toBeUndefined();
      const openai = await postJson(`${gateway.url}/v1/chat/completions`, body, { origin });
      expect(openai.body).toMatchObject({ error: { type: "permission_error" } });
    }
    expect(upstream.requests).toHaveLength(0);
  });

  test("the gateway's own pages pass, by whichever name they were loaded from", async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const reply = await send(
        "POST",
        "/v1/messages",
        { host, origin: `http://${host}`, "content-type": "application/json" },
        JSON.stringify(body),
      );
      expect(reply.status).toBe(200);
    }
    const health = await send("GET", "/health", { origin: `http://localhost:${port}`, host: `localhost:${port}` });
    expect(health.status).toBe(200);
  });

  test("a configured origin passes with the CORS headers, and its preflight is answered", async () => {
    const origin = "https://app.example.com";
    const preflight = await send("OPTIONS", "/v1/messages", {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type, x-api-key",
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers).toMatchObject({
      "access-control-allow-origin": origin,
      "access-control-allow-headers": "content-type, x-api-key",
      "access-control-allow-methods": expect.stringContaining("POST"),
    });
    const reply = await postJson(`${gateway.url}/v1/messages`, body, { origin });
    expect(reply.status).toBe(200);
    expect(reply.headers["access-control-allow-origin"]).toBe(origin);
    const other = await send("OPTIONS", "/v1/messages", { origin: "https://evil.example" });
    expect(other.status).toBe(403);
  });

  test("clients that send no Origin (SDKs, Claude Code, curl) are not affected", async () => {
    expect((await postJson(`${gateway.url}/v1/messages`, body)).status).toBe(200);
    expect((await getJson(`${gateway.url}/v1/models`)).status).toBe(200);
  });
});

describe("Host", () => {
  test("a DNS-rebinding page's Host is refused, even without an Origin", async () => {
    for (const host of ["rebind.evil.example", `rebind.evil.example:${port}`, "localhost.evil.example"]) {
      const reply = await send(
        "POST",
        "/v1/messages",
        { host, "content-type": "application/json" },
        JSON.stringify(body),
      );
      expect(reply.status).toBe(403);
      expect(reply.body).toMatchObject({ type: "error", error: { type: "permission_error" } });
      expect((await send("GET", "/v1/models", { host })).status).toBe(403);
    }
    expect(upstream.requests).toHaveLength(0);
  });

  test("IP literals, localhost and configured names pass", async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `[::1]:${port}`,
      `localhost:${port}`,
      "parley.internal",
      "PARLEY.internal:8787",
    ]) {
      expect((await send("GET", "/v1/models", { host })).status).toBe(200);
    }
  });
});
