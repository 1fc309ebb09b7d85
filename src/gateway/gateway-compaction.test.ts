import { afterEach, describe, expect, it } from "vitest";
import { type Json, postJson, postStream, startTestGateway } from "../../test/support/gateway-harness.js";
import { checkResponsesStream } from "../../test/support/responses-stream.js";
import {
  anthropicFrames,
  openaiFrames,
  type ScriptedUpstream,
  startScriptedUpstream,
  type UpstreamKind,
} from "../../test/support/scripted-upstream.js";
import { decodeCompaction } from "../core/index.js";
import { SUMMARY_QUESTION } from "./exchange/compaction.js";
import type { RunningGateway } from "./server.js";

/**
 * Codex's remote compaction on any upstream (issue 31): a `compaction_trigger` input item, or
 * `POST /v1/responses/compact`, answered with exactly one `compaction` item. A Responses provider compacts itself;
 * for any other, Parley asks the routed model for a summary and seals it in its envelope, and a later request that
 * replays the item gives the provider the summary as text, never the envelope.
 */

const SUMMARY = "The user is fixing the parser in src/parse.ts; tests pass; next: the docs.";

const history: Json[] = [
  { type: "message", role: "developer", content: [{ type: "input_text", text: "You are a coding agent." }] },
  { type: "message", role: "user", content: [{ type: "input_text", text: "Fix the parser." }] },
  { type: "function_call", call_id: "call_1", name: "exec_command", arguments: '{"cmd":"npm test"}' },
  { type: "function_call_output", call_id: "call_1", output: "all tests pass" },
  { type: "message", role: "assistant", content: [{ type: "output_text", text: "Fixed." }] },
];

const tools: Json[] = [
  {
    type: "function",
    name: "exec_command",
    description: "runs a command",
    parameters: { type: "object", properties: { cmd: { type: "string" } } },
  },
];

function triggerRequest(stream: boolean): Json {
  return {
    model: "agent",
    stream,
    store: false,
    tools,
    input: [...history, { type: "compaction_trigger" }],
  };
}

/** The provider's answer holding the summary, streamed or whole, in its API. */
function summaryReply(kind: UpstreamKind, stream: boolean) {
  if (kind === "openai") {
    if (stream)
      return {
        kind: "sse" as const,
        frames: openaiFrames([
          { id: "c1", choices: [{ index: 0, delta: { role: "assistant", reasoning_content: "Let me sum up." } }] },
          { id: "c1", choices: [{ index: 0, delta: { content: SUMMARY.slice(0, 20) } }] },
          { id: "c1", choices: [{ index: 0, delta: { content: SUMMARY.slice(20) }, finish_reason: "stop" }] },
        ]),
      };
    return {
      kind: "json" as const,
      body: {
        id: "c1",
        object: "chat.completion",
        model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: SUMMARY }, finish_reason: "stop" }],
        usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
      },
    };
  }
  const message = {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-x",
    content: [{ type: "text", text: SUMMARY }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 120, output_tokens: 30 },
  };
  if (!stream) return { kind: "json" as const, body: message };
  return {
    kind: "sse" as const,
    frames: anthropicFrames(<Json[]>[
      { type: "message_start", message: { ...message, content: [], usage: { input_tokens: 120, output_tokens: 0 } } },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: SUMMARY } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 30 } },
      { type: "message_stop" },
    ]),
  };
}

let gateway: RunningGateway | undefined;
let upstream: ScriptedUpstream | undefined;

afterEach(async () => {
  await gateway?.close();
  await upstream?.close();
  gateway = undefined;
  upstream = undefined;
});

async function gatewayOn(kind: UpstreamKind): Promise<{ url: string; upstream: ScriptedUpstream }> {
  upstream = await startScriptedUpstream(kind);
  const type = kind === "openai" ? "openai" : kind;
  gateway = await startTestGateway({
    providers: { main: { upstream, type, ...(kind === "openai-responses" ? {} : { defaultModel: "m" }) } },
  });
  return { url: gateway.url, upstream };
}

/** The answer's output items, from a whole answer or a checked stream. */
async function compactionOutput(url: string, stream: boolean): Promise<Json[]> {
  if (!stream) {
    const reply = await postJson(`${url}/v1/responses`, triggerRequest(false));
    expect(reply.status).toBe(200);
    return (reply.body as Json).output;
  }
  const reply = await postStream(`${url}/v1/responses`, triggerRequest(true));
  expect(reply.status).toBe(200);
  const checked = checkResponsesStream(reply.text);
  expect(checked.last.status).toBe("completed");
  expect(checked.assembled.output).toEqual(checked.last.output);
  return checked.last.output as Json[];
}

