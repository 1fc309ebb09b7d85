import { describe, expect, test } from "vitest";
import type { ConversationRequest, ConversationResponse } from "../../core/conversation.js";
import { decodeOriginSignature } from "../../core/reasoning-origin.js";
import {
  coreToAnthropicMessages,
  coreToAnthropicRequest,
  coreToAnthropicResponse,
  DEFAULT_MAX_TOKENS,
} from "./from-core.js";

/** A request as the OpenAI codec would hand it over: OpenAI-only fields ride in `extra`. */
const fromOpenAI: ConversationRequest = {
  model: "gpt-x",
  system: { role: "system", parts: [{ type: "text", text: "sys" }], textShorthand: true },
  messages: [
    { role: "user", parts: [{ type: "text", text: "hi" }], textShorthand: true, extra: { openai: { name: "alice" } } },
    {
      role: "assistant",
      parts: [
        { type: "thinking", thinking: "hmm", origin: { format: "openai", field: "reasoning_content" } },
        { type: "text", text: "calling" },
        { type: "tool_call", id: "call_1", name: "f", input: { a: 1 }, rawInput: '{"a":1' },
        { type: "opaque", format: "openai", block: { type: "audio" } },
      ],
    },
    { role: "user", parts: [{ type: "tool_result", toolCallId: "call_1", content: "done" }] },
  ],
  tools: [{ name: "f", description: "does f", inputSchema: { type: "object" }, extra: { openai: { strict: true } } }],
  toolChoice: { type: "any", disableParallelToolUse: true },
  temperature: 0.2,
  stream: true,
  userId: "u1",
  reasoningEffort: "medium",
  extra: {
    openai: {
      frequency_penalty: 1,
      response_format: { type: "json_object" },
      n: 1,
      logprobs: true,
      stream_options: { include_usage: true },
      service_tier: "flex",
    },
  },
};

describe("core -> anthropic request", () => {
  const { value, lossy } = coreToAnthropicRequest(fromOpenAI);

  test("maps what Anthropic has and keeps parts in order", () => {
    expect(value).toEqual({
      model: "gpt-x",
      max_tokens: DEFAULT_MAX_TOKENS,
      system: "sys",
      messages: [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "hmm" },
            { type: "text", text: "calling" },
            { type: "tool_use", id: "call_1", name: "f", input: { a: 1 } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "done" }] },
      ],
      tools: [{ name: "f", description: "does f", input_schema: { type: "object" }, strict: true }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      temperature: 0.2,
      stream: true,
      metadata: { user_id: "u1" },
      output_config: { effort: "medium" },
    });
  });

  test("reports every OpenAI-only field and block it dropped, with where", () => {
    expect(lossy).toContainEqual({
      code: "openai-fields-dropped",
      message: "no Anthropic equivalent for name",
      path: "messages[0]",
    });
    expect(lossy).toContainEqual(
      expect.objectContaining({ code: "opaque-block-dropped", path: "messages[1].content[3]" }),
    );
    const topLevel = lossy.find((entry) => entry.code === "openai-fields-dropped" && entry.path === undefined);
    for (const field of ["frequency_penalty", "response_format", "n", "logprobs", "service_tier"])
      expect(topLevel?.message).toContain(field);
    // Asking for usage asks for what an Anthropic stream always carries.
    expect(topLevel?.message).not.toContain("stream_options");
  });

  test("a null OpenAI field carries nothing and is not reported as dropped", () => {
    const { value, lossy: nullLossy } = coreToAnthropicRequest({
      model: "m",
      messages: [
        { role: "user", parts: [{ type: "text", text: "q" }] },
        { role: "assistant", parts: [{ type: "text", text: "a" }], extra: { openai: { reasoning_content: null } } },
      ],
    });
    expect(nullLossy).toEqual([]);
    expect(value.messages[1]).toEqual({ role: "assistant", content: [{ type: "text", text: "a" }] });
  });

  test("stream_options asking for usage is not reported: an Anthropic stream always carries usage", () => {
    const { lossy: usageLossy } = coreToAnthropicRequest({
      model: "m",
      messages: [{ role: "user", parts: [{ type: "text", text: "q" }] }],
      stream: true,
      extra: { openai: { stream_options: { include_usage: true } } },
    });
    expect(usageLossy).toEqual([]);
  });

  test("max_tokens defaults above a thinking budget", () => {
    const request: ConversationRequest = {
      model: "m",
      messages: [],
      thinking: { type: "enabled", budgetTokens: 2048 },
    };
    expect(coreToAnthropicRequest(request).value).toMatchObject({
      max_tokens: DEFAULT_MAX_TOKENS + 2048,
      thinking: { type: "enabled", budget_tokens: 2048 },
    });
  });

  test("a system prompt with non-text parts keeps its text and reports the rest", () => {
    const request: ConversationRequest = {
      model: "m",
      messages: [],
      system: {
        role: "system",
        parts: [
          { type: "text", text: "a" },
          { type: "image", source: { type: "url", url: "https://x" } },
        ],
      },
    };
    const out = coreToAnthropicRequest(request);
    expect(out.value.system).toEqual([{ type: "text", text: "a" }]);
    expect(out.lossy).toEqual([expect.objectContaining({ code: "system-part-dropped", path: "system[1]" })]);
  });
});

