import { describe, expect, test } from "vitest";
import { contextOverflowIn } from "./context-overflow.js";
import { upstreamErrorForStatus } from "./errors.js";

/** Each server's words for a prompt over the window, read with their numbers (see `context-overflow.ts`). */

const cases: Array<[server: string, body: unknown, expected: ReturnType<typeof contextOverflowIn>]> = [
  [
    "llama.cpp",
    {
      error: {
        code: 400,
        message: "request (5120 tokens) exceeds the available context size (4096 tokens), try increasing it",
        type: "exceed_context_size_error",
        n_prompt_tokens: 5120,
        n_ctx: 4096,
      },
    },
    { promptTokens: 5120, contextWindow: 4096 },
  ],
  [
    "vLLM",
    {
      object: "error",
      message:
        "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
      type: "BadRequestError",
      param: null,
      code: 400,
    },
    { promptTokens: 40000, contextWindow: 32768 },
  ],
  [
    "vLLM 0.10",
    {
      error: {
        message:
          "This model's maximum context length is 8192 tokens. However, your request has 9001 input tokens. Please reduce the length of the input messages.",
        type: "BadRequestError",
        param: null,
        code: 400,
      },
    },
    { promptTokens: 9001, contextWindow: 8192 },
  ],
  [
    "OpenAI",
    {
      error: {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.",
        type: "invalid_request_error",
        param: "messages",
        code: "context_length_exceeded",
      },
    },
    { promptTokens: 130512, contextWindow: 128000 },
  ],
  [
    "OpenAI Responses",
    {
      error: {
        message: "Your input exceeds the context window of this model. Please adjust your input and try again.",
        type: "invalid_request_error",
        param: "input",
        code: "context_length_exceeded",
      },
    },
    {},
  ],
  [
    "Anthropic",
    {
      type: "error",
      error: { type: "invalid_request_error", message: "prompt is too long: 208310 tokens > 200000 maximum" },
    },
    { promptTokens: 208310, contextWindow: 200000 },
  ],
  [
    "SGLang",
    {
      object: "error",
      message: "The input (70000 tokens) is longer than the model's context length (65536 tokens).",
      type: "BadRequestError",
      code: 400,
    },
    { promptTokens: 70000, contextWindow: 65536 },
  ],
  [
    "Text Generation Inference",
    {
      error:
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 500 `max_new_tokens`",
      error_type: "validation",
    },
    { promptTokens: 4000, contextWindow: 4096 },
  ],
  ["a code alone", { error: { message: "too long", code: "context_length_exceeded" } }, {}],
];

describe("contextOverflowIn", () => {
  for (const [server, body, expected] of cases) {
    test(server, () => {
      expect(contextOverflowIn(JSON.stringify(body))).toEqual(expected);
    });
  }

  test("other errors are none", () => {
    expect(contextOverflowIn('{"error":{"message":"Unrecognized request argument supplied: top_k"}}')).toBeUndefined();
    expect(contextOverflowIn("Bad Request")).toBeUndefined();
    expect(contextOverflowIn('{"error":{"message":"max_tokens must be at least 1"}}')).toBeUndefined();
  });
});

describe("upstreamErrorForStatus", () => {
  test("an overflow is a 400 that is never retried and carries its numbers", () => {
    const body = JSON.stringify(cases[0]![1]);
    for (const status of [400, 500]) {
      const error = upstreamErrorForStatus(status, body);
      expect(error).toMatchObject({
        type: "invalid_request_error",
        status: 400,
        retryable: false,
        upstreamStatus: status,
        contextOverflow: { promptTokens: 5120, contextWindow: 4096 },
      });
    }
  });

  test("a rate limit that says nothing of the window stays a rate limit", () => {
    expect(upstreamErrorForStatus(429, '{"error":{"message":"slow down"}}').contextOverflow).toBeUndefined();
  });
});
