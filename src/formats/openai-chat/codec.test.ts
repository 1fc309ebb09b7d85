import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  type ConversationResponse,
  encodeOriginSignature,
  InvalidRequestError,
  type Message,
  type StreamEvent,
} from "../../core/index.js";
import { detectPreset, PRESETS, resolveCompat } from "./compat.js";
import { coreToOpenAIMessages, coreToOpenAIRequest, coreToOpenAIResponse } from "./from-core.js";
import { openaiMessagesToCore } from "./messages-to-core.js";
import { createOpenAIStreamEncoder } from "./stream-encoder.js";
import { openaiRequestToCore, openaiResponseToCore } from "./to-core.js";
import { parseOpenAIRequest } from "./validate-request.js";
import type { OpenAIChatRequest } from "./wire-types.js";

const thinking = (text: string) => ({ type: "thinking" as const, thinking: text, signature: "EqSig" });
const toolCall = { type: "tool_call" as const, id: "X", name: "run", input: { cmd: "ls" } };

describe("core -> OpenAI request (invariants 1-3)", () => {
  test("think-tags keep block order; tool call arguments are the JSON of the input", () => {
    const messages: Message[] = [
      { role: "assistant", parts: [thinking("A"), { type: "text", text: "T" }, thinking("B"), toolCall] },
    ];
    const { value } = coreToOpenAIMessages(messages, { reasoning: "think-tags" });
    expect(value).toEqual([
      {
        role: "assistant",
        content: "<think>A</think>T<think>B</think>",
        tool_calls: [{ id: "X", type: "function", function: { name: "run", arguments: '{"cmd":"ls"}' } }],
      },
    ]);
  });

  test("user blocks keep their order as user and tool messages", () => {
    const result = (id: string) => ({ type: "tool_result" as const, toolCallId: id, content: id });
    const first = coreToOpenAIMessages([{ role: "user", parts: [{ type: "text", text: "U" }, result("R")] }], {
      reasoning: "think-tags",
    });
    expect(first.value.map((message) => message.role)).toEqual(["user", "tool"]);
    const second = coreToOpenAIMessages(
      [{ role: "user", parts: [result("R1"), result("R2"), { type: "text", text: "U" }] }],
      { reasoning: "think-tags" },
    );
    expect(second.value.map((message) => [message.role, message.tool_call_id ?? message.content])).toEqual([
      ["tool", "R1"],
      ["tool", "R2"],
      ["user", [{ type: "text", text: "U" }]],
    ]);
    expect(second.lossy).toEqual([]);
  });

  test("the strict rule moves tool messages first and reports it", () => {
    const { value, lossy } = coreToOpenAIMessages(
      [
        {
          role: "user",
          parts: [
            { type: "text", text: "U" },
            { type: "tool_result", toolCallId: "R", content: "r" },
          ],
        },
      ],
      { reasoning: "think-tags", compat: PRESETS.openai! },
    );
    expect(value.map((message) => message.role)).toEqual(["tool", "user"]);
    expect(lossy.map((entry) => entry.code)).toContain("tool-messages-moved-first");
  });

  test("one reasoning field flattens interleaving and says so; drop mode reports", () => {
    const messages: Message[] = [
      { role: "assistant", parts: [thinking("A"), { type: "text", text: "T" }, thinking("B")] },
    ];
    const joined = coreToOpenAIMessages(messages, { reasoning: "reasoning_content" });
    expect(joined.value[0]).toMatchObject({ reasoning_content: "A\n\nB", content: "T" });
    expect(joined.lossy.map((entry) => entry.code)).toContain("reasoning-interleaving-flattened");
    expect(
      coreToOpenAIMessages(messages, { reasoning: "drop" }).lossy.filter((entry) => entry.code === "thinking-dropped"),
    ).toHaveLength(2);
  });

  test("reasoning bound to its provider goes back in its own field", () => {
    const part = {
      type: "thinking" as const,
      thinking: "R",
      origin: { format: "openai" as const, provider: "ds", field: "reasoning_content" as const },
    };
    const messages: Message[] = [{ role: "assistant", parts: [part, toolCall] }];
    expect(coreToOpenAIMessages(messages, { reasoning: "think-tags", provider: "ds" }).value[0]).toMatchObject({
      reasoning_content: "R",
    });
    expect(coreToOpenAIMessages(messages, { reasoning: "think-tags", provider: "other" }).value[0]).toMatchObject({
      content: "<think>R</think>",
    });
  });

  test("Kimi/DeepSeek tool-call turns always carry reasoning", () => {
    const { value, lossy } = coreToOpenAIMessages([{ role: "assistant", parts: [toolCall] }], {
      reasoning: "reasoning_content",
      compat: PRESETS.kimi!,
    });
    expect(value[0]?.reasoning_content).toBe(" ");
    expect(lossy.map((entry) => entry.code)).toEqual(["reasoning-placeholder-added"]);
  });

  test("request fields: tool choice, caps, cache_control once, Anthropic extras dropped, stream usage", () => {
    const compat = { ...resolveCompat("deepseek", ""), maxTokensCap: 100 };
    const { value, lossy } = coreToOpenAIRequest(
      {
        model: "m",
        messages: [
          {
            role: "user",
            parts: [
              { type: "text", text: "a", extra: { anthropic: { cache_control: { type: "ephemeral" } } } },
              { type: "text", text: "b", extra: { anthropic: { cache_control: { type: "ephemeral" } } } },
            ],
          },
        ],
        toolChoice: { type: "any", disableParallelToolUse: true },
        maxTokens: 4096,
        stream: true,
        thinking: { type: "enabled", budgetTokens: 2000 },
        extra: { anthropic: { output_config: { effort: "high" } } },
      },
      { reasoning: "reasoning_content", compat },
    );
    expect(value).toMatchObject({
      tool_choice: "required",
      parallel_tool_calls: false,
      max_tokens: 100,
      stream_options: { include_usage: true },
      thinking: { type: "enabled" },
    });
    expect(value.output_config).toBeUndefined();
    expect(lossy.map((entry) => entry.code).sort()).toEqual([
      "cache_control-stripped",
      "field-dropped-output_config",
      "max-tokens-capped",
    ]);
  });
});