describe("core -> anthropic messages", () => {
  test("a tool call whose arguments are not an object is wrapped and reported", () => {
    const out = coreToAnthropicMessages([
      { role: "assistant", parts: [{ type: "tool_call", id: "c", name: "f", input: [1, 2] }] },
    ]);
    expect(out.value[0]?.content).toEqual([{ type: "tool_use", id: "c", name: "f", input: { value: [1, 2] } }]);
    expect(out.lossy).toEqual([
      expect.objectContaining({ code: "tool-input-wrapped", path: "messages[0].content[0].input" }),
    ]);
  });

  test("history thinking without a signature stays unsigned (repair decides what to do with it)", () => {
    const out = coreToAnthropicMessages([
      { role: "assistant", parts: [{ type: "thinking", thinking: "t", origin: { format: "openai" } }] },
    ]);
    expect(out.value[0]?.content).toEqual([{ type: "thinking", thinking: "t" }]);
  });
});

describe("core -> anthropic response", () => {
  const response: ConversationResponse = {
    id: "chatcmpl-9",
    model: "deepseek-v4",
    message: {
      role: "assistant",
      parts: [
        {
          type: "thinking",
          thinking: "reasoning",
          origin: { format: "openai", provider: "deepseek", field: "reasoning_content" },
        },
        { type: "thinking", thinking: "no origin" },
        { type: "thinking", thinking: "signed", signature: "EqQB" },
        { type: "text", text: "answer" },
      ],
    },
    stopReason: { unified: "max_tokens", raw: "length" },
    usage: { inputTokens: 80, outputTokens: 20, cacheReadInputTokens: 20, reasoningTokens: 12 },
    extra: {
      openai: { created: 1, object: "chat.completion", system_fingerprint: "fp", usage: { total_tokens: 120 } },
    },
  };
  const { value, lossy } = coreToAnthropicResponse(response);

  test("signs unsigned thinking with a Parley envelope of its origin, keeps real signatures", () => {
    const [first, second, third] = value.content as Array<{ signature?: string }>;
    expect(decodeOriginSignature(first?.signature)).toEqual({
      format: "openai",
      provider: "deepseek",
      field: "reasoning_content",
    });
    expect(decodeOriginSignature(second?.signature)).toEqual({ format: "openai" });
    expect(third?.signature).toBe("EqQB");
  });

  test("stop reason, usage and the Anthropic envelope", () => {
    expect(value).toMatchObject({
      id: "chatcmpl-9",
      type: "message",
      role: "assistant",
      model: "deepseek-v4",
      stop_reason: "max_tokens",
      stop_sequence: null,
      usage: {
        input_tokens: 80,
        cache_read_input_tokens: 20,
        output_tokens: 20,
        output_tokens_details: { thinking_tokens: 12 },
      },
    });
    expect(Object.keys(value)).not.toContain("created");
    expect(lossy.map((entry) => entry.message).join(" ")).toMatch(/created.*object.*system_fingerprint|total_tokens/);
  });

  test("an unknown stop reason goes out raw, an unfinished one as null", () => {
    const other = coreToAnthropicResponse({ ...response, stopReason: { unified: "other", raw: "weird" } });
    expect(other.value.stop_reason).toBe("weird");
    const partial = coreToAnthropicResponse({ ...response, stopReason: { unified: "other", raw: null } });
    expect(partial.value.stop_reason).toBeNull();
  });
});
