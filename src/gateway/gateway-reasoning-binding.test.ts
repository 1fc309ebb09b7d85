import { afterEach, describe, expect, it } from "vitest";
import {
  anthropicContentFromEvents,
  type Json,
  postJson,
  postStream,
  startTestGateway,
} from "../../test/support/gateway-harness.js";
import { checkResponsesStream } from "../../test/support/responses-stream.js";
import { anthropicFrames, type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import { decodeOriginSignature, encodeOriginSignature } from "../core/index.js";
import { providerBinding } from "./exchange/reasoning-binding.js";
import type { RunningGateway } from "./server.js";

/**
 * Reasoning is bound to the key or deployment behind its provider (issue 31): OpenAI refuses `encrypted_content`
 * sealed under another organisation or key, so what a provider sealed goes back unmodified only to the same provider
 * under the same key; anywhere else it is sent as its text, reported, before any refusal.
 */

const SEALED = "gAAAAB-sealed-under-the-first-key==";
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
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 1, content_index: 0, delta: "19" },
    { type: "response.output_item.done", output_index: 1, item: answer.output[1] },
    { type: "response.completed", response: answer },
  ];
  return events.map(
    (event, index) => `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`,
  );
}

let gateway: RunningGateway | undefined;
const upstreams: ScriptedUpstream[] = [];

afterEach(async () => {
  await gateway?.close();
  for (const upstream of upstreams.splice(0)) await upstream.close();
  gateway = undefined;
});

async function responsesUpstream(): Promise<ScriptedUpstream> {
  const upstream = await startScriptedUpstream("openai-responses");
  upstreams.push(upstream);
  return upstream;
}

/** A gateway (the previous one closed) whose providers all reach `upstream`, each under its own key. */
async function gatewayWithKeys(upstream: ScriptedUpstream, keys: Record<string, string>): Promise<string> {
  await gateway?.close();
  const names = Object.keys(keys);
  gateway = await startTestGateway({
    providers: Object.fromEntries(
      names.map((name) => [name, { upstream, type: "openai-responses" as const, apiKey: keys[name]! }]),
    ),
    defaultProvider: names[0]!,
    routes: names.map((name) => ({ match: `${name}-*`, provider: name, model: "gpt-x" })),
  });
  return gateway.url;
}

function lossyCodes(headers: Record<string, unknown>): string[] {
  const header = headers["x-parley-lossy"];
  return typeof header === "string" ? (JSON.parse(header) as Array<{ code: string }>).map((entry) => entry.code) : [];
}

const question = { role: "user", content: "Add 12 and 7." };

/** Claude Code on GPT: an Anthropic client's first turn, streamed, and the thinking block it keeps. */
async function firstAnthropicTurn(url: string, upstream: ScriptedUpstream, model: string): Promise<Json> {
  upstream.enqueue({ kind: "sse", frames: streamFrames() });
  const reply = await postStream(`${url}/v1/messages`, { model, max_tokens: 256, stream: true, messages: [question] });
  expect(reply.status).toBe(200);
  const events = reply.data as Json[];
  const starts = events.filter((event) => event.type === "content_block_start").map((event) => event.content_block);
  const signatures = events
    .filter((event: Json) => event.type === "content_block_delta" && event.delta.type === "signature_delta")
    .map((event: Json) => event.delta.signature);
  const thinking = starts.find((block: Json) => block.type === "thinking");
  expect(thinking).toBeDefined();
  return { type: "thinking", thinking: "Adding up.", signature: signatures.at(-1) ?? thinking.signature };
}

function nextAnthropicTurn(model: string, thinking: Json): Json {
  return {
    model,
    max_tokens: 256,
    messages: [
      question,
      { role: "assistant", content: [thinking, { type: "text", text: "19" }] },
      { role: "user", content: "And again?" },
    ],
  };
}

function sentReasoning(upstream: ScriptedUpstream, index: number): Json[] {
  return ((upstream.requests[index]!.body as Json).input as Json[]).filter((item) => item.type === "reasoning");
}