describe("OpenAI response -> core", () => {
  test("a reasoning field gives thinking before text; finish and usage map", () => {
    const { value } = openaiResponseToCore({
      id: "r",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "hi", reasoning_content: "think" },
          finish_reason: "content_filter",
        },
      ],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 5,
        prompt_cache_hit_tokens: 4,
        completion_tokens_details: { reasoning_tokens: 3 },
      },
    });
    expect(value.message.parts.map((part) => part.type)).toEqual(["thinking", "text"]);
    expect(value.stopReason).toEqual({ unified: "refusal", raw: "content_filter" });
    expect(value.usage).toEqual({ inputTokens: 6, outputTokens: 5, cacheReadInputTokens: 4, reasoningTokens: 3 });
  });

  test("inline think blocks in order, invalid arguments repaired and reported", () => {
    const { value, lossy } = openaiResponseToCore({
      id: "r",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "<think>a</think>m<think>b</think>",
            tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: '{"a":1' } }],
          },
          finish_reason: "tool_calls",
        },
      ],
    });
    expect(
      value.message.parts.map((part) =>
        part.type === "text" ? part.text : part.type === "thinking" ? `T:${part.thinking}` : part.type,
      ),
    ).toEqual(["T:a", "m", "T:b", "tool_call"]);
    expect(value.message.parts[3]).toMatchObject({ input: { a: 1 }, rawInput: '{"a":1' });
    expect(lossy.map((entry) => entry.code)).toEqual(["tool-arguments-repaired"]);
  });
});

const text = fc.string({ maxLength: 12 });
const extraFields = fc.option(fc.record({ name: fc.constantFrom("alice", "bob") }), { nil: undefined });
const contentPart = fc.oneof(
  text.map((value) => ({ type: "text", text: value })),
  fc
    .constantFrom("https://x.test/a.png", "data:image/png;base64,AAAA")
    .map((url) => ({ type: "image_url", image_url: { url, detail: "low" } })),
  fc.constant({ type: "input_audio", input_audio: { data: "AA", format: "wav" } }),
);
const userMessage = fc
  .tuple(fc.oneof(text, fc.array(contentPart, { minLength: 1, maxLength: 3 })), extraFields)
  .map(([content, extra]) => ({ role: "user", content, ...extra }));
const systemMessage = fc
  .tuple(fc.constantFrom("system", "developer"), text)
  .map(([role, content]) => ({ role, content }));
const call = fc
  .tuple(
    fc.stringMatching(/^call_[a-z0-9]{1,6}$/),
    fc.constantFrom("run", "read"),
    fc.constantFrom('{"a":1}', '{"a": 1}', "", '{"b":[true]}'),
  )
  .map(([id, name, args]) => ({
    id,
    type: "function",
    function: { name, arguments: args },
  }));
const assistantMessage = fc
  .record(
    {
      content: fc.oneof(
        text,
        fc.constant(null),
        text.map((value) => `<think>${value.replace(/<|>/g, "")}</think>${value}`),
      ),
      reasoning_content: text,
      tool_calls: fc.array(call, { minLength: 1, maxLength: 2 }),
      refusal: fc.constant(null),
    },
    { requiredKeys: ["content"] },
  )
  .map((message) => ({ role: "assistant", ...message }));
