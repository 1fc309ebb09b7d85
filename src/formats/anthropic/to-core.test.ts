import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { encodeOriginSignature } from "../../core/reasoning-origin.js";
import { coreToAnthropicMessages, coreToAnthropicRequest, coreToAnthropicResponse } from "./from-core.js";
import { corpusResponses } from "./test-support/corpus.js";
import { anthropicMessagesToCore, anthropicRequestToCore, anthropicResponseToCore } from "./to-core.js";
import type { AnthropicMessage, AnthropicMessageResponse, AnthropicRequestBody } from "./wire-types.js";

function roundTripMessages(messages: AnthropicMessage[]) {
  return coreToAnthropicMessages(anthropicMessagesToCore(messages));
}

const everyBlock: AnthropicMessage[] = [
  { role: "system", content: "Claude Code puts a reminder here" },
  {
    role: "user",
    content: [
      { type: "text", text: "look at these", cache_control: { type: "ephemeral", ttl: "1h" } },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      {
        type: "image",
        source: { type: "url", url: "https://example.org/cat.png" },
        cache_control: { type: "ephemeral" },
      },
      { type: "image", source: { type: "file", file_id: "file_011" } },
      {
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" },
        title: "spec",
        context: "ctx",
        citations: { enabled: true },
      },
      { type: "document", source: { type: "text", media_type: "text/plain", data: "plain" } },
      { type: "document", source: { type: "content", content: [{ type: "text", text: "chunk" }] } },
      { type: "search_result", source: "https://example.org", title: "t", content: [{ type: "text", text: "r" }] },
    ],
  },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "let me think", signature: "EqQBCgIYAhIM" },
      { type: "redacted_thinking", data: "EmwKAhgBEgy3va" },
      {
        type: "thinking",
        thinking: "from qwen",
        signature: encodeOriginSignature({ format: "openai", provider: "qwen", field: "reasoning_content" }),
      },
      { type: "thinking", thinking: "", signature: "" },
      {
        type: "text",
        text: "Tokyo is big",
        citations: [{ type: "web_search_result_location", url: "https://example.org", cited_text: "big" }],
      },
      { type: "server_tool_use", id: "srvtoolu_01", name: "web_search", input: { query: "tokyo" } },
      {
        type: "web_search_tool_result",
        tool_use_id: "srvtoolu_01",
        content: [
          { type: "web_search_result", title: "T", url: "https://example.org", encrypted_content: "x", page_age: null },
        ],
      },
      { type: "mcp_tool_use", id: "mcptoolu_1", name: "ask", server_name: "docs", input: {} },
      {
        type: "tool_use",
        id: "toolu_01",
        name: "Read",
        input: { path: "/a" },
        caller: { type: "direct" },
        cache_control: { type: "ephemeral" },
      },
      { type: "tool_use", id: "toolu_02", name: "List", input: {} },
    ],
  },
  {
    role: "user",
    content: [
      {
        type: "tool_result",
        tool_use_id: "toolu_01",
        content: "file text",
        is_error: false,
        cache_control: { type: "ephemeral" },
      },
      {
        type: "tool_result",
        tool_use_id: "toolu_02",
        content: [
          { type: "text", text: "two files" },
          { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/" } },
          { type: "tool_reference", tool_name: "Read" },
        ],
        is_error: true,
      },
      { type: "tool_result", tool_use_id: "toolu_03", content: [] },
      { type: "text", text: "thanks" },
    ],
  },
  { role: "assistant", content: [{ type: "text", text: "array, not shorthand" }] },
  { role: "user", content: [] },
];