describe("a provider's key rotated", () => {
  it("the reasoning it sealed under the old key goes to it as text, reported, not to be refused", async () => {
    const upstream = await responsesUpstream();
    let url = await gatewayWithKeys(upstream, { openai: "sk-old-key" });
    const thinking = await firstAnthropicTurn(url, upstream, "openai-x");
    const origin = decodeOriginSignature(thinking.signature);
    expect(origin).toMatchObject({ format: "responses", provider: "openai", sealed: SEALED });
    expect(origin?.binding).toBe(providerBinding({ baseUrl: upstream.baseUrl, apiKey: "sk-old-key", headers: {} }));
    // The envelope names the key only by a short hash.
    expect(thinking.signature).not.toContain(Buffer.from("sk-old-key").toString("base64url").slice(0, 8));

    // Same provider name, a new key: one request, the reasoning as its text, reported.
    url = await gatewayWithKeys(upstream, { openai: "sk-new-key" });
    upstream.enqueue({ kind: "json", body: answer });
    const rotated = await postJson(`${url}/v1/messages`, nextAnthropicTurn("openai-x", thinking));
    expect(rotated.status).toBe(200);
    expect(upstream.requests).toHaveLength(2);
    expect(sentReasoning(upstream, 1)).toEqual([]);
    expect(upstream.requests[1]!.rawBody).not.toContain(SEALED);
    expect(upstream.requests[1]!.rawBody).toContain("Adding up.");
    expect(lossyCodes(rotated.headers)).toContain("repair:thinking-to-text");

    // The old key back: the provider gets its item as it made it.
    url = await gatewayWithKeys(upstream, { openai: "sk-old-key" });
    upstream.enqueue({ kind: "json", body: answer });
    const same = await postJson(`${url}/v1/messages`, nextAnthropicTurn("openai-x", thinking));
    expect(same.status).toBe(200);
    expect(sentReasoning(upstream, 2)).toEqual([expect.objectContaining({ id: "rs_1", encrypted_content: SEALED })]);
    expect(lossyCodes(same.headers)).not.toContain("repair:thinking-to-text");
  });

  it("an envelope written before bindings still goes back to the provider it names, as before", async () => {
    const upstream = await responsesUpstream();
    const url = await gatewayWithKeys(upstream, { openai: "sk-new-key" });
    const signature = encodeOriginSignature({
      format: "responses",
      provider: "openai",
      field: "summary",
      id: "rs_1",
      sealed: SEALED,
    });
    upstream.enqueue({ kind: "json", body: answer });
    const reply = await postJson(
      `${url}/v1/messages`,
      nextAnthropicTurn("openai-x", { type: "thinking", thinking: "Adding up.", signature }),
    );
    expect(reply.status).toBe(200);
    expect(sentReasoning(upstream, 0)).toEqual([expect.objectContaining({ id: "rs_1", encrypted_content: SEALED })]);
  });
});

describe("two providers of one API under different keys", () => {
  it("each one's reasoning carries its own binding and goes back sealed only to it", async () => {
    // One endpoint, two keys (two organisations): the sealed content of one is not the other's.
    const upstream = await responsesUpstream();
    const url = await gatewayWithKeys(upstream, { teamA: "sk-team-a", teamB: "sk-team-b" });
    upstream.enqueue({ kind: "sse", frames: streamFrames() });
    const first = await postStream(`${url}/v1/responses`, {
      model: "teamA-x",
      store: false,
      stream: true,
      include: ["reasoning.encrypted_content"],
      input: [question],
    });
    const output = checkResponsesStream(first.text).last.output as Json[];
    const reasoning = output.find((item) => item.type === "reasoning");
    const origin = decodeOriginSignature(reasoning.encrypted_content);
    expect(origin).toMatchObject({ provider: "teamA", sealed: SEALED });
    const bindingA = providerBinding({ baseUrl: upstream.baseUrl, apiKey: "sk-team-a", headers: {} });
    const bindingB = providerBinding({ baseUrl: upstream.baseUrl, apiKey: "sk-team-b", headers: {} });
    expect(bindingA).not.toBe(bindingB);
    expect(origin?.binding).toBe(bindingA);

    const next = (model: string) => ({
      model,
      store: false,
      include: ["reasoning.encrypted_content"],
      input: [question, ...output, { role: "user", content: "And again?" }],
    });
    upstream.enqueue({ kind: "json", body: answer });
    const toB = await postJson(`${url}/v1/responses`, next("teamB-x"));
    expect(toB.status).toBe(200);
    expect(sentReasoning(upstream, 1)).toEqual([]);
    expect(upstream.requests[1]!.rawBody).not.toContain(SEALED);
    expect(upstream.requests[1]!.headers.authorization).toBe("Bearer sk-team-b");

    upstream.enqueue({ kind: "json", body: answer });
    const toA = await postJson(`${url}/v1/responses`, next("teamA-x"));
    expect(toA.status).toBe(200);
    expect(sentReasoning(upstream, 2)).toEqual([expect.objectContaining({ id: "rs_1", encrypted_content: SEALED })]);
  });
});

