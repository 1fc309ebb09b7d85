import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestGateway } from "../../test/support/gateway-harness.js";
import {
  anthropicFrames,
  openaiFrames,
  type RecordedRequest,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * Exactly what an upstream receives, headers and URL, on every route that calls one and for each upstream type,
 * when the client sends everything it could hope to pass along: its key (in headers and in the query string),
 * cookies, hop-by-hop headers, proxy headers, its own Anthropic version. Only what Parley means to send arrives:
 * the provider's key, and for an Anthropic upstream the client's `anthropic-beta` and `?beta=true`.
 */
const CLIENT_KEY = "sk-client-secret-0001";
let openai: ScriptedUpstream;
let anthropic: ScriptedUpstream;
let responses: ScriptedUpstream;
let gateway: RunningGateway;

const chatAnswer = {
  id: "c",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};
const chatChunk = {
  id: "c",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta: { content: "ok" }, finish_reason: "stop" }],
};
const message = {
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5",
  content: [{ type: "text", text: "ok" }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 3, output_tokens: 1 },
};
const messageEvents = [
  { type: "message_start", message: { ...message, content: [], stop_reason: null } },
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ok" } },
  { type: "content_block_stop", index: 0 },
  { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 1 } },
  { type: "message_stop" },
];

const response = {
  id: "resp_1",
  object: "response",
  created_at: 1,
  status: "completed",
  model: "gpt-r",
  output: [
    {
      id: "msg_1",
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "ok", annotations: [] }],
    },
  ],
  usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 },
};
const responseEvents = [
  { type: "response.created", sequence_number: 0, response: { ...response, status: "in_progress", output: [] } },
  { type: "response.completed", sequence_number: 1, response },
];

beforeAll(async () => {
  responses = await startScriptedUpstream("openai-responses");
  responses.fallback = (request) =>
    (request.body as { stream?: boolean }).stream
      ? { kind: "sse", frames: anthropicFrames(responseEvents) }
      : { kind: "json", body: response };
  openai = await startScriptedUpstream("openai");
  openai.fallback = (request) =>
    (request.body as { stream?: boolean }).stream
      ? { kind: "sse", frames: openaiFrames([chatChunk]) }
      : { kind: "json", body: chatAnswer };
  anthropic = await startScriptedUpstream("anthropic");
  anthropic.fallback = (request) =>
    request.path.includes("count_tokens")
      ? { kind: "json", body: { input_tokens: 7 } }
      : (request.body as { stream?: boolean }).stream
        ? { kind: "sse", frames: anthropicFrames(messageEvents) }
        : { kind: "json", body: message };
  gateway = await startTestGateway({
    providers: {
      compatible: { type: "openai", upstream: openai, apiKey: "sk-provider-openai" },
      claude: { type: "anthropic", upstream: anthropic, apiKey: "sk-provider-anthropic" },
      responses: { type: "openai-responses", upstream: responses, apiKey: "sk-provider-responses" },
    },
    routes: [
      { match: "claude-*", provider: "claude" },
      { match: "gpt-r*", provider: "responses" },
      { match: "*", provider: "compatible" },
    ],
    apiKeys: [CLIENT_KEY],
  });
});

afterAll(async () => {
  await gateway.close();
  await openai.close();
  await anthropic.close();
  await responses.close();
});

/** Everything a client could send, hoping some of it goes on. */
const CLIENT_HEADERS = {
  "content-type": "application/json",
  "x-api-key": CLIENT_KEY,
  authorization: `Bearer ${CLIENT_KEY}`,
  cookie: `session=${CLIENT_KEY}`,
  "proxy-authorization": `Basic ${CLIENT_KEY}`,
  "anthropic-version": "2099-01-01",
  "anthropic-beta": "interleaved-thinking-2025-05-14",
  "x-forwarded-for": "203.0.113.7",
  forwarded: "for=203.0.113.7",
  "x-real-ip": "203.0.113.7",
  "user-agent": "client/1.0",
  "x-stainless-os": "Linux",
  te: "trailers",
  "keep-alive": "timeout=5",
  "x-custom-hop": "1",
  connection: "keep-alive, x-custom-hop",
};
const QUERY = `?beta=true&api_key=${CLIENT_KEY}&key=${CLIENT_KEY}`;

/** What every upstream request carries whatever the provider: the HTTP client's own framing. */
const FRAMING = ["connection", "content-length", "host"];

/** node:http, which sends hop-by-hop headers as given (undici refuses to). */
function postJson(url: string, body: unknown, headers: Record<string, string>): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: "POST", headers }, (response) => {
      response.resume();
      response.on("end", () => resolve({ status: response.statusCode ?? 0 }));
    });
    request.on("error", reject);
    request.end(JSON.stringify(body));
  });
}

function received(upstream: ScriptedUpstream): RecordedRequest {
  const request = upstream.requests.at(-1);
  if (request === undefined) throw new Error("the upstream received nothing");
  return request;
}

