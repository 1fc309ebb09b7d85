import { readClaudeCodeFixture } from "./claude-code-fixtures.js";
import { anthropicContentFromEvents, type Json, postStream } from "./gateway-harness.js";
import type { CacheCounts } from "./prefix-cache.js";
import type { ScriptedTurn } from "./scripted-turns.js";

/**
 * A Claude Code session of many turns, for the prompt-cache share: the same conversation as Claude Code sends it
 * and as a native client of each other API would send it, so that a caching upstream's share through Parley can
 * be set beside the share of the same session sent straight to it.
 *
 * Claude Code's requests start from its recorded first request (`test/fixtures/claude-code/2.1.332`), the prose the
 * fixture left out put back as filler of the recorded length (the system prompt and tools are then about 12,000
 * tokens, as in the real client); every turn re-sends the whole history with its one message breakpoint moved to
 * the last block of the last message, as Claude Code does, and the system blocks keep theirs. The model (a caching
 * upstream answering `sessionTurn(n)`) thinks, then calls Read, Bash or Edit, or every sixth turn answers in text;
 * the client sends the tool's output (0.5 to 6 KB of file text or test output) or the user's next request.
 *
 * A native client of another API builds the same conversation in that API's own shape, by hand, not through Parley:
 * the system blocks as its system prompt (Chat's system message, Responses' `instructions`), Claude Code's mid-
 * conversation system message where it stands, the tools as functions, and each answer appended as it came
 * (reasoning in the field it came in, Responses' output items as they are) followed by the tool's output. It sends
 * what such a client sends for caching: nothing on vLLM and DeepSeek, its session id as `prompt_cache_key` on
 * OpenAI (as Codex does).
 */

export const SESSION_ID = "00000000-0000-4000-8000-000000000000";

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the a file function return const value error test build module import export type parser token input line " +
  "when if then else keep every block order stream chunk message content tool result path column source target"
).split(" ");

function words(next: () => number, characters: number): string {
  let out = "";
  while (out.length < characters) out += `${out === "" ? "" : " "}${WORDS[Math.floor(next() * WORDS.length)]}`;
  return out.slice(0, characters);
}

/** What the model does on turn `index`: a tool call, or every sixth turn a text answer. */
export function sessionTurn(index: number): ScriptedTurn {
  const thought = `Turn ${index}: ${words(random(1_000 + index), 160 + (index % 7) * 40)}`;
  if (index % 6 === 5) return { thought, text: `Step ${Math.floor(index / 6) + 1} is done: the tests pass.` };
  const file = `/home/user/project/src/parser/part-${index}.ts`;
  const calls: Array<NonNullable<ScriptedTurn["call"]>> = [
    { name: "Read", args: { file_path: file } },
    {
      name: "Bash",
      args: { command: `npx vitest run test/part-${index}.test.ts`, description: "Run the part's tests" },
    },
    { name: "Edit", args: { file_path: file, old_string: `if (buffer) flush(${index});`, new_string: "flush();" } },
  ];
  return { thought, call: calls[index % calls.length]! };
}

/** The tool's output after turn `index`: 0.5 to 6 KB of numbered lines. */
export function toolOutput(index: number): string {
  const next = random(50_000 + index);
  const size = 500 + Math.floor(next() * 5_500);
  const lines: string[] = [];
  let length = 0;
  for (let line = 1; length < size; line++) {
    const text = `${String(line).padStart(5)}\t${words(next, 20 + Math.floor(next() * 60))}`;
    lines.push(text);
    length += text.length + 1;
  }
  return lines.join("\n");
}

/** The user's next request after the text answer of turn `index`. */
export function nextRequest(index: number): string {
  return `Good. Now the next part (${index}): the parser must keep the last token of every input.`;
}

