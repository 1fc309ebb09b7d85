import type { RunningGateway } from "../../src/gateway/server.js";
import type { TraceSummary } from "../../src/store/traces/trace-store.js";
import { postStream, type StreamReply } from "./gateway-harness.js";
import { openaiFrames, type ScriptedUpstream } from "./scripted-upstream.js";

/**
 * A scripted session shaped as Claude Code drives one (streamed Messages requests, the whole history resent each
 * turn, signed thinking and tool calls in it, tool results, one that failed, one tool call the user interrupted)
 * against a gateway whose upstream is an OpenAI-compatible reasoning server. Its third exchange carries both a
 * repair (the interrupted call gets a result) and a loss (the failed result's error flag, which Chat Completions
 * has no field for).
 */

export const SESSION_MODEL = "claude-sonnet-4-5";

const tools = [
  {
    name: "Bash",
    description: "Runs a shell command.",
    input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
  {
    name: "Read",
    description: "Reads a file.",
    input_schema: { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] },
  },
];

const system = [
  { type: "text", text: "You are Claude Code, a coding agent." },
  { type: "text", text: "Work in the current project.", cache_control: { type: "ephemeral" } },
];

const chunk = (delta: object, finish: string | null = null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1,
  model: "deepseek-reasoner",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

const toolCallFrames = (thinking: string, id: string, command: string) =>
  openaiFrames([
    chunk({ role: "assistant", reasoning_content: thinking }),
    chunk({ tool_calls: [{ index: 0, id, type: "function", function: { name: "Bash", arguments: "" } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ command }) } }] }),
    { ...chunk({}, "tool_calls"), usage: { prompt_tokens: 1200, completion_tokens: 40, total_tokens: 1240 } },
  ]);

const textFrames = (text: string) =>
  openaiFrames([
    chunk({ role: "assistant", content: text.slice(0, 12) }),
    chunk({ content: text.slice(12) }),
    { ...chunk({}, "stop"), usage: { prompt_tokens: 1500, completion_tokens: 20, total_tokens: 1520 } },
  ]);

const thinking = (text: string) => ({ type: "thinking", thinking: text, signature: `sig-${text.length}` });

/** The three requests' histories, each the one before plus the answer and the user's next message. */
function histories(): unknown[][] {
  const first = [{ role: "user", content: "List the files, then run the tests." }];
  const second = [
    ...first,
    {
      role: "assistant",
      content: [
        thinking("The user wants the files first."),
        { type: "tool_use", id: "call_1", name: "Bash", input: { command: "ls" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "package.json\nsrc\ntest" }] },
  ];
  const third = [
    ...second,
    {
      role: "assistant",
      content: [
        thinking("Now the tests."),
        { type: "tool_use", id: "call_2", name: "Bash", input: { command: "npm test" } },
      ],
    },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "call_2",
          content: "1 failing: parses <script>alert(1)</script>",
          is_error: true,
        },
      ],
    },
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "call_3", name: "Read", input: { file_path: "src/parse.ts" } }],
    },
    // The user pressed Esc while Read ran and typed instead: call_3 has no result.
    { role: "user", content: [{ type: "text", text: "Stop reading, just tell me what failed." }] },
  ];
  return [first, second, third];
}

export interface SessionOptions {
  /** The key clients send. */
  key: string;
  /** Waits this long between exchanges and between streamed frames (the list is watched while it runs). */
  pauseMs?: number;
}

/** Runs the session's three exchanges, in order; returns the replies. */
export async function runClaudeCodeLikeSession(
  gateway: RunningGateway,
  upstream: ScriptedUpstream,
  options: SessionOptions,
): Promise<StreamReply[]> {
  const pause = options.pauseMs ?? 0;
  upstream.enqueue(
    { kind: "sse", frames: toolCallFrames("The user wants the files first.", "call_1", "ls"), frameDelayMs: pause / 4 },
    { kind: "sse", frames: toolCallFrames("Now the tests.", "call_2", "npm test"), frameDelayMs: pause / 4 },
    {
      kind: "sse",
      frames: textFrames("The failing test is the parser's: it chokes on a script tag."),
      frameDelayMs: pause / 4,
    },
  );
  const replies: StreamReply[] = [];
  for (const messages of histories()) {
    const reply = await postStream(
      `${gateway.url}/v1/messages`,
      {
        model: SESSION_MODEL,
        max_tokens: 4096,
        stream: true,
        system,
        tools,
        thinking: { type: "enabled", budget_tokens: 2048 },
        messages,
      },
      {
        "x-api-key": options.key,
        "anthropic-version": "2023-06-01",
        "user-agent": "claude-cli/2.1.330 (external, cli)",
      },
    );
    if (reply.status !== 200) throw new Error(`session request answered ${reply.status}: ${reply.text}`);
    replies.push(reply);
    if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
  }
  return replies;
}

/** The trace of a reply once the background writer has stored it. */
export async function traceOf(
  gateway: RunningGateway,
  reply: { headers: StreamReply["headers"] },
): Promise<TraceSummary> {
  const requestId = String(reply.headers["request-id"] ?? reply.headers["x-request-id"]);
  for (let attempt = 0; attempt < 200; attempt++) {
    const { traces } = await gateway.state.store!.traces.list({ limit: 20 });
    const found = traces.find((trace) => trace.requestId === requestId);
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no trace recorded for request ${requestId}`);
}