describe("the binding", () => {
  it("follows the organisation when one is configured, so a key rotated inside it keeps its reasoning", () => {
    const base = { baseUrl: "https://api.openai.com/v1", headers: { "OpenAI-Organization": "org-1" } };
    expect(providerBinding({ ...base, apiKey: "sk-1" })).toBe(providerBinding({ ...base, apiKey: "sk-2" }));
    expect(providerBinding({ ...base, apiKey: "sk-1" })).not.toBe(
      providerBinding({ ...base, headers: { "openai-organization": "org-2" }, apiKey: "sk-1" }),
    );
    expect(providerBinding({ baseUrl: base.baseUrl, headers: {}, apiKey: "sk-1" })).not.toBe(
      providerBinding({ baseUrl: base.baseUrl, headers: {}, apiKey: "sk-2" }),
    );
    expect(providerBinding({ baseUrl: base.baseUrl, headers: {}, apiKey: "sk-1" })).toMatch(/^[\w-]{16}$/);
  });
});

/**
 * Whole answers as streams (issue 31): a client of the provider's own API, its answer passed through, gets that
 * provider's reasoning in envelopes naming it and the key behind it when the gateway has several providers of the
 * API, whether the answer came whole or streamed; with one, as the provider made it. The scripted servers seal or
 * sign under the request's key and refuse what another key made, as OpenAI (`invalid_encrypted_content`) and a
 * provider signing its own thinking do.
 */
type PassthroughApi = "openai-responses" | "anthropic";

const sealedUnder = (key: string) => `gAAAAB-sealed-under-${key}==`;
const signedUnder = (key: string) => `sig-under-${key}`;

/** The request's key, as either API sends it. */
function requestKey(request: { headers: Record<string, unknown> }): string {
  const bearer = request.headers.authorization;
  if (typeof bearer === "string") return bearer.replace(/^Bearer /, "");
  return String(request.headers["x-api-key"] ?? "");
}

function responsesAnswerUnder(key: string): Json {
  return { ...answer, output: [{ ...reasoningItem, encrypted_content: sealedUnder(key) }, answer.output[1]] };
}

function anthropicAnswerUnder(key: string): Json {
  return {
    id: "msg_up",
    type: "message",
    role: "assistant",
    model: "m-x",
    content: [
      { type: "thinking", thinking: "Adding up.", signature: signedUnder(key) },
      { type: "text", text: "19" },
    ],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
  };
}

function responsesFramesUnder(key: string): string[] {
  const whole = responsesAnswerUnder(key);
  const item = whole.output[0];
  const events: Json[] = [
    { type: "response.created", response: { ...whole, status: "in_progress", output: [] } },
    { type: "response.output_item.added", output_index: 0, item: { ...item, summary: [] } },
    {
      type: "response.reasoning_summary_text.delta",
      item_id: "rs_1",
      output_index: 0,
      summary_index: 0,
      delta: "Adding up.",
    },
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.output_item.added", output_index: 1, item: { ...whole.output[1], content: [] } },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 1, content_index: 0, delta: "19" },
    { type: "response.output_item.done", output_index: 1, item: whole.output[1] },
    { type: "response.completed", response: whole },
  ];
  return events.map(
    (event, index) => `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`,
  );
}

function anthropicFramesUnder(key: string): string[] {
  const whole = anthropicAnswerUnder(key);
  return anthropicFrames([
    {
      type: "message_start",
      message: { ...whole, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 0 } },
    },
    { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Adding up." } },
    { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: signedUnder(key) } },
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "19" } },
    { type: "content_block_stop", index: 1 },
    { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } },
    { type: "message_stop" },
  ] as Array<{ type: string }>);
}