const toolMessage = fc
  .tuple(
    fc.stringMatching(/^call_[a-z0-9]{1,6}$/),
    fc.oneof(
      text,
      fc.array(
        text.map((value) => ({ type: "text", text: value })),
        { minLength: 1, maxLength: 2 },
      ),
    ),
  )
  .map(([id, content]) => ({ role: "tool", tool_call_id: id, content }));

describe("OpenAI request -> core -> OpenAI request", () => {
  test("is deep-equal for every role, tool call, tool message, content array, image and unknown field", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(userMessage, systemMessage, assistantMessage, toolMessage), { minLength: 1, maxLength: 8 }),
        fc.record(
          { temperature: fc.double({ min: 0, max: 2, noNaN: true }), seed: fc.integer(), stream: fc.boolean() },
          { requiredKeys: [] },
        ),
        (messages, fields) => {
          const body = parseOpenAIRequest({
            model: "m",
            messages,
            ...fields,
            tools: [{ type: "function", function: { name: "run", parameters: { type: "object" }, strict: true } }],
            tool_choice: "auto",
          });
          const core = openaiRequestToCore(body);
          const back = coreToOpenAIRequest(core.value, { reasoning: "think-tags" });
          expect(back.value).toEqual(body);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("validation names the path", () => {
  const base = { model: "m", messages: [{ role: "user", content: "hi" }] } as OpenAIChatRequest;
  const cases: Array<[string, unknown, string]> = [
    ["non-object body", [], ""],
    ["missing model", { messages: base.messages }, "model"],
    ["empty messages", { model: "m", messages: [] }, "messages"],
    ["unknown role", { model: "m", messages: [{ role: "bot", content: "x" }] }, "messages[0].role"],
    ["bad content", { model: "m", messages: [{ role: "user", content: 5 }] }, "messages[0].content"],
    ["tool without id", { model: "m", messages: [{ role: "tool", content: "x" }] }, "messages[0].tool_call_id"],
    [
      "bad arguments",
      {
        model: "m",
        messages: [
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: {} } }],
          },
        ],
      },
      "messages[0].tool_calls[0].function.arguments",
    ],
    ["bad tools", { ...base, tools: [{ type: "function", function: {} }] }, "tools[0].function.name"],
    ["bad tool_choice", { ...base, tool_choice: "sometimes" }, "tool_choice"],
    ["bad temperature", { ...base, temperature: "hot" }, "temperature"],
    ["bad stream", { ...base, stream: "yes" }, "stream"],
  ];
  test.each(cases)("%s", (_name, body, path) => {
    try {
      parseOpenAIRequest(body);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).path ?? "").toBe(path);
    }
  });
  test("unknown fields are accepted", () => {
    expect(parseOpenAIRequest({ ...base, frobnicate: 1 }).frobnicate).toBe(1);
  });
});

describe("compat presets", () => {
  test.each([
    ["https://integrate.api.nvidia.com/v1", "nvidia-nim"],
    ["https://api.deepseek.com", "deepseek"],
    ["https://api.moonshot.cn/v1", "kimi"],
    ["https://open.bigmodel.cn/api/paas/v4", "glm"],
    ["https://api.minimax.io/v1", "minimax"],
    ["https://openrouter.ai/api/v1", "openrouter"],
    ["https://api.openai.com/v1", "openai"],
    ["http://127.0.0.1:11434/v1", "ollama"],
    ["http://gpu:8000/v1", "vllm"],
    ["http://gpu:30000/v1", "sglang"],
    ["http://gpu:8080/v1", "llamacpp"],
    ["http://example.test/v1", "generic"],
  ])("%s -> %s", (url, id) => {
    expect(detectPreset(url).id).toBe(id);
  });
  test("overrides apply on top of a preset", () => {
    expect(resolveCompat("vllm", "", { strictToolMessageOrder: true }).strictToolMessageOrder).toBe(true);
  });
});

