import { describe, expect, test } from "vitest";
import type { ConversationRequest } from "../core/index.js";
import { type ProviderSettings, type TokenCountQuery, tokenCount, type UpstreamConnection } from "./adapter.js";
import { formatAdapter } from "./registry.js";

/**
 * Each connection's own token count (`UpstreamConnection.tokenCounter`): where it asks, what it sends, what it reads
 * of the answer. The gateway's side (deadline, fallback, log) is `src/gateway/gateway-count-tokens.test.ts`.
 */

type Type = "anthropic" | "openai" | "gemini";

function connect(type: Type, settings: Partial<ProviderSettings> = {}): UpstreamConnection {
  return formatAdapter(type).upstream.connect({
    name: "p",
    // a port no preset is guessed from
    baseUrl: type === "openai" ? "http://gpu:39123/v1" : "http://gpu:9000",
    apiKey: "provider-key",
    compat: {},
    headers: {},
    ...settings,
  });
}

/** A request as a client of `api` sends it, in the canonical model, its model the provider's. */
function read(api: Type, body: Record<string, unknown>): ConversationRequest {
  const client = formatAdapter(api).client;
  const request = client.readCountTokensRequest?.(body) ?? client.readRequest(body).value;
  return { ...request, model: "upstream-model" };
}

const anthropicBody = {
  model: "claude-opus-4-5",
  system: "Be brief.",
  tools: [{ name: "Bash", description: "Run a command", input_schema: { type: "object" } }],
  messages: [{ role: "user", content: "hi" }],
};
const openaiBody = {
  model: "gpt-5",
  max_tokens: 512,
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: "hi" },
  ],
  tools: [{ type: "function", function: { name: "Bash", parameters: { type: "object" } } }],
};