/** The reasoning a request carries sealed or signed: each item's `encrypted_content`, each block's `signature`. */
function sentSealed(api: PassthroughApi, body: Json): string[] {
  if (api === "openai-responses")
    return (body.input as Json[]).filter((item) => item.type === "reasoning").map((item) => item.encrypted_content);
  return (body.messages as Json[])
    .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
    .filter((block: Json) => block.type === "thinking" && typeof block.signature === "string")
    .map((block: Json) => block.signature);
}

/**
 * A server of `api` that seals (or signs) its answers' reasoning under the request's key and refuses, with its
 * API's words, reasoning sealed under another key.
 */
async function keyedUpstream(api: PassthroughApi): Promise<ScriptedUpstream> {
  const upstream = await startScriptedUpstream(api);
  upstreams.push(upstream);
  upstream.fallback = (request) => {
    const key = requestKey(request);
    const body = request.body as Json;
    const own = api === "openai-responses" ? sealedUnder(key) : signedUnder(key);
    if (sentSealed(api, body).some((sealed) => sealed !== own)) {
      return {
        kind: "error",
        status: 400,
        body:
          api === "openai-responses"
            ? {
                error: {
                  message: "The encrypted content for item rs_1 could not be verified.",
                  type: "invalid_request_error",
                  param: null,
                  code: "invalid_encrypted_content",
                },
              }
            : {
                type: "error",
                error: {
                  type: "invalid_request_error",
                  message: "messages.1.content.0: Invalid `signature` in `thinking` block",
                },
              },
      };
    }
    if (body.stream === true)
      return {
        kind: "sse",
        frames: api === "openai-responses" ? responsesFramesUnder(key) : anthropicFramesUnder(key),
      };
    return { kind: "json", body: api === "openai-responses" ? responsesAnswerUnder(key) : anthropicAnswerUnder(key) };
  };
  return upstream;
}

/** A gateway (the previous one closed) whose providers of `api` all reach `upstream`, each under its own key. */
async function gatewayOf(
  api: PassthroughApi,
  upstream: ScriptedUpstream,
  keys: Record<string, string>,
): Promise<string> {
  await gateway?.close();
  const names = Object.keys(keys);
  gateway = await startTestGateway({
    providers: Object.fromEntries(
      // No preset: a server Parley does not know, whose signatures are its own once it has peers.
      names.map((name) => [name, { upstream, type: api, apiKey: keys[name]! }]),
    ),
    defaultProvider: names[0]!,
    routes: names.map((name) => ({ match: `${name}-*`, provider: name, model: "m-x" })),
  });
  return gateway.url;
}

/** The client's first turn through `api`'s own route, whole or streamed, and the assistant turn it keeps. */
async function firstOwnTurn(api: PassthroughApi, url: string, model: string, stream: boolean): Promise<Json> {
  if (api === "openai-responses") {
    const body = { model, store: false, include: ["reasoning.encrypted_content"], input: [question], stream };
    if (stream) return checkResponsesStream((await postStream(`${url}/v1/responses`, body)).text).last.output;
    const reply = await postJson(`${url}/v1/responses`, body);
    expect(reply.status).toBe(200);
    return (reply.body as Json).output;
  }
  const body = { model, max_tokens: 256, messages: [question], stream };
  if (stream) {
    const reply = await postStream(`${url}/v1/messages`, body);
    expect(reply.status).toBe(200);
    return anthropicContentFromEvents(reply.data);
  }
  const reply = await postJson(`${url}/v1/messages`, body);
  expect(reply.status).toBe(200);
  return (reply.body as Json).content;
}

/** The reasoning the client got: the item's `encrypted_content`, the block's `signature`. */
function clientSealed(api: PassthroughApi, kept: Json[]): string {
  const found =
    api === "openai-responses"
      ? kept.find((item) => item.type === "reasoning")?.encrypted_content
      : kept.find((block) => block.type === "thinking")?.signature;
  expect(typeof found).toBe("string");
  return found;
}

async function nextOwnTurn(api: PassthroughApi, url: string, model: string, kept: Json[]) {
  const body =
    api === "openai-responses"
      ? {
          model,
          store: false,
          include: ["reasoning.encrypted_content"],
          input: [question, ...kept, { role: "user", content: "And again?" }],
        }
      : {
          model,
          max_tokens: 256,
          messages: [question, { role: "assistant", content: kept }, { role: "user", content: "And again?" }],
        };
  return postJson(`${url}/${api === "openai-responses" ? "v1/responses" : "v1/messages"}`, body);
}

