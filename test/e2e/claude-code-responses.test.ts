import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { decodeOriginSignature } from "../../src/core/index.js";
import type { RunningGateway } from "../../src/gateway/server.js";
import { type ClaudeCodeRun, ensureClaudeCode, runClaudeCode } from "../support/claude-code.js";
import { startTestGateway } from "../support/gateway-harness.js";
import { type RecordedRequest, type ScriptedUpstream, startScriptedUpstream } from "../support/scripted-upstream.js";

/**
 * Claude Code (installed on demand into a cache folder) run headless against the gateway, with a scripted provider
 * that speaks the OpenAI Responses API (`type: openai-responses`): it reasons, sealing its reasoning as OpenAI does,
 * asks Claude Code to run `echo parley-e2e`, then answers in text. Its reasoning must come back to it as the item it
 * made, its encrypted content unmodified.
 */

type Json = Record<string, unknown>;

const REASONING = {
  id: "rs_parley_cc_1",
  type: "reasoning",
  summary: [
    { type: "summary_text", text: "**Running the command**\n\nThe user asks for a shell command; Bash runs it." },
  ],
  encrypted_content: "gAAAAB-parley-sealed-reasoning-of-turn-1==",
};
const CALL = {
  id: "fc_parley_cc_1",
  type: "function_call",
  status: "completed",
  call_id: "call_parley_cc_1",
  name: "Bash",
  arguments: JSON.stringify({ command: "echo parley-e2e", description: "Print the end-to-end marker" }),
};
const MESSAGE = {
  id: "msg_parley_cc_2",
  type: "message",
  status: "completed",
  role: "assistant",
  content: [{ type: "output_text", text: "It printed parley-e2e.", annotations: [] }],
};

/** A Responses stream for these output items, as OpenAI sends it: each item added, filled and done in order. */
function responseFrames(id: string, items: Json[]): string[] {
  const events: Json[] = [];
  const response = (status: string, output: Json[]) => ({
    id,
    object: "response",
    created_at: 1,
    status,
    model: "gpt-5-scripted",
    output,
    usage: status === "completed" ? { input_tokens: 900, output_tokens: 40, total_tokens: 940 } : null,
  });
  events.push({ type: "response.created", response: response("in_progress", []) });
  items.forEach((item, index) => {
    const common = { item_id: item.id, output_index: index };
    if (item.type === "reasoning") {
      events.push({ type: "response.output_item.added", output_index: index, item: { ...item, summary: [] } });
      const text = (item.summary as Array<{ text: string }>)[0]!.text;
      events.push({
        type: "response.reasoning_summary_part.added",
        ...common,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      });
      events.push({
        type: "response.reasoning_summary_text.delta",
        ...common,
        summary_index: 0,
        delta: text.slice(0, 12),
      });
      events.push({
        type: "response.reasoning_summary_text.delta",
        ...common,
        summary_index: 0,
        delta: text.slice(12),
      });
      events.push({ type: "response.reasoning_summary_text.done", ...common, summary_index: 0, text });
    } else if (item.type === "function_call") {
      events.push({
        type: "response.output_item.added",
        output_index: index,
        item: { ...item, arguments: "", status: "in_progress" },
      });
      events.push({ type: "response.function_call_arguments.delta", ...common, delta: item.arguments });
      events.push({ type: "response.function_call_arguments.done", ...common, arguments: item.arguments });
    } else {
      const text = ((item.content as Json[])[0] as { text: string }).text;
      events.push({
        type: "response.output_item.added",
        output_index: index,
        item: { ...item, content: [], status: "in_progress" },
      });
      events.push({
        type: "response.content_part.added",
        ...common,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      });
      events.push({ type: "response.output_text.delta", ...common, content_index: 0, delta: text, logprobs: [] });
      events.push({ type: "response.output_text.done", ...common, content_index: 0, text, logprobs: [] });
      events.push({
        type: "response.content_part.done",
        ...common,
        content_index: 0,
        part: (item.content as Json[])[0],
      });
    }
    events.push({ type: "response.output_item.done", output_index: index, item });
  });
  events.push({ type: "response.completed", response: response("completed", items) });
  return events.map((event, sequence) => {
    const body = { ...event, sequence_number: sequence };
    return `event: ${event.type as string}\ndata: ${JSON.stringify(body)}\n\n`;
  });
}

