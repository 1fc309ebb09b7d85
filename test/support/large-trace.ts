import type { TraceRecord } from "../../src/store/traces/trace-store.js";

export interface LargeTraceOptions {
  id: string;
  /** Tool turns in the history: each an assistant message with a tool call, and its result. */
  turns: number;
  /** Characters of each tool result. */
  outputCharacters: number;
  conversationId?: string;
  createdAt?: string;
  /** Text put in the first tool result (a key the view must not show). */
  secret?: string;
}

/**
 * The trace of a long Claude Code session's turn on an OpenAI-compatible upstream, as the gateway records it: the
 * client's Messages request with its whole history of tool calls and results, the same history sent upstream in
 * Chat Completions form, the upstream's stream and the client's. 33,500 turns of 300-character results make a
 * ~38 MB trace whose view took the event loop ~3-5 s.
 */
export function largeTrace(options: LargeTraceOptions): TraceRecord {
  const line = `${"x".repeat(59)}\n`;
  const anthropic: unknown[] = [{ role: "user", content: "Refactor the parser." }];
  const chat: unknown[] = [
    { role: "system", content: "You are Claude Code, a coding agent." },
    { role: "user", content: "Refactor the parser." },
  ];
  for (let turn = 0; turn < options.turns; turn++) {
    const secret = turn === 0 && options.secret !== undefined ? ` ${options.secret}` : "";
    const output = `${turn}:${secret} ${line.repeat(Math.ceil(options.outputCharacters / line.length))}`;
    const input = { file_path: `src/file-${turn}.ts` };
    anthropic.push({
      role: "assistant",
      content: [
        { type: "text", text: `Step ${turn}: reading the next file.` },
        { type: "tool_use", id: `call_${turn}`, name: "Read", input },
      ],
    });
    anthropic.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `call_${turn}`, content: output }] });
    chat.push({
      role: "assistant",
      content: `Step ${turn}: reading the next file.`,
      tool_calls: [
        { id: `call_${turn}`, type: "function", function: { name: "Read", arguments: JSON.stringify(input) } },
      ],
    });
    chat.push({ role: "tool", tool_call_id: `call_${turn}`, content: output });
  }
  anthropic.push({ role: "user", content: "Now summarise." });
  chat.push({ role: "user", content: "Now summarise." });
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "chatcmpl-large", object: "chat.completion.chunk", created: 1, model: "upstream-model", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const upstreamResponse = [
    chunk({ role: "assistant", content: "" }),
    ...Array.from({ length: 50 }, (_, index) => chunk({ content: `Summary part ${index}. ` })),
    chunk({}, "stop"),
    "data: [DONE]\n\n",
  ].join("");
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const clientResponse = [
    event("message_start", {
      message: { id: "msg_large", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [] },
    }),
    event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    ...Array.from({ length: 50 }, (_, index) =>
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text: `Summary part ${index}. ` } }),
    ),
    event("content_block_stop", { index: 0 }),
    event("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 100 } }),
    event("message_stop", {}),
  ].join("");
  const trace: TraceRecord = {
    id: options.id,
    requestId: `req_${options.id}`,
    createdAt: options.createdAt ?? new Date().toISOString(),
    route: "POST /v1/messages",
    provider: "nim",
    clientModel: "claude-sonnet-4-5",
    upstreamModel: "upstream-model",
    status: 200,
    durationMs: 1200,
    stream: true,
    clientRequest: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 4096, stream: true, messages: anthropic }),
    upstreamRequest: JSON.stringify({ model: "upstream-model", stream: true, messages: chat }),
    upstreamResponse,
    clientResponse,
    lossy: [],
    repair: [],
    timings: { totalMs: 1200 },
  };
  if (options.conversationId !== undefined) trace.conversationId = options.conversationId;
  return trace;
}