describe.each([
  ["a Chat upstream", "openai" as const],
  ["an Anthropic upstream", "anthropic" as const],
])("compaction_trigger on %s: Parley compacts", (_name, kind) => {
  it.each([false, true])("stream %s: one compaction item, its envelope holding the model's summary", async (stream) => {
    const { url, upstream } = await gatewayOn(kind);
    upstream.enqueue(summaryReply(kind, stream));
    const output = await compactionOutput(url, stream);
    expect(output).toHaveLength(1);
    const item = output[0];
    expect(item.type).toBe("compaction");
    const compacted = decodeCompaction(item.encrypted_content);
    expect(compacted?.summary).toBe(SUMMARY);
    // Anthropic's API takes the client's model name as it is.
    const model = kind === "openai" ? "m" : "agent";
    expect(compacted?.origin).toMatchObject({ format: kind, provider: "main", model });

    // The provider was asked for a summary of the whole conversation, no tool to be called, no trigger in sight.
    const sent = upstream.requests[0]!;
    expect(sent.rawBody).not.toContain("compaction_trigger");
    expect(sent.rawBody).toContain("Fix the parser.");
    const body = sent.body as Json;
    const last = body.messages.at(-1);
    expect(JSON.stringify(last.content)).toContain(SUMMARY_QUESTION);
    if (kind === "openai") expect(body.tool_choice).toBe("none");
    else expect(body.tool_choice).toEqual({ type: "none" });
  });

  it("the replayed item reaches the provider as the summary's text, never the envelope", async () => {
    const { url, upstream } = await gatewayOn(kind);
    upstream.enqueue(summaryReply(kind, false));
    const [item] = await compactionOutput(url, false);
    upstream.enqueue(summaryReply(kind, false));
    const next = await postJson(`${url}/v1/responses`, {
      model: "agent",
      store: false,
      tools,
      input: [
        history[0],
        item,
        { type: "message", role: "user", content: [{ type: "input_text", text: "Now the docs." }] },
      ],
    });
    expect(next.status).toBe(200);
    const sent = upstream.requests[1]!;
    expect(sent.rawBody).not.toContain("parley.v1.");
    expect(sent.rawBody).not.toContain("compaction");
    expect(sent.rawBody).toContain(SUMMARY);
    const messages = (sent.body as Json).messages as Json[];
    const holding = messages.find((message) => JSON.stringify(message.content).includes(SUMMARY));
    expect(holding.role).toBe("user");
  });

  it("POST /v1/responses/compact answers one compaction item, whole", async () => {
    const { url, upstream } = await gatewayOn(kind);
    upstream.enqueue(summaryReply(kind, false));
    const reply = await postJson(`${url}/v1/responses/compact`, {
      model: "agent",
      input: history,
      instructions: "You are a coding agent.",
      tools,
    });
    expect(reply.status).toBe(200);
    // OpenAI's object for a compacted conversation (`CompactedResponse`), not a response.
    expect(reply.body).toMatchObject({ object: "response.compaction", id: expect.any(String) });
    expect(typeof (reply.body as Json).created_at).toBe("number");
    expect((reply.body as Json).usage).toMatchObject({ input_tokens: 120, output_tokens: 30 });
    const output = (reply.body as Json).output as Json[];
    expect(output.map((entry) => entry.type)).toEqual(["compaction"]);
    expect(decodeCompaction(output[0].encrypted_content)?.summary).toBe(SUMMARY);
    expect((upstream.requests[0]!.body as Json).stream).toBeFalsy();
  });
});

