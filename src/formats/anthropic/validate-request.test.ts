import { describe, expect, test } from "vitest";
import { InvalidRequestError } from "../../core/errors.js";
import { parseAnthropicMessages, parseAnthropicRequest, parseCountTokensRequest } from "./validate-request.js";

const valid = () => ({
  model: "claude-sonnet-4-5",
  max_tokens: 1024,
  messages: [{ role: "user", content: "hi" }] as unknown[],
});

function rejection(body: unknown): InvalidRequestError {
  try {
    parseAnthropicRequest(body);
  } catch (error) {
    if (error instanceof InvalidRequestError) return error;
    throw error;
  }
  throw new Error("accepted");
}

function withMessage(message: unknown, index = 0): unknown {
  const body = valid();
  body.messages[index] = message;
  return body;
}

function withBlock(block: unknown): unknown {
  return withMessage({ role: "assistant", content: [{ type: "text", text: "ok" }, block] });
}

describe("parseAnthropicRequest accepts what real clients send", () => {
  test("Claude Code's shape: system message in place, adaptive thinking, betas and unknown fields", () => {
    const body = {
      model: "claude-opus-4-6",
      max_tokens: 32000,
      stream: true,
      system: [{ type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "system", content: "reminder" },
        {
          role: "user",
          content: [
            { type: "text", text: "look", cache_control: { type: "ephemeral", ttl: "1h" } },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } },
            { type: "document", source: { type: "file", file_id: "file_1" }, title: "spec" },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "", signature: "Eq" },
            { type: "redacted_thinking", data: "abc" },
            { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } },
            { type: "brand_new_block", anything: [1, 2] },
            { type: "tool_use", id: "toolu_1", name: "Read", input: {}, caller: { type: "direct" } },
          ],
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: [
                { type: "text", text: "data" },
                { type: "image", source: { type: "url", url: "https://example.org/a.png" } },
              ],
              is_error: false,
            },
            { type: "tool_result", tool_use_id: "toolu_2" },
          ],
        },
      ],
      tools: [
        { name: "Read", description: "reads", input_schema: { type: "object" }, defer_loading: true },
        { type: "web_search_20250305", name: "web_search", cache_control: { type: "ephemeral" } },
      ],
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
      thinking: { type: "adaptive", display: "summarized" },
      output_config: { effort: "high" },
      context_management: { edits: [{ type: "clear_thinking_20251015" }] },
      metadata: { user_id: "user_abc" },
      temperature: 1,
      stop_sequences: ["\n\nHuman:"],
      some_future_field: { x: 1 },
    };
    expect(parseAnthropicRequest(body)).toBe(body);
  });

  test("count_tokens needs no max_tokens; a history parses on its own", () => {
    const body: Record<string, unknown> = valid();
    delete body.max_tokens;
    expect(parseCountTokensRequest(body)).toBe(body);
    const history = [{ role: "user", content: "a" }];
    expect(parseAnthropicMessages(history)).toBe(history);
    expect(() => parseAnthropicMessages([{ role: "tool", content: "x" }])).toThrow("messages[0].role");
    expect(() => parseAnthropicMessages({}, "history")).toThrow(/^history: /);
  });

  test("empty content anywhere, as Claude Code's compaction request holds it, is for repair, not a refusal", () => {
    const body = valid();
    body.messages = [
      { role: "user", content: "" },
      { role: "assistant", content: [] },
      { role: "user", content: [{ type: "text", text: "  \n" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "" },
          { type: "text", text: "ok" },
        ],
      },
      { role: "user", content: [] },
    ];
    expect(parseAnthropicRequest(body)).toBe(body);
    expect(rejection({ ...valid(), messages: [] }).path).toBe("messages");
  });
});

