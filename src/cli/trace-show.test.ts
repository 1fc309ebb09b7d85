import { describe, expect, test } from "vitest";
import type { StreamEvent } from "../core/index.js";
import type { FormatAdapter } from "../formats/adapter.js";
import { formatAdapter } from "../formats/registry.js";
import type { TraceRecord } from "../store/traces/trace-store.js";
import { accumulate } from "../stream/accumulate.js";
import { formatTrace } from "./trace-show.js";

/**
 * `parley trace show` reads every body by its format's view, as the inspector does: whatever the client's API and
 * the upstream's, the compact view names the model, the messages and tools asked with, and the answer's thinking,
 * text and tool calls, streamed or whole.
 */

const anthropic = formatAdapter("anthropic");
const chat = formatAdapter("openai");
const responses = formatAdapter("responses");

/** One turn as a client of any API asks it (read from its Anthropic form, written in each API's). */
const asked = anthropic.client.readRequest({
  model: "claude-sonnet-4-5",
  max_tokens: 1024,
  system: "You run commands for the user.",
  messages: [{ role: "user", content: "List the files here." }],
  tools: [{ name: "Bash", description: "Runs a command", input_schema: { type: "object" } }],
}).value;

/** Its answer: thinking, text, a tool call. */
const events: StreamEvent[] = [
  { type: "message-start", id: "msg_1", model: "deepseek-chat" },
  { type: "block-start", index: 0, part: { type: "thinking", thinking: "" } },
  { type: "thinking-delta", index: 0, thinking: "The user wants the files listed." },
  { type: "block-end", index: 0 },
  { type: "block-start", index: 1, part: { type: "text", text: "" } },
  { type: "text-delta", index: 1, text: "Listing them." },
  { type: "block-end", index: 1 },
  { type: "block-start", index: 2, part: { type: "tool_call", id: "call_1", name: "Bash", input: {} } },
  { type: "tool-input-delta", index: 2, partialJson: '{"command":"ls"}' },
  { type: "block-end", index: 2 },
  { type: "finish", stopReason: { unified: "tool_use", raw: "tool_use" }, usage: { inputTokens: 20, outputTokens: 9 } },
];

function request(format: FormatAdapter, model: string): string {
  return JSON.stringify(format.upstream.encodeRequest({ ...asked, model }).value);
}

function answer(format: FormatAdapter, stream: boolean): string {
  if (!stream) return JSON.stringify(format.client.encodeResponse(accumulate(events)).value);
  const encoder = format.client.streamEncoder({});
  return events.map((event) => encoder.encode(event)).join("") + encoder.end();
}

/** A trace as the gateway records one: a client of `client`'s API before a provider of `upstream`'s. */
function exchange(client: FormatAdapter, upstream: FormatAdapter, stream: boolean): TraceRecord {
  const route = client.client.routes.find((known) => known.kind === "answer")!;
  return {
    id: "tr_1",
    requestId: "req_1",
    createdAt: "2026-03-01T12:00:00.000Z",
    route: `${route.method} ${route.path}`,
    provider: "deepseek",
    clientModel: "claude-sonnet-4-5",
    upstreamModel: "deepseek-chat",
    status: 200,
    stream,
    clientRequest: request(client, "claude-sonnet-4-5"),
    upstreamRequest: request(upstream, "deepseek-chat"),
    upstreamResponse: answer(upstream, stream),
    clientResponse: answer(client, stream),
    lossy: [{ code: "reasoning-interleaving-flattened", message: "one reasoning field", path: "messages[1]" }],
    repair: [],
    timings: {},
  };
}

/** What the compact view says of each body, whichever API wrote it. */
function expectReadable(shown: string, stream: boolean): void {
  expect(shown).not.toContain("(none)");
  expect(shown).toMatch(
    /^client request\s+[\d,]+ bytes, model claude-sonnet-4-5, 1 messages, 1 tools, system 30 chars$/m,
  );
  expect(shown).toMatch(
    /^upstream request\s+[\d,]+ bytes, model deepseek-chat, 1 messages, 1 tools, system 30 chars$/m,
  );
  expect(shown.match(/^ {2}last user: List the files here\.$/gm)).toHaveLength(2);
  // A whole answer names its model; a stream is shown as the events it adds up to.
  const shape = stream ? "event stream of \\d+ events" : "JSON, model \\S+";
  expect(shown).toMatch(new RegExp(`^upstream response\\s+[\\d,]+ bytes, ${shape}$`, "m"));
  expect(shown).toMatch(new RegExp(`^client response\\s+[\\d,]+ bytes, ${shape}$`, "m"));
  // Both answers, block by block: the thinking, the text, the tool call.
  expect(shown.match(/^ {2}thinking( \(\w+\))?: The user wants the files listed\.$/gm)).toHaveLength(2);
  expect(shown.match(/^ {2}text: Listing them\.$/gm)).toHaveLength(2);
  expect(shown.match(/^ {2}tool call Bash \(\S+\): \{ "command": "ls" \}$/gm)).toHaveLength(2);
  expect(shown).toContain("lossy (1)\n  - reasoning-interleaving-flattened at messages[1]: one reasoning field");
}

describe("parley trace show reads every API's bodies by its view", () => {
  test("an Anthropic client before a Chat Completions upstream", () => {
    for (const stream of [true, false]) expectReadable(formatTrace(exchange(anthropic, chat, stream)), stream);
  });

  test("the prompt cache's figures, and a switch of model within the conversation", () => {
    const shown = formatTrace({
      ...exchange(anthropic, chat, true),
      inputTokens: 200,
      cacheReadTokens: 800,
      cacheWriteTokens: 0,
      outputTokens: 7,
      switchedFrom: { provider: "claude", model: "claude-sonnet-4-5" },
    });
    expect(shown).toContain("tokens 200 in, 800 cached, 0 written, 7 out");
    expect(shown).toContain("model switched from claude claude-sonnet-4-5: the provider's cache was empty");
  });

  test("a Chat Completions client before an Anthropic upstream", () => {
    for (const stream of [true, false]) expectReadable(formatTrace(exchange(chat, anthropic, stream)), stream);
  });

  test("a Responses client before a Chat Completions upstream, and an Anthropic client before a Responses one", () => {
    for (const stream of [true, false]) {
      expectReadable(formatTrace(exchange(responses, chat, stream)), stream);
      expectReadable(formatTrace(exchange(anthropic, responses, stream)), stream);
    }
  });
});

describe("what trace show prints holds no key the stored bodies kept apart", () => {
  test("a key split across two stream deltas is redacted once the view puts the text together", () => {
    const split: StreamEvent[] = [
      { type: "message-start", id: "msg_1", model: "m" },
      { type: "block-start", index: 0, part: { type: "text", text: "" } },
      { type: "text-delta", index: 0, text: "Your key: sk-pro" },
      { type: "text-delta", index: 0, text: "j-Zq81Lm29Xk44Tb77" },
      { type: "block-end", index: 0 },
      {
        type: "finish",
        stopReason: { unified: "end_turn", raw: "end_turn" },
        usage: { inputTokens: 2, outputTokens: 2 },
      },
    ];
    const encoder = anthropic.client.streamEncoder({});
    const trace = { ...exchange(anthropic, anthropic, true) };
    trace.clientResponse = split.map((event) => encoder.encode(event)).join("") + encoder.end();
    trace.upstreamResponse = trace.clientResponse;
    const shown = formatTrace(trace);
    expect(shown).toContain("Your key: sk-");
    expect(shown).not.toContain("proj-Zq81Lm29Xk44Tb77");
  });
});