describe("compaction on a Responses upstream: the provider compacts", () => {
  const sealed = "gAAAAB-provider-compaction==";
  const compactionItem = { id: "cmp_1", type: "compaction", encrypted_content: sealed };
  const answer = {
    id: "resp_up",
    object: "response",
    created_at: 1,
    status: "completed",
    model: "gpt-x",
    output: [compactionItem],
    usage: { input_tokens: 100, output_tokens: 10, total_tokens: 110 },
  };

  it("the trigger goes on as Codex sent it, the provider's compaction item comes back as it made it", async () => {
    const { url, upstream } = await gatewayOn("openai-responses");
    upstream.enqueue({ kind: "json", body: answer });
    const reply = await postJson(`${url}/v1/responses`, triggerRequest(false));
    expect(reply.status).toBe(200);
    expect((reply.body as Json).output).toEqual([compactionItem]);
    const input = (upstream.requests[0]!.body as Json).input as Json[];
    expect(input.at(-1)).toEqual({ type: "compaction_trigger" });
    expect(JSON.stringify(input)).not.toContain(SUMMARY_QUESTION);
  });

  it("streamed, and replayed to its maker as it came", async () => {
    const { url, upstream } = await gatewayOn("openai-responses");
    const frames = [
      { type: "response.created", response: { ...answer, status: "in_progress", output: [] } },
      { type: "response.output_item.added", output_index: 0, item: compactionItem },
      { type: "response.output_item.done", output_index: 0, item: compactionItem },
      { type: "response.completed", response: answer },
    ].map((event, index) => `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`);
    upstream.enqueue({ kind: "sse", frames });
    const reply = await postStream(`${url}/v1/responses`, triggerRequest(true));
    const checked = checkResponsesStream(reply.text);
    expect(checked.last.output).toEqual([compactionItem]);

    upstream.enqueue({ kind: "json", body: { ...answer, output: [] } });
    await postJson(`${url}/v1/responses`, {
      model: "agent",
      store: false,
      input: [compactionItem, { type: "message", role: "user", content: "Go on." }],
    });
    const input = (upstream.requests[1]!.body as Json).input as Json[];
    expect(input[0]).toEqual(compactionItem);
  });

  it("POST /v1/responses/compact reaches its own /responses/compact as sent, its answer back as it made it", async () => {
    const { url, upstream } = await gatewayOn("openai-responses");
    const compacted = {
      id: "resp_compact_up",
      object: "response.compaction",
      created_at: 7,
      output: [
        { id: "msg_kept", type: "message", role: "user", content: [{ type: "input_text", text: "Fix the parser." }] },
        compactionItem,
      ],
      usage: { input_tokens: 100, output_tokens: 10, total_tokens: 110 },
    };
    upstream.enqueue({ kind: "json", body: compacted });
    const body = { model: "agent", input: history, instructions: "You are a coding agent.", prompt_cache_key: "k-1" };
    const reply = await postJson(`${url}/v1/responses/compact`, body);
    expect(reply.status).toBe(200);
    // As the provider made it: its object, its id, no model added.
    expect(reply.body).toEqual(compacted);
    const sent = upstream.requests[0]!;
    expect(sent.path).toBe("/v1/responses/compact");
    // The client's body, its model the provider's: no trigger, nothing asked to be kept or sealed.
    const { model: _model, ...rest } = body;
    expect(sent.body).toEqual({ ...rest, model: "agent" });
  });

  it("a compaction item it made, replayed, goes back to it as it made it", async () => {
    const { url, upstream } = await gatewayOn("openai-responses");
    upstream.enqueue({ kind: "json", body: { ...answer, output: [] } });
    const reply = await postJson(`${url}/v1/responses/compact`, {
      model: "agent",
      input: [compactionItem, { type: "message", role: "user", content: "Compact again." }],
    });
    expect(reply.status).toBe(200);
    expect(((upstream.requests[0]!.body as Json).input as Json[])[0]).toEqual(compactionItem);
  });
});

describe("a Responses provider configured not to compact (`compacts: false`): Parley compacts", () => {
  async function gatewayNotCompacting(): Promise<{ url: string; upstream: ScriptedUpstream }> {
    upstream = await startScriptedUpstream("openai-responses");
    gateway = await startTestGateway({ providers: { main: { upstream, type: "openai-responses", compacts: false } } });
    return { url: gateway.url, upstream };
  }

  const summaryAnswer = {
    id: "resp_summary",
    object: "response",
    created_at: 1,
    status: "completed",
    model: "gpt-x",
    output: [
      {
        id: "msg_summary",
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: SUMMARY, annotations: [] }],
      },
    ],
    usage: { input_tokens: 120, output_tokens: 30, total_tokens: 150 },
  };

  it.each([
    ["a compaction_trigger", "/v1/responses"],
    ["POST /v1/responses/compact", "/v1/responses/compact"],
  ])("%s: the provider is asked for a summary, never sent the trigger", async (_name, path) => {
    const { url, upstream } = await gatewayNotCompacting();
    upstream.enqueue({ kind: "json", body: summaryAnswer });
    const body = path.endsWith("/compact") ? { model: "agent", input: history, tools } : triggerRequest(false);
    const reply = await postJson(`${url}${path}`, body);
    expect(reply.status).toBe(200);
    const output = (reply.body as Json).output as Json[];
    expect(output.map((item) => item.type)).toEqual(["compaction"]);
    expect(decodeCompaction(output[0].encrypted_content)?.summary).toBe(SUMMARY);
    expect((reply.body as Json).object).toBe(path.endsWith("/compact") ? "response.compaction" : "response");
    const sent = upstream.requests[0]!;
    expect(sent.path).toBe("/v1/responses");
    expect(sent.rawBody).not.toContain("compaction_trigger");
    expect(sent.rawBody).toContain(SUMMARY_QUESTION);

    // Replayed, the item reaches the provider as the summary's text.
    upstream.enqueue({ kind: "json", body: summaryAnswer });
    const next = await postJson(`${url}/v1/responses`, {
      model: "agent",
      store: false,
      input: [output[0], { type: "message", role: "user", content: "Go on." }],
    });
    expect(next.status).toBe(200);
    expect(upstream.requests[1]!.rawBody).toContain(SUMMARY);
    expect(upstream.requests[1]!.rawBody).not.toContain("parley.v1.");
  });
});