function carriesOutput(request: RecordedRequest): boolean {
  const input = ((request.body as { input?: Json[] } | undefined)?.input ?? []) as Json[];
  return input.some((item) => item.type === "function_call_output" && String(item.output).includes("parley-e2e"));
}

let run: ClaudeCodeRun;
let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  const binary = await ensureClaudeCode();
  upstream = await startScriptedUpstream("openai-responses");
  upstream.fallback = (request) => ({
    kind: "sse",
    frames: carriesOutput(request)
      ? responseFrames("resp_cc_2", [MESSAGE])
      : responseFrames("resp_cc_1", [REASONING, CALL]),
  });
  gateway = await startTestGateway({
    providers: { openai: { upstream, type: "openai-responses" } },
    routes: [{ match: "claude-*", provider: "openai", model: "gpt-5-scripted" }],
  });
  run = await runClaudeCode({
    binary,
    baseUrl: gateway.url,
    prompt: "Run the shell command `echo parley-e2e` and tell me what it printed.",
  });
}, 20 * 60_000);

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe("Claude Code on a Responses provider, through the gateway", () => {
  test("runs the provider's Bash call, sends the result back and completes the turn", () => {
    const context = `exit ${run.code}; stderr:\n${run.stderr.slice(-2_000)}\nstdout tail:\n${run.stdout.slice(-2_000)}`;
    expect(run.code, context).toBe(0);
    expect(run.result, context).toMatchObject({ type: "result", subtype: "success", is_error: false });
    expect(String(run.result?.result)).toContain("parley-e2e");
    // Claude Code saw the reasoning as a thinking block, signed with the origin envelope.
    const thinking = run.events
      .filter((event) => event.type === "assistant")
      .flatMap((event) => ((event.message as { content?: Json[] }).content ?? []) as Json[])
      .find((block) => block.type === "thinking");
    expect(thinking?.thinking).toBe(REASONING.summary[0]!.text);
  });

  test("the provider got its reasoning item back as it made it, before its call and the call's output", () => {
    const withOutput = upstream.requests.filter(carriesOutput);
    expect(withOutput.length).toBeGreaterThanOrEqual(1);
    const body = withOutput[0]!.body as Json;
    const input = body.input as Json[];
    const at = input.findIndex((item) => item.type === "reasoning");
    expect(input[at]).toEqual({
      id: REASONING.id,
      type: "reasoning",
      summary: REASONING.summary,
      encrypted_content: REASONING.encrypted_content,
    });
    expect(input[at + 1]).toEqual({
      type: "function_call",
      call_id: CALL.call_id,
      name: "Bash",
      arguments: CALL.arguments,
    });
    expect(input[at + 2]).toMatchObject({ type: "function_call_output", call_id: CALL.call_id });
    expect(String(input[at + 2]!.output)).toContain("parley-e2e");
    // Parley keeps the conversation: the provider is asked to keep nothing, and to seal its reasoning.
    expect(body).toMatchObject({ store: false, include: ["reasoning.encrypted_content"], model: "gpt-5-scripted" });
    // Claude Code's own system prompt went as instructions or a system item, never an Anthropic field.
    expect(JSON.stringify(body)).not.toContain("cache_control");
    for (const request of upstream.requests) expect((request.body as Json).model).toBe("gpt-5-scripted");
  });

  test("the envelope Claude Code kept names the provider and seals its content", () => {
    const thinking = run.events
      .filter((event) => event.type === "assistant")
      .flatMap((event) => ((event.message as { content?: Json[] }).content ?? []) as Json[])
      .find((block) => block.type === "thinking");
    expect(decodeOriginSignature(thinking?.signature as string)).toMatchObject({
      format: "responses",
      provider: "openai",
      id: REASONING.id,
      sealed: REASONING.encrypted_content,
    });
  });
});