interface Asked {
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** Runs the connection's counter for a client of `api`, answering each POST with the next of `answers`. */
async function count(
  connection: UpstreamConnection,
  api: Type,
  clientBody: Record<string, unknown>,
  answers: unknown[],
  extra: Partial<TokenCountQuery> = {},
): Promise<{ count: number | undefined; asked: Asked[] }> {
  const counter = connection.tokenCounter?.(api);
  if (counter === undefined) throw new Error("the connection does not count");
  const asked: Asked[] = [];
  const result = await counter.count({
    request: read(api, clientBody),
    clientApi: api,
    clientBody,
    clientHeaders: { "anthropic-beta": "token-counting-2024-11-01", "x-api-key": "client-key" },
    post: async (url, headers, body) => {
      asked.push({ url, headers, body: body as Record<string, unknown> });
      return answers.shift();
    },
    ...extra,
  });
  return { count: result, asked };
}

describe("Anthropic", () => {
  test("an Anthropic client's body as it came, the model renamed, its betas and query kept, the provider's key", async () => {
    const { count: counted, asked } = await count(
      connect("anthropic"),
      "anthropic",
      anthropicBody,
      [{ input_tokens: 9 }],
      {
        clientQuery: new URLSearchParams("beta=true"),
      },
    );
    expect(counted).toBe(9);
    expect(asked[0]!.url).toBe("http://gpu:9000/v1/messages/count_tokens?beta=true");
    expect(asked[0]!.body).toEqual({ ...anthropicBody, model: "upstream-model" });
    expect(asked[0]!.headers).toMatchObject({
      "x-api-key": "provider-key",
      "anthropic-beta": "token-counting-2024-11-01",
    });
  });

  test("another client's request written as Messages, with only the fields count_tokens takes", async () => {
    const { asked } = await count(connect("anthropic"), "openai", openaiBody, [{ input_tokens: 9 }]);
    expect(asked[0]!.url).toBe("http://gpu:9000/v1/messages/count_tokens");
    expect(Object.keys(asked[0]!.body).sort()).toEqual(["messages", "model", "system", "tools"]);
  });
});

describe("OpenAI-compatible servers", () => {
  test("vLLM: /tokenize at the root, the chat form, `count` read", async () => {
    const { count: counted, asked } = await count(
      connect("openai", { preset: "vllm", baseUrl: "http://gpu:8000/v1" }),
      "anthropic",
      anthropicBody,
      [{ count: 31, max_model_len: 65536, tokens: [] }],
    );
    expect(counted).toBe(31);
    expect(asked[0]!.url).toBe("http://gpu:8000/tokenize");
    expect(asked[0]!.headers.authorization).toBe("Bearer provider-key");
    expect(Object.keys(asked[0]!.body).sort()).toEqual(["add_generation_prompt", "messages", "model", "tools"]);
    expect(asked[0]!.body).toMatchObject({ model: "upstream-model", add_generation_prompt: true });
  });

  test("vLLM: a prefill the client asked to continue gets no generation prompt (vLLM refuses both)", async () => {
    const { asked } = await count(
      connect("openai", { preset: "vllm", baseUrl: "http://gpu:8000/v1" }),
      "openai",
      {
        ...openaiBody,
        messages: [...openaiBody.messages, { role: "assistant", content: "Sure" }],
        continue_final_message: true,
      },
      [{ count: 12 }],
    );
    expect(asked[0]!.body).toMatchObject({ add_generation_prompt: false, continue_final_message: true });
    expect(asked[0]!.body.max_tokens).toBeUndefined();
  });

  test("llama.cpp: an Anthropic client's body to its count_tokens; another's rendered at /apply-template, counted at /tokenize", async () => {
    const llamacpp = connect("openai", { preset: "llamacpp", baseUrl: "http://gpu:8080/v1" });
    const anthropicClient = await count(llamacpp, "anthropic", anthropicBody, [{ input_tokens: 15 }]);
    expect(anthropicClient.count).toBe(15);
    expect(anthropicClient.asked.map((asked) => asked.url)).toEqual(["http://gpu:8080/v1/messages/count_tokens"]);
    const openaiClient = await count(llamacpp, "openai", openaiBody, [
      { prompt: "<|im_start|>user\nhi" },
      { tokens: [1, 2, 3] },
    ]);
    expect(openaiClient.count).toBe(3);
    expect(openaiClient.asked.map((asked) => asked.url)).toEqual([
      "http://gpu:8080/apply-template",
      "http://gpu:8080/tokenize",
    ]);
    expect(openaiClient.asked[1]!.body).toEqual({
      content: "<|im_start|>user\nhi",
      add_special: true,
      parse_special: true,
    });
    // no prompt in the template's answer: nothing to count
    expect((await count(llamacpp, "openai", openaiBody, [{ error: "no" }])).count).toBeUndefined();
  });

  test("a server without a count of its own has none; `compat.tokenCount` gives one, and a value it does not know is refused", () => {
    expect(connect("openai").tokenCounter?.("anthropic")).toBeUndefined();
    expect(connect("openai", { preset: "sglang" }).tokenCounter?.("anthropic")).toBeUndefined();
    expect(connect("openai", { compat: { tokenCount: "vllm" } }).tokenCounter?.("anthropic")?.endpoint).toBe(
      "POST /tokenize",
    );
    expect(() => connect("openai", { compat: { tokenCount: "sglang" } })).toThrow(/compat.tokenCount|one of/);
  });

  test("a server recognised from its model list counts as that server does", () => {
    const connection = connect("openai", { baseUrl: "http://gpu:39123/v1" });
    expect(connection.tokenCounter?.("gemini")).toBeUndefined();
    connection.recogniseServer?.(["vllm"]);
    expect(connection.tokenCounter?.("gemini")?.endpoint).toBe("POST /tokenize");
  });
});

describe("Gemini", () => {
  test("the Gemini API: the whole request under generateContentRequest, naming its model", async () => {
    const { count: counted, asked } = await count(connect("gemini"), "anthropic", anthropicBody, [
      { totalTokens: 44, promptTokensDetails: [{ modality: "TEXT", tokenCount: 44 }] },
    ]);
    expect(counted).toBe(44);
    expect(asked[0]!.url).toBe("http://gpu:9000/v1beta/models/upstream-model:countTokens");
    expect(asked[0]!.headers["x-goog-api-key"]).toBe("provider-key");
    const generate = asked[0]!.body.generateContentRequest as Record<string, unknown>;
    expect(Object.keys(asked[0]!.body)).toEqual(["generateContentRequest"]);
    expect(generate.model).toBe("models/upstream-model");
    expect(generate).toHaveProperty("systemInstruction");
    expect(generate).toHaveProperty("tools");
  });

  test("Vertex AI: its own form, the fields beside the contents, its Bearer token", async () => {
    const vertex = connect("gemini", {
      preset: "vertex",
      baseUrl: "https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4/publishers/google",
    });
    const { asked } = await count(vertex, "openai", openaiBody, [{ totalTokens: 5 }]);
    expect(asked[0]!.url).toBe(
      "https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4/publishers/google/models/upstream-model:countTokens",
    );
    expect(asked[0]!.headers.authorization).toBe("Bearer provider-key");
    expect(
      Object.keys(asked[0]!.body).every((field) =>
        ["contents", "systemInstruction", "tools", "generationConfig"].includes(field),
      ),
    ).toBe(true);
    expect(asked[0]!.body).toHaveProperty("contents");
  });
});

test("a count is a whole number of tokens, nothing else", () => {
  expect(tokenCount(0)).toBe(0);
  expect(tokenCount(4242)).toBe(4242);
  for (const value of [-1, 1.5, "12", null, undefined, Number.NaN, Number.POSITIVE_INFINITY, [12]])
    expect(tokenCount(value)).toBeUndefined();
});
