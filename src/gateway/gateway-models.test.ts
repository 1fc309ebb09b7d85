import { pino } from "pino";
import { afterEach, describe, expect, test } from "vitest";
import { lossyEntries } from "../../test/e2e/e2e-support.js";
import {
  getJson,
  type Json,
  postJson,
  startTestGateway,
  type TestProvider,
} from "../../test/support/gateway-harness.js";
import { DEEPSEEK, KIMI } from "../../test/support/hosted-server-shapes.js";
import { refusingPort } from "../../test/support/refusing-port.js";
import { type ServerShape, VLLM } from "../../test/support/server-shapes.js";
import { type ShapedUpstream, startShapedUpstream } from "../../test/support/shaped-upstream.js";
import { buildConfig } from "./config/load.js";
import { type RunningGateway, startGateway } from "./server.js";

/**
 * What the providers serve, asked of them: names mapped to served models, limits applied to max_tokens, the model
 * list with limits, an unreachable upstream answered at once, threads the gateway does not keep.
 */

const running: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const item of running.splice(0).reverse()) await item.close();
});

async function shaped(shape: ServerShape): Promise<ShapedUpstream> {
  const upstream = await startShapedUpstream(shape);
  running.push(upstream);
  return upstream;
}

async function gatewayFor(
  providers: Record<string, TestProvider>,
  routes?: Array<{ match: string; provider: string }>,
) {
  const gateway = await startTestGateway({ providers, ...(routes === undefined ? {} : { routes }) });
  running.push(gateway);
  await gateway.discovery;
  return gateway;
}

const ask = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 128_000,
  messages: [{ role: "user", content: "Hello" }],
  ...extra,
});