const rejections: Array<[string, () => unknown, string]> = [
  ["a body that is not an object", () => [1], ""],
  ["a missing model", () => ({ ...valid(), model: undefined }), "model"],
  ["a numeric model", () => ({ ...valid(), model: 3 }), "model"],
  ["max_tokens of 0", () => ({ ...valid(), max_tokens: 0 }), "max_tokens"],
  ["a fractional max_tokens", () => ({ ...valid(), max_tokens: 1.5 }), "max_tokens"],
  ["max_tokens as a string", () => ({ ...valid(), max_tokens: "100" }), "max_tokens"],
  ["messages that are not an array", () => ({ ...valid(), messages: {} }), "messages"],
  ["a message that is not an object", () => withMessage("hello"), "messages[0]"],
  ["an unknown role", () => withMessage({ role: "tool", content: "x" }), "messages[0].role"],
  ["content neither string nor array", () => withMessage({ role: "user", content: 5 }), "messages[0].content"],
  ["a block that is not an object", () => withBlock(null), "messages[0].content[1]"],
  ["a block without type", () => withBlock({ text: "x" }), "messages[0].content[1].type"],
  ["text that is not a string", () => withBlock({ type: "text", text: 1 }), "messages[0].content[1].text"],
  ["tool_use without id", () => withBlock({ type: "tool_use", name: "f", input: {} }), "messages[0].content[1].id"],
  ["tool_use without name", () => withBlock({ type: "tool_use", id: "t", input: {} }), "messages[0].content[1].name"],
  [
    "tool_use input not an object",
    () => withBlock({ type: "tool_use", id: "t", name: "f", input: "{}" }),
    "messages[0].content[1].input",
  ],
  [
    "tool_result without tool_use_id",
    () => withBlock({ type: "tool_result", content: "x" }),
    "messages[0].content[1].tool_use_id",
  ],
  [
    "tool_result with numeric content",
    () => withBlock({ type: "tool_result", tool_use_id: "t", content: 4 }),
    "messages[0].content[1].content",
  ],
  [
    "a bad block inside tool_result",
    () => withBlock({ type: "tool_result", tool_use_id: "t", content: [{ type: "text" }] }),
    "messages[0].content[1].content[0].text",
  ],
  ["an image without source", () => withBlock({ type: "image" }), "messages[0].content[1].source"],
  [
    "a base64 image without data",
    () => withBlock({ type: "image", source: { type: "base64", media_type: "image/png" } }),
    "messages[0].content[1].source.data",
  ],
  [
    "a url image without url",
    () => withBlock({ type: "image", source: { type: "url" } }),
    "messages[0].content[1].source.url",
  ],
  [
    "thinking without thinking text",
    () => withBlock({ type: "thinking", signature: "s" }),
    "messages[0].content[1].thinking",
  ],
  [
    "a numeric signature",
    () => withBlock({ type: "thinking", thinking: "", signature: 5 }),
    "messages[0].content[1].signature",
  ],
  ["redacted_thinking without data", () => withBlock({ type: "redacted_thinking" }), "messages[0].content[1].data"],
  ["a tool without name", () => ({ ...valid(), tools: [{ name: "ok" }, { input_schema: {} }] }), "tools[1].name"],
  ["tools that are not an array", () => ({ ...valid(), tools: {} }), "tools"],
  ["an unknown tool_choice type", () => ({ ...valid(), tool_choice: { type: "required" } }), "tool_choice.type"],
  ["tool_choice as a string", () => ({ ...valid(), tool_choice: "auto" }), "tool_choice"],
  ["tool_choice tool without name", () => ({ ...valid(), tool_choice: { type: "tool" } }), "tool_choice.name"],
  ["temperature as a string", () => ({ ...valid(), temperature: "0.5" }), "temperature"],
  ["top_p as null", () => ({ ...valid(), top_p: null }), "top_p"],
  ["stream as a string", () => ({ ...valid(), stream: "true" }), "stream"],
  ["system as a number", () => ({ ...valid(), system: 1 }), "system"],
  ["a system block that is not text", () => ({ ...valid(), system: [{ type: "image" }] }), "system[0].type"],
  ["stop_sequences as a string", () => ({ ...valid(), stop_sequences: "END" }), "stop_sequences"],
  ["a non-string stop sequence", () => ({ ...valid(), stop_sequences: ["a", 2] }), "stop_sequences[1]"],
  ["thinking without type", () => ({ ...valid(), thinking: { budget_tokens: 2048 } }), "thinking.type"],
  ["metadata as a string", () => ({ ...valid(), metadata: "x" }), "metadata"],
];

describe("parseAnthropicRequest rejects with the path of the offending field", () => {
  for (const [name, body, path] of rejections) {
    test(name, () => {
      const error = rejection(body());
      expect(error.status).toBe(400);
      expect(error.type).toBe("invalid_request_error");
      expect(error.path ?? "").toBe(path);
      expect(error.message.length).toBeGreaterThan(path.length + 5);
    });
  }

  test("the path of a deep block counts messages and blocks from zero", () => {
    const body = valid();
    body.messages = [
      { role: "user", content: "a" },
      { role: "assistant", content: [{ type: "text", text: "b" }] },
      {
        role: "user",
        content: [
          { type: "text", text: "c" },
          { type: "text", text: "d" },
          { type: "tool_use", id: "t", name: "n", input: [] },
        ],
      },
    ];
    expect(rejection(body).message).toBe("messages[2].content[2].input: must be an object, got an array");
  });
});