describe.each<PassthroughApi>(["openai-responses", "anthropic"])(
  "a client of %s on providers of its own API, its answers passed through",
  (api) => {
    it.each([false, true])(
      "stream %s: several providers: the envelope names the provider and its key",
      async (stream) => {
        const upstream = await keyedUpstream(api);
        let url = await gatewayOf(api, upstream, { teamA: "key-a1", teamB: "key-b" });
        const kept = await firstOwnTurn(api, url, "teamA-x", stream);
        const sealed = clientSealed(api, kept);
        const origin = decodeOriginSignature(sealed);
        expect(origin).toMatchObject({ provider: "teamA" });
        expect(origin?.binding).toBe(providerBinding({ baseUrl: upstream.baseUrl, apiKey: "key-a1", headers: {} }));
        expect(origin?.sealed ?? origin?.signature).toBe(
          api === "openai-responses" ? sealedUnder("key-a1") : signedUnder("key-a1"),
        );

        // The other provider (another key): the reasoning as text, never sealed, not refused.
        const toB = await nextOwnTurn(api, url, "teamB-x", kept);
        expect(toB.status).toBe(200);
        expect(upstream.requests).toHaveLength(2);
        expect(sentSealed(api, upstream.requests[1]!.body)).toEqual([]);
        expect(upstream.requests[1]!.rawBody).toContain("Adding up.");
        expect(upstream.requests[1]!.rawBody).not.toContain("parley.v1.");

        // Its maker under the same key: its own reasoning as it made it.
        const toA = await nextOwnTurn(api, url, "teamA-x", kept);
        expect(toA.status).toBe(200);
        expect(upstream.requests).toHaveLength(3);
        expect(sentSealed(api, upstream.requests[2]!.body)).toEqual([origin?.sealed ?? origin?.signature]);
        expect(lossyCodes(toA.headers)).not.toContain("repair:thinking-to-text");

        // Its maker under a rotated key: one request, the reasoning as its text, reported; nothing refused or resent.
        url = await gatewayOf(api, upstream, { teamA: "key-a2", teamB: "key-b" });
        const rotated = await nextOwnTurn(api, url, "teamA-x", kept);
        expect(rotated.status).toBe(200);
        expect(upstream.requests).toHaveLength(4);
        expect(sentSealed(api, upstream.requests[3]!.body)).toEqual([]);
        expect(upstream.requests[3]!.rawBody).toContain("Adding up.");
        expect(lossyCodes(rotated.headers)).toContain("repair:thinking-to-text");
        expect(lossyCodes(rotated.headers)).not.toContain("reasoning-refused-resent");
      },
    );

    it("several providers: a whole answer's envelope is the one its stream gives", async () => {
      const upstream = await keyedUpstream(api);
      const url = await gatewayOf(api, upstream, { teamA: "key-a1", teamB: "key-b" });
      const whole = decodeOriginSignature(clientSealed(api, await firstOwnTurn(api, url, "teamA-x", false)));
      const streamed = decodeOriginSignature(clientSealed(api, await firstOwnTurn(api, url, "teamA-x", true)));
      const { model: _wholeModel, ...wholeWhere } = whole ?? { format: "openai" };
      const { model: _streamedModel, ...streamedWhere } = streamed ?? { format: "openai" };
      expect(wholeWhere).toEqual(streamedWhere);
    });

    it.each([false, true])("stream %s: one provider: its reasoning byte for byte, as it made it", async (stream) => {
      const upstream = await keyedUpstream(api);
      const url = await gatewayOf(api, upstream, { solo: "key-s" });
      const kept = await firstOwnTurn(api, url, "solo-x", stream);
      const own = api === "openai-responses" ? sealedUnder("key-s") : signedUnder("key-s");
      expect(clientSealed(api, kept)).toBe(own);
      const next = await nextOwnTurn(api, url, "solo-x", kept);
      expect(next.status).toBe(200);
      expect(sentSealed(api, upstream.requests[1]!.body)).toEqual([own]);
      expect(lossyCodes(next.headers)).toEqual([]);
    });
  },
);