describe("anthropic -> core -> anthropic", () => {
  test("every block type comes back deep-equal, with nothing reported lost", () => {
    const back = roundTripMessages(everyBlock);
    expect(back.value).toEqual(everyBlock);
    expect(back.lossy).toEqual([]);
  });

  test("blocks come back byte-for-byte in the order clients write their keys", () => {
    expect(JSON.stringify(roundTripMessages(everyBlock).value)).toBe(JSON.stringify(everyBlock));
  });

  test("what the core sees: shorthand, extras, opaque blocks, origins", () => {
    const [system, user, assistant, results] = anthropicMessagesToCore(everyBlock);
    expect(system).toEqual({
      role: "system",
      parts: [{ type: "text", text: "Claude Code puts a reminder here" }],
      textShorthand: true,
    });
    expect(user?.parts[0]).toEqual({
      type: "text",
      text: "look at these",
      extra: { anthropic: { cache_control: { type: "ephemeral", ttl: "1h" } } },
    });
    expect(user?.parts[1]).toEqual({
      type: "image",
      source: { type: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" },
    });
    expect(user?.parts[3]).toMatchObject({ type: "opaque", format: "anthropic", block: { type: "image" } });
    expect(user?.parts[7]).toMatchObject({ type: "opaque", block: { type: "search_result" } });
    expect(assistant?.parts[0]).toMatchObject({ type: "thinking", origin: { format: "anthropic" } });
    expect(assistant?.parts[2]).toMatchObject({
      origin: { format: "openai", provider: "qwen", field: "reasoning_content" },
    });
    expect(assistant?.parts[8]).toEqual({
      type: "tool_call",
      id: "toolu_01",
      name: "Read",
      input: { path: "/a" },
      extra: { anthropic: { caller: { type: "direct" }, cache_control: { type: "ephemeral" } } },
    });
    expect(results?.parts[1]).toMatchObject({ type: "tool_result", toolCallId: "toolu_02", isError: true });
    expect(results?.parts[1]?.type === "tool_result" && results.parts[1].content[2]).toMatchObject({ type: "opaque" });
  });

  test("a tool_result without content comes back with an empty string", () => {
    const back = roundTripMessages([{ role: "user", content: [{ type: "tool_result", tool_use_id: "t" }] }]);
    expect(back.value).toEqual([{ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "" }] }]);
  });

  test("a full request round-trips, with metadata, effort, adaptive thinking and unknown fields mapped", () => {
    const body: AnthropicRequestBody = {
      model: "claude-opus-4-6",
      max_tokens: 32000,
      messages: everyBlock,
      system: [{ type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } }],
      tools: [
        { name: "Read", description: "reads", input_schema: { type: "object", properties: {} }, defer_loading: true },
        { type: "web_search_20250305", name: "web_search", max_uses: 5 },
      ],
      tool_choice: { type: "tool", name: "Read", disable_parallel_tool_use: true },
      thinking: { type: "adaptive", display: "summarized" },
      stop_sequences: ["END"],
      temperature: 1,
      top_p: 0.99,
      top_k: 40,
      stream: true,
      metadata: { user_id: "user_1", session: "s" },
      output_config: { effort: "high", format: { type: "json_schema" } },
      context_management: { edits: [{ type: "clear_thinking_20251015" }] },
      service_tier: "auto",
    };
    const core = anthropicRequestToCore(body).value;
    expect(core).toMatchObject({
      userId: "user_1",
      reasoningEffort: "high",
      thinking: { type: "adaptive", display: "summarized" },
      toolChoice: { type: "tool", name: "Read", disableParallelToolUse: true },
      extra: {
        anthropic: {
          metadata: { session: "s" },
          output_config: { format: { type: "json_schema" } },
          service_tier: "auto",
        },
      },
    });
    expect(core.tools?.[1]).toEqual({
      name: "web_search",
      inputSchema: undefined,
      extra: { anthropic: { type: "web_search_20250305", max_uses: 5 } },
    });
    const back = coreToAnthropicRequest(core);
    expect(back.value).toEqual(body);
    expect(back.lossy).toEqual([]);
  });

  test("string system, metadata without user_id, unknown thinking type and bare effort round-trip", () => {
    const body: AnthropicRequestBody = {
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
      system: "be brief",
      metadata: {},
      thinking: { type: "interleaved_future", budget_tokens: 2048 },
      output_config: { effort: "low" },
    };
    const core = anthropicRequestToCore(body).value;
    expect(core.system).toEqual({ role: "system", parts: [{ type: "text", text: "be brief" }], textShorthand: true });
    expect(core.thinking).toBeUndefined();
    expect(coreToAnthropicRequest(core).value).toEqual(body);
  });

  test("a malformed upstream answer is carried, never thrown on", () => {
    const body = {
      id: 5,
      content: [null, "text", { type: "text", text: 1 }],
      stop_reason: "end_turn",
    } as unknown as AnthropicMessageResponse;
    const core = anthropicResponseToCore(body);
    expect(core.id).toBe("");
    expect(core.message.parts.map((part) => part.type)).toEqual(["opaque", "opaque", "opaque"]);
    expect(core.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    expect(
      anthropicResponseToCore({ id: "m", content: "x" } as unknown as AnthropicMessageResponse).message.parts,
    ).toEqual([]);
  });

  for (const file of corpusResponses()) {
    test(`recorded response ${file.name} round-trips`, () => {
      const body = JSON.parse(file.text) as AnthropicMessageResponse;
      const core = anthropicResponseToCore(body);
      expect(core.message.parts.length).toBe(body.content.length);
      const back = coreToAnthropicResponse(core);
      expect(back.value).toEqual(body);
      expect(back.lossy).toEqual([]);
    });
  }
});