const LEFT_OUT = / \[(\d+) more characters of Claude Code's text left out\]/g;

/** The recorded first request with its left-out prose back, as filler of the recorded length. */
function claudeCodeFirstRequest(): { headers: Record<string, string>; body: Json } {
  const fixture = readClaudeCodeFixture("2.1.332");
  if (fixture === undefined) throw new Error("test/fixtures/claude-code/2.1.332.first-request.json is missing");
  let seed = 7;
  const text = JSON.stringify(fixture.body).replace(LEFT_OUT, (_, count: string) =>
    JSON.stringify(` ${words(random(seed++), Number(count) - 1)}`).slice(1, -1),
  );
  return { headers: fixture.headers, body: JSON.parse(text) as Json };
}

/** One client of the session: its requests, and what it takes from each answer. */
export interface SessionClient {
  /** The API path it posts to. */
  path: string;
  headers: Record<string, string>;
  /** The next request. */
  body(): Json;
  /** Takes turn `index`'s answer (its events' data) into the history; returns its usage as the client reads it. */
  take(events: Array<Record<string, unknown>>, index: number): CacheCounts;
}

/** Claude Code, on the Messages API. */
export function claudeCodeClient(model: string): SessionClient {
  const first = claudeCodeFirstRequest();
  const history: Json[] = (first.body.messages as Json[]).map(withoutBreakpoints);
  return {
    path: "/v1/messages?beta=true",
    headers: first.headers,
    body: () => ({ ...first.body, model, messages: withLastBreakpoint(history) }),
    take(events, index) {
      const content = anthropicContentFromEvents(events);
      history.push({ role: "assistant", content });
      const call = content.find((block) => block.type === "tool_use");
      history.push({
        role: "user",
        content:
          call === undefined
            ? [{ type: "text", text: nextRequest(index) }]
            : [{ type: "tool_result", tool_use_id: call.id, content: toolOutput(index) }],
      });
      let usage: Json = {};
      for (const event of events) {
        if (event.type === "message_start") usage = { ...usage, ...((event.message as Json).usage as Json) };
        if (event.type === "message_delta") usage = { ...usage, ...(event.usage as Json) };
      }
      const read = Number(usage.cache_read_input_tokens ?? 0);
      const written = Number(usage.cache_creation_input_tokens ?? 0);
      return { prompt: Number(usage.input_tokens ?? 0) + read + written, read, written };
    },
  };
}

function withoutBreakpoints(message: Json): Json {
  if (!Array.isArray(message.content)) return message;
  return { ...message, content: message.content.map(({ cache_control: _, ...block }: Json) => block) };
}

/** The history with a breakpoint on the last block of the last message, the other messages as they are. */
function withLastBreakpoint(history: Json[]): Json[] {
  const last = history.at(-1)!;
  const content: Json[] = Array.isArray(last.content) ? last.content : [{ type: "text", text: last.content }];
  const marked = [...content.slice(0, -1), { ...content.at(-1), cache_control: { type: "ephemeral" } }];
  return [...history.slice(0, -1), { ...last, content: marked }];
}

/** The conversation's start as plain parts: the system prompt, and the messages' texts in order with their roles. */
function nativeStart(): { system: string; messages: Array<{ role: string; texts: string[] }>; tools: Json[] } {
  const { body } = claudeCodeFirstRequest();
  const system = (body.system as Json[]).map((block) => block.text as string).join("\n");
  const messages = (body.messages as Json[]).map((message) => ({
    role: message.role as string,
    texts:
      typeof message.content === "string"
        ? [message.content]
        : (message.content as Json[]).map((block) => block.text as string),
  }));
  return { system, messages, tools: body.tools as Json[] };
}

export interface NativeClientOptions {
  /** Sent as `prompt_cache_key` on every turn. */
  promptCacheKey?: string;
  /** The answer-size field: `max_completion_tokens` on api.openai.com. */
  maxTokensField?: "max_tokens" | "max_completion_tokens";
}

/** A native Chat Completions client with the same conversation. */
export function nativeChatClient(model: string, options: NativeClientOptions = {}): SessionClient {
  const start = nativeStart();
  const messages: Json[] = [
    { role: "system", content: start.system },
    ...start.messages.map((message) =>
      message.role === "system"
        ? { role: "system", content: message.texts.join("\n") }
        : { role: message.role, content: message.texts.map((text) => ({ type: "text", text })) },
    ),
  ];
  const tools = start.tools.map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
  }));
  return {
    path: "/v1/chat/completions",
    headers: {},
    body: () => ({
      model,
      messages,
      tools,
      [options.maxTokensField ?? "max_tokens"]: 32_000,
      stream: true,
      stream_options: { include_usage: true },
      ...(options.promptCacheKey === undefined ? {} : { prompt_cache_key: options.promptCacheKey }),
    }),
    take(events, index) {
      const message: Json = { role: "assistant", content: null };
      const calls: Json[] = [];
      let usage: Json = {};
      for (const event of events) {
        if (event.usage !== undefined && event.usage !== null) usage = event.usage as Json;
        const delta = ((event.choices as Json[] | undefined)?.[0]?.delta ?? {}) as Json;
        for (const field of ["content", "reasoning_content", "reasoning"]) {
          if (typeof delta[field] === "string") message[field] = `${message[field] ?? ""}${delta[field]}`;
        }
        for (const part of (delta.tool_calls ?? []) as Json[]) {
          const at = part.index as number;
          const fn = (part.function ?? {}) as Json;
          if (calls[at] === undefined)
            calls[at] = { id: part.id, type: "function", function: { name: fn.name, arguments: "" } };
          const target = calls[at]!.function as Json;
          target.arguments = `${target.arguments}${fn.arguments ?? ""}`;
        }
      }
      if (calls.length > 0) message.tool_calls = calls;
      messages.push(message);
      const call = calls[0];
      messages.push(
        call === undefined
          ? { role: "user", content: nextRequest(index) }
          : { role: "tool", tool_call_id: call.id, content: toolOutput(index) },
      );
      const details = (usage.prompt_tokens_details ?? {}) as Json;
      const read = Number(details.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0);
      return { prompt: Number(usage.prompt_tokens ?? 0), read, written: 0 };
    },
  };
}