describe("one model served: every name goes to it", () => {
  test("Claude Code's model name reaches vLLM as its model, max_tokens lowered to what the window leaves", async () => {
    const upstream = await shaped(VLLM);
    const gateway = await gatewayFor({ local: { type: "openai", upstream, preset: "vllm" } });
    const reply = await postJson(`${gateway.url}/v1/messages`, ask("claude-opus-5-5"));
    expect(reply.status, reply.text).toBe(200);
    expect((reply.body as Json).model).toBe("claude-opus-5-5");
    const sent = upstream.requests[0]!.body as Json;
    expect(sent.model).toBe("Qwen/Qwen3-Coder-30B-A3B-Instruct");
    expect(sent.max_tokens).toBeLessThan(65_536);
    expect(upstream.refused).toEqual([]);
    const lowered = lossyEntries(reply.headers["x-parley-lossy"] as string).find(
      (entry) => entry.code === "max_tokens-lowered",
    );
    expect(lowered).toMatchObject({ path: "max_tokens" });
    expect(lowered?.message).toContain(`max_tokens 128000 lowered to ${sent.max_tokens}`);
    expect(lowered?.message).toContain("context window of 65536 tokens (from the upstream's GET /models)");
  });

  test("a long prompt: max_tokens leaves room for it, and the server accepts the request", async () => {
    const upstream = await shaped(VLLM);
    const gateway = await gatewayFor({ local: { type: "openai", upstream, preset: "vllm" } });
    const long = "The quick brown fox jumps over the lazy dog. ".repeat(2_200);
    const reply = await postJson(`${gateway.url}/v1/messages`, {
      ...ask("claude-opus-5-5", { max_tokens: 32_000 }),
      messages: [{ role: "user", content: long }],
    });
    expect(reply.status, reply.text).toBe(200);
    const sent = upstream.requests[0]!.body as Json;
    expect(sent.max_tokens).toBeGreaterThan(1_000);
    expect(sent.max_tokens).toBeLessThan(65_536 - 22_000);
  });

  test("the client's model and the upstream's are both in the log line and the trace", async () => {
    const upstream = await shaped(VLLM);
    const lines: Json[] = [];
    const config = buildConfig(
      {
        port: 0,
        store: "memory:",
        providers: { local: { type: "openai", baseUrl: upstream.baseUrl, preset: "vllm" } },
      },
      {},
      {},
    );
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const gateway = await startGateway(config, { logger });
    running.push(gateway);
    await gateway.discovery;
    const reply = await postJson(`${gateway.url}/v1/messages`, ask("claude-opus-5-5"));
    expect(reply.status).toBe(200);
    let trace: Json;
    for (let attempt = 0; attempt < 50 && trace === undefined; attempt++) {
      const [summary] = (await gateway.state.store!.traces.list({ limit: 1 })).traces;
      if (summary !== undefined) trace = await gateway.state.store!.traces.get(summary.id);
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(trace.clientModel).toBe("claude-opus-5-5");
    expect(trace.upstreamModel).toBe("Qwen/Qwen3-Coder-30B-A3B-Instruct");
    expect(JSON.parse(trace.clientRequest).model).toBe("claude-opus-5-5");
    expect(JSON.parse(trace.upstreamRequest).model).toBe("Qwen/Qwen3-Coder-30B-A3B-Instruct");
    await gateway.close();
    expect(lines.find((line) => line.msg === "request")).toMatchObject({
      clientModel: "claude-opus-5-5",
      upstreamModel: "Qwen/Qwen3-Coder-30B-A3B-Instruct",
    });
  });
});

describe("several models served", () => {
  test("without a default, a name it does not serve is a 404 naming what it serves and the setting", async () => {
    const upstream = await shaped(DEEPSEEK);
    const gateway = await gatewayFor({ deepseek: { type: "openai", upstream, preset: "deepseek" } });
    const reply = await postJson(`${gateway.url}/v1/messages`, ask("claude-opus-5-5"));
    expect(reply.status).toBe(404);
    expect((reply.body as Json).error.message).toBe(
      `model 'claude-opus-5-5' is not served by ${upstream.baseUrl}, which serves deepseek-chat, deepseek-reasoner, ` +
        "deepseek-v4-flash, deepseek-v4-pro: ask for one of those, or choose the model other names go to with " +
        "providers.deepseek.defaultModel",
    );
    expect(upstream.requests).toEqual([]);
  });

  test("the default model takes other names; a served id goes as itself; each gets its own output limit", async () => {
    const upstream = await shaped(DEEPSEEK);
    const gateway = await gatewayFor({
      deepseek: { type: "openai", upstream, preset: "deepseek", defaultModel: "deepseek-chat" },
    });
    const viaDefault = await postJson(`${gateway.url}/v1/messages`, ask("claude-opus-5-5"));
    expect(viaDefault.status, viaDefault.text).toBe(200);
    expect(upstream.requests[0]!.body).toMatchObject({ model: "deepseek-chat", max_tokens: 8_192 });
    expect(lossyEntries(viaDefault.headers["x-parley-lossy"] as string)).toContainEqual({
      code: "max_tokens-lowered",
      message: "max_tokens 128000 lowered to 8192: deepseek-chat's output limit (from deepseek's published limits)",
      path: "max_tokens",
    });
    const own = await postJson(`${gateway.url}/v1/messages`, ask("deepseek-reasoner"));
    expect(own.status, own.text).toBe(200);
    expect(upstream.requests[1]!.body).toMatchObject({ model: "deepseek-reasoner", max_tokens: 65_536 });
  });

  test("an id another provider lists goes to that provider, with no route", async () => {
    const vllm = await shaped(VLLM);
    const kimi = await shaped(KIMI);
    const gateway = await gatewayFor({
      local: { type: "openai", upstream: vllm, preset: "vllm" },
      moonshot: { type: "openai", upstream: kimi, preset: "kimi" },
    });
    const reply = await postJson(`${gateway.url}/v1/messages`, ask("kimi-k2.5", { max_tokens: 1_000 }));
    expect(reply.status, reply.text).toBe(200);
    expect(kimi.requests[0]!.body).toMatchObject({ model: "kimi-k2.5" });
    expect(vllm.requests).toEqual([]);
  });
});

describe("GET /v1/models", () => {
  test("Anthropic's shape with the limits Claude Code reads; OpenAI's for an OpenAI client", async () => {
    const upstream = await shaped(DEEPSEEK);
    const gateway = await gatewayFor({
      deepseek: { type: "openai", upstream, preset: "deepseek", defaultModel: "deepseek-chat" },
    });
    const anthropic = await getJson(`${gateway.url}/v1/models?limit=1000`, {
      "x-api-key": "k",
      "anthropic-version": "2023-06-01",
    });
    expect(anthropic.status).toBe(200);
    expect(anthropic.body).toMatchObject({ has_more: false, first_id: "deepseek-chat", last_id: "deepseek-v4-pro" });
    expect((anthropic.body as Json).data[0]).toEqual({
      type: "model",
      id: "deepseek-chat",
      display_name: "deepseek-chat",
      created_at: expect.any(String),
      max_input_tokens: 131_072,
      max_tokens: 8_192,
    });
    const openai = await getJson(`${gateway.url}/v1/models`, { authorization: "Bearer k" });
    expect((openai.body as Json).object).toBe("list");
    expect((openai.body as Json).data[1]).toEqual({
      id: "deepseek-reasoner",
      object: "model",
      created: expect.any(Number),
      owned_by: "deepseek",
      context_length: 131_072,
      max_completion_tokens: 65_536,
    });
    const forced = await getJson(`${gateway.url}/v1/models?format=openai`);
    expect((forced.body as Json).object).toBe("list");
    const one = await getJson(`${gateway.url}/v1/models/claude-opus-5-5`);
    expect(one.body).toMatchObject({
      id: "claude-opus-5-5",
      display_name: "claude-opus-5-5 (deepseek-chat)",
      max_input_tokens: 131_072,
      max_tokens: 8_192,
    });
  });

  test("with only an upstream that serves one model, that model is listed with its window", async () => {
    const upstream = await shaped(VLLM);
    const gateway = await gatewayFor({ local: { type: "openai", upstream, preset: "vllm" } });
    const list = await getJson(`${gateway.url}/v1/models`);
    expect((list.body as Json).data).toEqual([
      expect.objectContaining({
        id: "Qwen/Qwen3-Coder-30B-A3B-Instruct",
        max_input_tokens: 65_536,
        max_tokens: 65_536,
      }),
    ]);
  });
});

describe("an upstream that refuses connections", () => {
  test("is answered within 5 s, naming the URL and the flag, with x-should-retry: false", async () => {
    const held = await refusingPort();
    running.push({ close: () => held.release() });
    const port = held.port;
    const config = buildConfig(
      { port: 0, store: "memory:", retries: { baseDelayMs: 250 } },
      { upstream: `http://127.0.0.1:${port}/v1` },
      {},
    );
    const gateway: RunningGateway = await startGateway(config, { logger: pino({ level: "silent" }) });
    running.push(gateway);
    await gateway.discovery;
    expect(gateway.describeProviders()).toEqual([
      expect.stringContaining(`unreachable: connection refused (ECONNREFUSED 127.0.0.1:${port})`),
    ]);
    const started = performance.now();
    const reply = await postJson(`${gateway.url}/v1/messages`, ask("claude-opus-5-5", { stream: true }));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(reply.status).toBe(502);
    expect(reply.headers["x-should-retry"]).toBe("false");
    expect((reply.body as Json).error.message).toContain(
      `nothing answers at http://127.0.0.1:${port}/v1 (provider default); start the server there, or point --upstream (PARLEY_UPSTREAM_URL) at it`,
    );
  });
});

describe("message threads", () => {
  test("a continue the gateway cannot serve is Anthropic's thread_not_found; nothing reaches the upstream", async () => {
    const upstream = await shaped(VLLM);
    const gateway = await gatewayFor({ local: { type: "openai", upstream, preset: "vllm" } });
    const reply = await postJson(
      `${gateway.url}/v1/messages?beta=true`,
      ask("claude-opus-5-5", { thread: { type: "continue", previous_message_id: "msg_1" } }),
      { "anthropic-beta": "message-threads-2026-08-12" },
    );
    expect(reply.status).toBe(404);
    expect((reply.body as Json).error).toMatchObject({
      type: "not_found_error",
      details: { error_code: "thread_not_found" },
    });
    expect(upstream.requests).toEqual([]);
  });
});
