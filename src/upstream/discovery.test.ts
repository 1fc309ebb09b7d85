import { afterEach, describe, expect, test } from "vitest";
import { DEEPSEEK, KIMI, MINIMAX, OPENROUTER } from "../../test/support/hosted-server-shapes.js";
import { refusingPort } from "../../test/support/refusing-port.js";
import { LLAMACPP, LMSTUDIO, OLLAMA, type ServerShape, SGLANG, VLLM } from "../../test/support/server-shapes.js";
import { type ShapedUpstream, startShapedUpstream } from "../../test/support/shaped-upstream.js";
import { discoverModels, parseModelList } from "./discovery.js";

const started: ShapedUpstream[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((upstream) => upstream.close()));
});

async function discover(shape: ServerShape, server = shape.preset) {
  const upstream = await startShapedUpstream(shape);
  started.push(upstream);
  return discoverModels({ baseUrl: upstream.baseUrl, headers: {}, server, timeoutMs: 2_000 });
}

describe("parseModelList", () => {
  test("reads the served window each server states, never llama.cpp's training length", () => {
    expect(parseModelList(VLLM.modelList())).toEqual([
      { id: "Qwen/Qwen3-Coder-30B-A3B-Instruct", contextWindow: 65_536, limitSource: "GET /models" },
    ]);
    expect(parseModelList(SGLANG.modelList())).toEqual([
      { id: "zai-org/GLM-4.5-Air", contextWindow: 65_536, limitSource: "GET /models" },
    ]);
    expect(parseModelList(LLAMACPP.modelList())).toEqual([
      { id: "ggml-org/gpt-oss-20b-GGUF", contextWindow: 65_536, limitSource: "GET /models" },
    ]);
    expect(parseModelList(KIMI.modelList())?.[2]).toEqual({
      id: "moonshot-v1-8k",
      contextWindow: 8_192,
      limitSource: "GET /models",
    });
  });

  test("OpenRouter: the window and the top provider's output limit", () => {
    expect(parseModelList(OPENROUTER.modelList())?.[0]).toEqual({
      id: "qwen/qwen3-coder",
      contextWindow: 262_144,
      maxOutputTokens: 65_536,
      limitSource: "GET /models",
    });
  });

  test("Anthropic's list: max_input_tokens and max_tokens", () => {
    const list = {
      data: [
        {
          type: "model",
          id: "claude-sonnet-4-5",
          display_name: "Claude Sonnet 4.5",
          created_at: "2025-09-29T00:00:00Z",
          max_input_tokens: 200_000,
          max_tokens: 64_000,
        },
      ],
      has_more: false,
    };
    expect(parseModelList(list)).toEqual([
      { id: "claude-sonnet-4-5", contextWindow: 200_000, maxOutputTokens: 64_000, limitSource: "GET /models" },
    ]);
  });

  test("ids alone when the list says nothing more (DeepSeek); no list at all is undefined", () => {
    expect(parseModelList(DEEPSEEK.modelList())).toEqual(DEEPSEEK.models.map(({ id }) => ({ id })));
    expect(parseModelList({ error: "nope" })).toBeUndefined();
    expect(parseModelList("404 page not found")).toBeUndefined();
  });
});

describe("discoverModels", () => {
  test("Ollama: a loaded model's window from /api/ps, another's from /api/show", async () => {
    const outcome = await discover(OLLAMA);
    expect(outcome).toEqual({
      status: "listed",
      models: [
        { id: "qwen3-coder:30b", contextWindow: 65_536, limitSource: "/api/ps" },
        { id: "nomic-embed-text:latest", contextWindow: 2_048, limitSource: "/api/show model_info" },
      ],
    });
  });

  test("LM Studio: the loaded instance's window from its REST API", async () => {
    const outcome = await discover(LMSTUDIO);
    expect(outcome.status === "listed" && outcome.models[0]).toEqual({
      id: "qwen/qwen3-coder-30b",
      contextWindow: 65_536,
      limitSource: "/api/v1/models",
    });
  });

  test("a server without a list (MiniMax) says so", async () => {
    expect(await discover(MINIMAX)).toEqual({
      status: "not-listed",
      cause: "GET /v1/models answered 404 (the server has no model list there)",
    });
  });

  test("nothing listening: unreachable, with the cause", async () => {
    const held = await refusingPort();
    try {
      const outcome = await discoverModels({
        baseUrl: `http://127.0.0.1:${held.port}/v1`,
        headers: {},
        timeoutMs: 2_000,
      });
      expect(outcome).toEqual({
        status: "unreachable",
        cause: `connection refused (ECONNREFUSED 127.0.0.1:${held.port})`,
      });
    } finally {
      await held.release();
    }
  });

  test("sends the provider's key, and Anthropic's headers to an Anthropic list", async () => {
    const upstream = await startShapedUpstream(VLLM);
    started.push(upstream);
    await discoverModels({
      baseUrl: upstream.origin,
      modelsUrl: `${upstream.origin}/v1/models`,
      headers: { "x-api-key": "sk-upstream", "anthropic-version": "2023-06-01" },
      timeoutMs: 2_000,
    });
    expect(upstream.otherRequests[0]).toMatchObject({
      method: "GET",
      path: "/v1/models",
      headers: expect.objectContaining({ "x-api-key": "sk-upstream", "anthropic-version": "2023-06-01" }),
    });
  });
});