const key = fc.constantFrom("cache_control", "citations", "caller", "x_note", "meta");
const extras = fc.dictionary(key, fc.jsonValue(), { maxKeys: 2 });
const text = fc.string({ maxLength: 12 });
const withExtras = <T extends object>(block: fc.Arbitrary<T>) =>
  fc.tuple(block, extras).map(([value, extra]) => ({ ...value, ...extra }));

const mediaSource = fc.oneof(
  fc.record({ type: fc.constant("base64"), media_type: fc.constantFrom("image/png", "application/pdf"), data: text }),
  fc.record({ type: fc.constant("url"), url: fc.webUrl() }),
  fc.record({ type: fc.constant("text"), media_type: fc.constant("text/plain"), data: text }),
  fc.record({ type: fc.constant("file"), file_id: text }),
);
const textBlock = withExtras(fc.record({ type: fc.constant("text"), text }));
const imageBlock = withExtras(fc.record({ type: fc.constant("image"), source: mediaSource }));
const documentBlock = withExtras(
  fc.record({ type: fc.constant("document"), source: mediaSource }, { requiredKeys: ["type", "source"] }),
);
const unknownBlock = fc.record({
  type: fc.constantFrom("server_tool_use", "web_search_tool_result", "container_upload", "future"),
  id: text,
  payload: fc.jsonValue(),
});
const thinkingBlock = withExtras(
  fc.record(
    {
      type: fc.constant("thinking"),
      thinking: text,
      signature: fc.oneof(text, fc.constant(encodeOriginSignature({ format: "openai", provider: "p", model: "m" }))),
    },
    { requiredKeys: ["type", "thinking"] },
  ),
);
const redactedBlock = withExtras(fc.record({ type: fc.constant("redacted_thinking"), data: text }));
const toolUseBlock = withExtras(
  fc.record({
    type: fc.constant("tool_use"),
    id: text,
    name: text,
    input: fc.dictionary(text, fc.jsonValue(), { maxKeys: 3 }),
  }),
);
const toolResultBlock = withExtras(
  fc.record(
    {
      type: fc.constant("tool_result"),
      tool_use_id: text,
      content: fc.oneof(text, fc.array(fc.oneof(textBlock, imageBlock, documentBlock, unknownBlock), { maxLength: 3 })),
      is_error: fc.boolean(),
    },
    { requiredKeys: ["type", "tool_use_id", "content"] },
  ),
);
const anyBlock = fc.oneof(
  textBlock,
  imageBlock,
  documentBlock,
  unknownBlock,
  thinkingBlock,
  redactedBlock,
  toolUseBlock,
  toolResultBlock,
);
const message = fc.record({
  role: fc.constantFrom("user", "assistant", "system"),
  content: fc.oneof(text, fc.array(anyBlock, { maxLength: 5 })),
}) as fc.Arbitrary<AnthropicMessage>;

describe("round-trip property", () => {
  test("any Anthropic history comes back deep-equal with nothing lost", () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 6 }), (history) => {
        const copy = structuredClone(history);
        const back = roundTripMessages(history);
        expect(back.value).toEqual(copy);
        expect(back.lossy).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
