import type { Message, StreamEvent } from "../../core/index.js";

/**
 * The history of the bug the store exists to prevent: a store keyed by per-call index merged these turns
 * into one user message on reload and lost the tool calls. Thinking-only assistant message included.
 */
export function regressionHistory(): Message[] {
  return [
    { role: "user", parts: [{ type: "text", text: "List the files, then read package.json." }], textShorthand: true },
    {
      role: "assistant",
      parts: [
        { type: "thinking", thinking: "The user wants a listing first.", signature: "EqQBCgIYAhIM1gbcDa9GJwZA" },
        { type: "text", text: "Sure — I'll look." },
      ],
    },
    {
      role: "user",
      parts: [
        {
          type: "text",
          text: "Go ahead, use the tools.",
          extra: { anthropic: { cache_control: { type: "ephemeral" } } },
        },
      ],
    },
    {
      role: "assistant",
      parts: [
        {
          type: "thinking",
          thinking: "Two calls in parallel.\nNo dependency between them.",
          signature: "ErUBCkYIBhgCIkB",
        },
        { type: "text", text: "Running both:" },
        { type: "tool_call", id: "toolu_01A", name: "list_files", input: { path: "." } },
        { type: "tool_call", id: "toolu_01B", name: "read_file", input: { path: "package.json", lines: [1, 40] } },
      ],
      extra: { anthropic: { id: "msg_01XYZ" } },
    },
    {
      role: "user",
      parts: [
        { type: "tool_result", toolCallId: "toolu_01A", content: "package.json\nsrc\nREADME.md" },
        {
          type: "tool_result",
          toolCallId: "toolu_01B",
          content: [{ type: "text", text: '{ "name": "demo", "emoji": "🦜", "nul": "\u0000" }' }],
          isError: false,
        },
      ],
    },
    {
      role: "assistant",
      parts: [{ type: "thinking", thinking: "Both succeeded; nothing more to say yet.", signature: "EpYDCkYIBxgC" }],
    },
  ];
}

/** An answer as a decoder emits it: thinking, its signature, text, and a tool call in argument fragments. */
export function answerEvents(): StreamEvent[] {
  return [
    { type: "message-start", id: "msg_stream", model: "test-model" },
    { type: "block-start", index: 0, part: { type: "thinking", thinking: "" } },
    { type: "thinking-delta", index: 0, thinking: "Let me " },
    { type: "thinking-delta", index: 0, thinking: "check." },
    { type: "signature", index: 0, signature: "EqQBCgIYAh" },
    { type: "block-end", index: 0 },
    { type: "block-start", index: 1, part: { type: "text", text: "" } },
    { type: "text-delta", index: 1, text: "Reading " },
    { type: "text-delta", index: 1, text: "it now." },
    { type: "block-end", index: 1 },
    { type: "block-start", index: 2, part: { type: "tool_call", id: "toolu_09", name: "read_file", input: {} } },
    { type: "tool-input-delta", index: 2, partialJson: '{"path":' },
    { type: "tool-input-delta", index: 2, partialJson: '"a.txt"}' },
    { type: "block-end", index: 2 },
    {
      type: "finish",
      stopReason: { unified: "tool_use", raw: "tool_use" },
      usage: { inputTokens: 10, outputTokens: 20 },
    },
  ];
}