/** A native Responses client (as Codex is) with the same conversation, stateless: `store: false`, reasoning sent back. */
export function nativeResponsesClient(model: string, options: NativeClientOptions = {}): SessionClient {
  const start = nativeStart();
  const input: Json[] = start.messages.map((message) => ({
    type: "message",
    role: message.role === "system" ? "developer" : message.role,
    content: message.texts.map((text) => ({ type: "input_text", text })),
  }));
  const tools = start.tools.map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description,
    parameters: tool.input_schema,
    strict: false,
  }));
  return {
    path: "/v1/responses",
    headers: {},
    body: () => ({
      model,
      instructions: start.system,
      input,
      tools,
      tool_choice: "auto",
      parallel_tool_calls: false,
      reasoning: { effort: "medium", summary: "auto" },
      store: false,
      stream: true,
      include: ["reasoning.encrypted_content"],
      ...(options.promptCacheKey === undefined ? {} : { prompt_cache_key: options.promptCacheKey }),
    }),
    take(events, index) {
      let usage: Json = {};
      let call: Json | undefined;
      for (const event of events) {
        if (event.type === "response.output_item.done") {
          const item = event.item as Json;
          input.push(item);
          if (item.type === "function_call") call = item;
        }
        if (event.type === "response.completed") usage = ((event.response as Json).usage ?? {}) as Json;
      }
      input.push(
        call === undefined
          ? { type: "message", role: "user", content: [{ type: "input_text", text: nextRequest(index) }] }
          : { type: "function_call_output", call_id: call.call_id, output: toolOutput(index) },
      );
      const read = Number(((usage.input_tokens_details ?? {}) as Json).cached_tokens ?? 0);
      return { prompt: Number(usage.input_tokens ?? 0), read, written: 0 };
    },
  };
}

/** Runs `turns` turns of `client` against `origin`; the usage of each turn as the client read it. */
export async function runSession(origin: string, client: SessionClient, turns: number): Promise<CacheCounts[]> {
  const seen: CacheCounts[] = [];
  for (let index = 0; index < turns; index++) {
    const reply = await postStream(`${origin}${client.path}`, client.body(), client.headers);
    if (reply.status !== 200) throw new Error(`turn ${index}: ${reply.status} ${reply.text.slice(0, 500)}`);
    seen.push(client.take(reply.data, index));
  }
  return seen;
}