function expectNoClientSecret(request: RecordedRequest): void {
  expect(JSON.stringify(request.headers)).not.toContain(CLIENT_KEY);
  expect(request.path).not.toContain(CLIENT_KEY);
  expect(request.rawBody).not.toContain(CLIENT_KEY);
}

describe("an OpenAI-compatible upstream receives its key and the request, nothing of the client's", () => {
  const cases = [
    ["/v1/messages", { model: "gpt-x", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }],
    ["/v1/chat/completions", { model: "gpt-x", messages: [{ role: "user", content: "hi" }] }],
    ["/v1/responses", { model: "gpt-x", input: "hi" }],
  ] as const;
  for (const [route, body] of cases) {
    for (const stream of [false, true]) {
      test(`${route}, ${stream ? "streamed" : "whole"}`, async () => {
        const reply = await postJson(`${gateway.url}${route}${QUERY}`, { ...body, stream }, CLIENT_HEADERS);
        expect(reply.status).toBe(200);
        const request = received(openai);
        expect(request.path).toBe("/v1/chat/completions");
        expect(Object.keys(request.headers).sort()).toEqual(
          [...FRAMING, "accept", "authorization", "content-type"].sort(),
        );
        expect(request.headers).toMatchObject({
          authorization: "Bearer sk-provider-openai",
          "content-type": "application/json",
          accept: stream ? "text/event-stream" : "application/json",
        });
        expectNoClientSecret(request);
      });
    }
  }

  test("count_tokens for a model routed to it reaches no upstream", async () => {
    const before = openai.requests.length;
    const reply = await postJson(
      `${gateway.url}/v1/messages/count_tokens${QUERY}`,
      { model: "gpt-x", messages: [{ role: "user", content: "hi" }] },
      CLIENT_HEADERS,
    );
    expect(reply.status).toBe(200);
    expect(openai.requests.length).toBe(before);
  });
});

describe("an Anthropic upstream receives its key, the client's betas and ?beta=true, nothing else of the client's", () => {
  const cases = [
    ["/v1/messages", "/v1/messages", { max_tokens: 16, messages: [{ role: "user", content: "hi" }] }, true],
    ["/v1/chat/completions", "/v1/messages", { messages: [{ role: "user", content: "hi" }] }, false],
    ["/v1/responses", "/v1/messages", { input: "hi" }, false],
    ["/v1/messages/count_tokens", "/v1/messages/count_tokens", { messages: [{ role: "user", content: "hi" }] }, true],
  ] as const;
  for (const [route, upstreamPath, body, anthropicRoute] of cases) {
    for (const stream of route.endsWith("count_tokens") ? [false] : [false, true]) {
      test(`${route}, ${stream ? "streamed" : "whole"}`, async () => {
        const sent = { model: "claude-sonnet-4-5", ...body, ...(route.endsWith("count_tokens") ? {} : { stream }) };
        const reply = await postJson(`${gateway.url}${route}${QUERY}`, sent, CLIENT_HEADERS);
        expect(reply.status).toBe(200);
        const request = received(anthropic);
        // The query string is Anthropic's own (`beta`) only, and only from an Anthropic client's route.
        expect(request.path).toBe(anthropicRoute ? `${upstreamPath}?beta=true` : upstreamPath);
        expect(Object.keys(request.headers).sort()).toEqual(
          [...FRAMING, "accept", "anthropic-beta", "anthropic-version", "content-type", "x-api-key"].sort(),
        );
        expect(request.headers).toMatchObject({
          "x-api-key": "sk-provider-anthropic",
          "anthropic-version": "2023-06-01",
          "anthropic-beta": "interleaved-thinking-2025-05-14",
          "content-type": "application/json",
        });
        expectNoClientSecret(request);
      });
    }
  }
});

describe("a Responses upstream receives its key and the request, nothing of the client's", () => {
  const cases = [
    ["/v1/messages", { max_tokens: 16, messages: [{ role: "user", content: "hi" }] }],
    ["/v1/chat/completions", { messages: [{ role: "user", content: "hi" }] }],
    ["/v1/responses", { input: "hi" }],
  ] as const;
  for (const [route, body] of cases) {
    for (const stream of [false, true]) {
      test(`${route}, ${stream ? "streamed" : "whole"}`, async () => {
        const sent = { model: "gpt-r", ...body, stream };
        const reply = await postJson(`${gateway.url}${route}${QUERY}`, sent, CLIENT_HEADERS);
        expect(reply.status).toBe(200);
        const request = received(responses);
        // No query string, even from a client of the same API: the Responses API reads none of a client's.
        expect(request.path).toBe("/v1/responses");
        expect(Object.keys(request.headers).sort()).toEqual(
          [...FRAMING, "accept", "authorization", "content-type"].sort(),
        );
        expect(request.headers).toMatchObject({
          authorization: "Bearer sk-provider-responses",
          "content-type": "application/json",
          accept: stream ? "text/event-stream" : "application/json",
        });
        expectNoClientSecret(request);
      });
    }
  }
});