describe("reasoning details that cannot go along", () => {
  test("a provider's reasoning_details sent to another place are reported, never dropped silently", () => {
    const origin = {
      format: "openai" as const,
      provider: "openrouter",
      field: "reasoning_details" as const,
      details: [{ type: "reasoning.encrypted", data: "gAAAA" }],
    };
    const messages: Message[] = [
      { role: "user", parts: [{ type: "text", text: "q" }] },
      {
        role: "assistant",
        parts: [
          { type: "thinking", thinking: "plan", origin },
          { type: "text", text: "a" },
        ],
      },
    ];
    const { lossy } = coreToOpenAIMessages(messages, { reasoning: "reasoning_content", provider: "vllm" });
    expect(lossy).toContainEqual(
      expect.objectContaining({ code: "reasoning-details-dropped", path: "messages[1].content[0]" }),
    );
    // Back to the provider it came from, they go along and nothing is reported.
    const home = coreToOpenAIMessages(messages, { reasoning: "reasoning_content", provider: "openrouter" });
    expect(home.lossy.filter((entry) => entry.code === "reasoning-details-dropped")).toEqual([]);
  });
});

function pick<T extends object, K extends keyof T>(value: T, key: K): Partial<Pick<T, K>> {
  return value[key] === undefined ? {} : ({ [key]: value[key] } as Partial<Pick<T, K>>);
}

describe("reasoning another API sealed", () => {
  const origin = {
    format: "responses" as const,
    provider: "openai",
    field: "summary" as const,
    id: "rs_1",
    sealed: "gAAAA",
  };
  const sealed: ConversationResponse = {
    id: "r",
    model: "m",
    message: {
      role: "assistant",
      parts: [
        { type: "thinking", thinking: "first", origin },
        { type: "text", text: "between" },
        { type: "thinking", thinking: "second", signature: encodeOriginSignature({ ...origin, id: "rs_2" }) },
      ],
    },
    stopReason: { unified: "end_turn", raw: "completed" },
    usage: { inputTokens: 1, outputTokens: 1 },
  };

  test("reaches a Chat client in reasoning_details carrying its envelope, and comes back as the parts it was", () => {
    const message = coreToOpenAIResponse(sealed).value.choices[0]!.message;
    expect(message.reasoning_content).toBe("first\n\nsecond");
    expect(message.reasoning_details).toEqual([
      {
        type: "reasoning.text",
        text: "first",
        signature: encodeOriginSignature(origin),
        format: "parley.v1",
        index: 0,
      },
      {
        type: "reasoning.text",
        text: "second",
        signature: encodeOriginSignature({ ...origin, id: "rs_2" }),
        format: "parley.v1",
        index: 1,
      },
    ]);
    const back = openaiMessagesToCore([{ role: "user", content: "q" }, message]).messages[1]!;
    expect(back.parts.filter((part) => part.type === "thinking")).toEqual([
      { type: "thinking", thinking: "first", signature: encodeOriginSignature(origin), origin },
      {
        type: "thinking",
        thinking: "second",
        signature: encodeOriginSignature({ ...origin, id: "rs_2" }),
        origin: { ...origin, id: "rs_2" },
      },
    ]);
  });

  test("streamed, the same details come at each block's end", () => {
    const encoder = createOpenAIStreamEncoder({ model: "m" });
    const parts = sealed.message.parts;
    const events: StreamEvent[] = [
      { type: "message-start", id: "r", model: "m" },
      // The first block's origin is known at its start, the second's only from its signature.
      ...parts.flatMap((part, index): StreamEvent[] =>
        part.type === "thinking"
          ? [
              { type: "block-start", index, part: { type: "thinking", thinking: "", ...pick(part, "origin") } },
              { type: "thinking-delta", index, thinking: part.thinking },
              ...(part.signature === undefined
                ? []
                : [{ type: "signature" as const, index, signature: part.signature }]),
              { type: "block-end", index },
            ]
          : [
              { type: "block-start", index, part: { type: "text", text: "" } },
              { type: "text-delta", index, text: (part as { text: string }).text },
              { type: "block-end", index },
            ],
      ),
      { type: "finish", stopReason: sealed.stopReason, usage: sealed.usage },
    ];
    const chunks = events
      .map((event) => encoder.encode(event))
      .join("")
      .split("\n\n")
      .filter((frame) => frame.startsWith("data: {"))
      .map((frame) => JSON.parse(frame.slice(6)));
    const details = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.reasoning_details ?? []);
    expect(details).toEqual(coreToOpenAIResponse(sealed).value.choices[0]!.message.reasoning_details);
  });

  test("to a Chat provider only its text goes, and the sealed content's loss is reported", () => {
    const { value, lossy } = coreToOpenAIMessages(
      [{ role: "user", parts: [{ type: "text", text: "q" }] }, sealed.message],
      {
        reasoning: "reasoning_content",
        provider: "openai",
      },
    );
    expect(JSON.stringify(value)).not.toContain("gAAAA");
    expect(JSON.stringify(value)).not.toContain("parley.v1");
    expect(lossy).toContainEqual(expect.objectContaining({ code: "reasoning-sealed-dropped" }));
  });
});
