import { afterEach, describe, expect, it } from "vitest";
import { type Json, postJson, postStream, startTestGateway } from "../../test/support/gateway-harness.js";
import { checkResponsesStream } from "../../test/support/responses-stream.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import { decodeOriginSignature } from "../core/index.js";
import type { RunningGateway } from "./server.js";

/**
 * A Responses client on a Responses provider gets the provider's reasoning items as it made them (issue 31,
 * invariant 14), as an Anthropic client on Anthropic does (invariant 8), and they still go back only to their maker:
 * with several Responses providers, each one's reasoning is wrapped in Parley's envelope naming it.
 */

const SEALED = "gAAAAB-sealed-by-the-provider-itself==";
const reasoningItem = {
  id: "rs_1",
  type: "reasoning",
  summary: [{ type: "summary_text", text: "Adding up." }],
  encrypted_content: SEALED,
};
const answer = {
  id: "resp_up",
  object: "response",
  created_at: 1,
  status: "completed",
  model: "gpt-x",
  output: [
    reasoningItem,
    {
      id: "msg_1",
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "19", annotations: [] }],
    },
  ],
  usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
};

function streamFrames(): string[] {
  const events: Json[] = [
    { type: "response.created", response: { ...answer, status: "in_progress", output: [] } },
    { type: "response.output_item.added", output_index: 0, item: { ...reasoningItem, summary: [] } },
    {
      type: "response.reasoning_summary_text.delta",
      item_id: "rs_1",
      output_index: 0,
      summary_index: 0,
      delta: "Adding up.",
    },
    { type: "response.output_item.done", output_index: 0, item: reasoningItem },
    { type: "response.output_item.added", output_index: 1, item: { ...answer.output[1], content: [] } },
    {
      type: "response.output_text.delta",
      item_id: "msg_1",
      output_index: 1,
      content_index: 0,
      delta: "19",
    },
    { type: "response.output_item.done", output_index: 1, item: answer.output[1] },
    { type: "response.completed", response: answer },
  ];
  return events.map((event, index) => {
    const data = JSON.stringify({ ...event, sequence_number: index });
    return `event: ${event.type}\ndata: ${data}\n\n`;
  });
}

let gateway: RunningGateway | undefined;
const upstreams: ScriptedUpstream[] = [];

afterEach(async () => {
  await gateway?.close();
  for (const upstream of upstreams.splice(0)) await upstream.close();
  gateway = undefined;
});

async function gatewayWith(names: string[]): Promise<{ url: string; upstream: Record<string, ScriptedUpstream> }> {
  const upstream: Record<string, ScriptedUpstream> = {};
  for (const name of names) {
    upstream[name] = await startScriptedUpstream("openai-responses");
    upstreams.push(upstream[name]);
  }
  gateway = await startTestGateway({
    providers: Object.fromEntries(names.map((name) => [name, { upstream: upstream[name]!, type: "openai-responses" }])),
    defaultProvider: names[0]!,
    routes: names.map((name) => ({ match: `${name}-*`, provider: name, model: "gpt-x" })),
  });
  return { url: gateway.url, upstream };
}

const question = [{ role: "user", content: "Add 12 and 7." }];

function nextTurn(model: string, output: Json[]): Json {
  return {
    model,
    store: false,
    include: ["reasoning.encrypted_content"],
    input: [...question, ...output, { role: "user", content: "And again?" }],
  };
}

describe("one Responses provider: its reasoning byte for byte", () => {
  it.each([false, true])(
    "stream %s: encrypted_content as the provider sent it, and back to it unmodified",
    async (stream) => {
      const { url, upstream } = await gatewayWith(["openai"]);
      const provider = upstream.openai!;
      provider.enqueue(stream ? { kind: "sse", frames: streamFrames() } : { kind: "json", body: answer });
      const body = {
        model: "openai-x",
        store: false,
        include: ["reasoning.encrypted_content"],
        input: question,
        stream,
      };
      let output: Json[];
      if (stream) {
        const reply = await postStream(`${url}/v1/responses`, body);
        output = checkResponsesStream(reply.text).last.output as Json[];
      } else {
        output = ((await postJson(`${url}/v1/responses`, body)).body as Json).output;
      }
      const reasoning = output.find((item) => item.type === "reasoning");
      expect(reasoning).toMatchObject({ id: "rs_1", encrypted_content: SEALED });

      provider.enqueue({ kind: "json", body: answer });
      expect((await postJson(`${url}/v1/responses`, nextTurn("openai-x", output))).status).toBe(200);
      const sent = (provider.requests[1]!.body as Json).input as Json[];
      expect(sent.find((item) => item.type === "reasoning")).toMatchObject({ id: "rs_1", encrypted_content: SEALED });
      expect((provider.requests[1]!.body as Json).store).toBe(false);
    },
  );
});

describe("several Responses providers: reasoning says whose it is", () => {
  it("the client gets it in an envelope naming its maker, who alone gets it back as it made it", async () => {
    const { url, upstream } = await gatewayWith(["openai", "other"]);
    upstream.openai!.enqueue({ kind: "json", body: answer });
    const first = await postJson(`${url}/v1/responses`, { model: "openai-x", store: false, input: question });
    const output = (first.body as Json).output as Json[];
    const reasoning = output.find((item) => item.type === "reasoning");
    expect(reasoning.encrypted_content).not.toBe(SEALED);
    expect(decodeOriginSignature(reasoning.encrypted_content)).toMatchObject({
      format: "responses",
      provider: "openai",
      sealed: SEALED,
    });

    upstream.openai!.enqueue({ kind: "json", body: answer });
    await postJson(`${url}/v1/responses`, nextTurn("openai-x", output));
    const back = (upstream.openai!.requests[1]!.body as Json).input as Json[];
    expect(back.find((item) => item.type === "reasoning")).toMatchObject({ id: "rs_1", encrypted_content: SEALED });

    upstream.other!.enqueue({ kind: "json", body: answer });
    const moved = await postJson(`${url}/v1/responses`, nextTurn("other-x", output));
    expect(moved.status).toBe(200);
    const elsewhere = upstream.other!.requests[0]!.rawBody;
    expect(elsewhere).not.toContain(SEALED);
    expect(elsewhere).not.toContain("parley.v1.");
    expect(elsewhere).toContain("Adding up.");
  });
});
