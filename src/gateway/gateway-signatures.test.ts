import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import {
  anthropicContentFromEvents,
  type Json,
  postJson,
  postStream,
  startTestGateway,
} from "../../test/support/gateway-harness.js";
import {
  anthropicFrames,
  type RecordedRequest,
  type ScriptedReply,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "../../test/support/scripted-upstream.js";
import { decodeOriginSignature } from "../core/index.js";
import { providerBinding } from "./exchange/reasoning-binding.js";
import type { RunningGateway } from "./server.js";

/**
 * A client moving between Anthropic-format providers (Claude Code's `/model`, routes): thinking comes back to the
 * provider that made it as it was, and to any other one, Anthropic included, as text, reported. The scripted
 * Anthropic refuses a signature it did not make, as the real one does ("Invalid `signature` in `thinking` block").
 */

const fixture = (path: string) => new URL(`../../test/fixtures/${path}`, import.meta.url).pathname;
const anthropicAnswer = JSON.parse(
  readFileSync(fixture("anthropic/claude-sonnet-4.5-thinking-signature.json"), "utf8"),
);

/** DeepSeek's `/anthropic` signs thinking with the message id (hermes-agent PR #21048). */
const DEEPSEEK_ID = "91cfbb94-554b-4136-8e21-fa02280d56ed";
const deepseekAnswer = {
  id: DEEPSEEK_ID,
  type: "message",
  role: "assistant",
  model: "deepseek-v4-pro",
  content: [
    { type: "thinking", thinking: "They greet me; greet back.", signature: DEEPSEEK_ID },
    { type: "text", text: "Hello!" },
  ],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 5, output_tokens: 9 },
};

let anthropic: ScriptedUpstream;
let deepseek: ScriptedUpstream;
let gateway: RunningGateway;
/** What the scripted Anthropic answers next, once the signatures in the request are its own. */
let anthropicReplies: ScriptedReply[] = [];

/** The signatures Anthropic issued, found in what it answered. */
const issued = new Set<string>([anthropicAnswer.content[0].signature]);

function checkSignatures(request: RecordedRequest): ScriptedReply {
  const messages = (request.body as { messages?: Array<{ content?: unknown }> }).messages ?? [];
  for (const [index, message] of messages.entries()) {
    if (!Array.isArray(message.content)) continue;
    for (const [blockIndex, block] of (message.content as Array<Record<string, unknown>>).entries()) {
      if (block.type !== "thinking" || issued.has(block.signature as string)) continue;
      return {
        kind: "error",
        status: 400,
        body: {
          type: "error",
          error: {
            type: "invalid_request_error",
            message: `messages.${index}.content.${blockIndex}: Invalid \`signature\` in \`thinking\` block`,
          },
        },
      };
    }
  }
  return anthropicReplies.shift() ?? { kind: "json", body: anthropicAnswer };
}

beforeAll(async () => {
  [anthropic, deepseek] = await Promise.all([startScriptedUpstream("anthropic"), startScriptedUpstream("anthropic")]);
  anthropic.fallback = checkSignatures;
  gateway = await startTestGateway({
    providers: {
      // scripted servers on 127.0.0.1: the preset says what each one stands for
      anthropic: { type: "anthropic", upstream: anthropic, preset: "anthropic" },
      deepseek: { type: "anthropic", upstream: deepseek, preset: "deepseek" },
    },
    routes: [
      { match: "claude-*", provider: "anthropic" },
      { match: "deepseek-*", provider: "deepseek" },
    ],
  });
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([anthropic.close(), deepseek.close()]);
});

beforeEach(() => {
  anthropic.requests.length = 0;
  deepseek.requests.length = 0;
  anthropicReplies = [];
});

const lossy = (headers: Record<string, unknown>): Array<{ code: string; message: string; path?: string }> =>
  JSON.parse((headers["x-parley-lossy"] as string | undefined) ?? "[]");

function turn(model: string, assistant: unknown[], extra: Record<string, unknown> = {}) {
  return {
    model,
    max_tokens: 1024,
    messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: assistant },
      { role: "user", content: "and now?" },
    ],
    ...extra,
  };
}

/** The messages of the last request the upstream received. */
function sentMessages(upstream: ScriptedUpstream): Array<{ content: Array<Record<string, unknown>> }> {
  const request = upstream.requests.at(-1);
  if (request === undefined) throw new Error("the upstream received no request");
  return (request.body as { messages: Array<{ content: Array<Record<string, unknown>> }> }).messages;
}

describe("thinking DeepSeek's Anthropic endpoint signed", () => {
  test("reaches the client in an envelope naming the provider and the key behind it", async () => {
    deepseek.enqueue({ kind: "json", body: deepseekAnswer });
    const reply = await postJson(`${gateway.url}/v1/messages`, {
      model: "deepseek-v4-pro",
      max_tokens: 1024,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(reply.status).toBe(200);
    const [thinking, text] = (reply.body as Json).content;
    expect(decodeOriginSignature(thinking.signature)).toEqual({
      format: "anthropic",
      provider: "deepseek",
      // a whole answer as a stream (issue 31): the key (here none) or deployment behind the provider
      binding: providerBinding({ baseUrl: deepseek.baseUrl, headers: {} }),
      signature: DEEPSEEK_ID,
    });
    expect(thinking.thinking).toBe(deepseekAnswer.content[0]!.thinking);
    expect(text).toEqual(deepseekAnswer.content[1]);
  });

  test("goes back to DeepSeek byte for byte as DeepSeek made it, nothing reported", async () => {
    deepseek.enqueue({ kind: "json", body: deepseekAnswer });
    const first = await postJson(`${gateway.url}/v1/messages`, {
      model: "deepseek-v4-pro",
      max_tokens: 1024,
      messages: [{ role: "user", content: "hi" }],
    });
    deepseek.enqueue({ kind: "json", body: deepseekAnswer });
    const reply = await postJson(`${gateway.url}/v1/messages`, turn("deepseek-v4-pro", (first.body as Json).content));
    expect(reply.status).toBe(200);
    expect(JSON.stringify(sentMessages(deepseek)[1]!.content)).toBe(JSON.stringify(deepseekAnswer.content));
    expect(reply.headers["x-parley-lossy"]).toBeUndefined();
  });

  test("goes to Anthropic as text, reported, instead of a signature Anthropic refuses", async () => {
    deepseek.enqueue({ kind: "json", body: deepseekAnswer });
    const first = await postJson(`${gateway.url}/v1/messages`, {
      model: "deepseek-v4-pro",
      max_tokens: 1024,
      messages: [{ role: "user", content: "hi" }],
    });
    const reply = await postJson(`${gateway.url}/v1/messages`, turn("claude-sonnet-4-5", (first.body as Json).content));
    expect(reply.status).toBe(200);
    const assistant = sentMessages(anthropic)[1]!.content;
    expect(assistant.some((block) => block.type === "thinking")).toBe(false);
    expect(JSON.stringify(assistant)).toContain("They greet me; greet back.");
    expect(JSON.stringify(assistant)).not.toContain(DEEPSEEK_ID);
    expect(lossy(reply.headers)).toContainEqual({
      code: "repair:thinking-to-text",
      message: "thinking produced by provider 'deepseek' cannot go to Anthropic as a thinking block; kept as text",
      path: "messages[1].content[0]",
    });
  });

  test("streamed, arrives wrapped in signature_delta, and goes back to DeepSeek unwrapped", async () => {
    deepseek.enqueue({
      kind: "sse",
      frames: anthropicFrames([
        { type: "message_start", message: { ...deepseekAnswer, content: [], stop_reason: null } },
        { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Greet back." } },
        { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: DEEPSEEK_ID } },
        { type: "content_block_stop", index: 0 },
        { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
        { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Hello!" } },
        { type: "content_block_stop", index: 1 },
        { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 9 } },
        { type: "message_stop" },
      ] as Array<{ type: string }>),
    });
    const streamed = await postStream(`${gateway.url}/v1/messages`, {
      model: "deepseek-v4-pro",
      max_tokens: 1024,
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    });
    const content = anthropicContentFromEvents(streamed.data);
    expect(decodeOriginSignature(content[0]!.signature as string)?.signature).toBe(DEEPSEEK_ID);
    deepseek.enqueue({ kind: "json", body: deepseekAnswer });
    await postJson(`${gateway.url}/v1/messages`, turn("deepseek-v4-pro", content));
    expect(sentMessages(deepseek)[1]!.content[0]).toEqual({
      type: "thinking",
      thinking: "Greet back.",
      signature: DEEPSEEK_ID,
    });
  });
});

describe("thinking DeepSeek signed, carried by a Responses client", () => {
  test("rides in encrypted_content as its envelope: DeepSeek gets its block back, Anthropic the text", async () => {
    deepseek.enqueue({ kind: "json", body: deepseekAnswer });
    const first = await postJson(`${gateway.url}/v1/responses`, {
      model: "deepseek-v4-pro",
      input: "hi",
      store: false,
    });
    expect(first.status).toBe(200);
    const output = (first.body as Json).output as Json[];
    expect(output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    expect(decodeOriginSignature(output[0]!.encrypted_content)).toEqual({
      format: "anthropic",
      provider: "deepseek",
      // the key behind the provider, as a short hash
      binding: expect.stringMatching(/^[\w-]{16}$/),
      signature: DEEPSEEK_ID,
    });
    const next = (model: string) => ({
      model,
      store: false,
      input: [{ role: "user", content: "hi" }, ...output, { role: "user", content: "and now?" }],
    });
    deepseek.enqueue({ kind: "json", body: deepseekAnswer });
    const back = await postJson(`${gateway.url}/v1/responses`, next("deepseek-v4-pro"));
    expect(back.status).toBe(200);
    expect(sentMessages(deepseek)[1]!.content).toEqual(deepseekAnswer.content);
    // The scripted Anthropic refuses any signature it did not make.
    const moved = await postJson(`${gateway.url}/v1/responses`, next("claude-sonnet-4-5"));
    expect(moved.status).toBe(200);
    expect(sentMessages(anthropic)[1]!.content[0]).toEqual({
      type: "text",
      text: expect.stringContaining("They greet me; greet back."),
    });
    expect(lossy(moved.headers).map((entry) => entry.code)).toContain("repair:thinking-to-text");
  });
});

describe("thinking Anthropic signed", () => {
  test("reaches the client as Anthropic made it, and goes back to Anthropic byte for byte", async () => {
    const first = await postJson(`${gateway.url}/v1/messages`, {
      model: "claude-sonnet-4-5",
      max_tokens: 1024,
      messages: [{ role: "user", content: "925 / 5?" }],
    });
    expect((first.body as Json).content).toEqual(anthropicAnswer.content);
    anthropic.requests.length = 0;
    const text = JSON.stringify(turn("claude-sonnet-4-5", anthropicAnswer.content));
    const reply = await postJson(`${gateway.url}/v1/messages`, text);
    expect(reply.status).toBe(200);
    expect(anthropic.requests[0]!.rawBody).toBe(text);
  });

  test("goes to DeepSeek as text, reported", async () => {
    deepseek.enqueue({ kind: "json", body: deepseekAnswer });
    const reply = await postJson(`${gateway.url}/v1/messages`, turn("deepseek-v4-pro", anthropicAnswer.content));
    expect(reply.status).toBe(200);
    const assistant = sentMessages(deepseek)[1]!.content;
    expect(assistant.some((block) => block.type === "thinking")).toBe(false);
    expect(JSON.stringify(assistant)).toContain("925 divided by 5 = 185");
    expect(lossy(reply.headers)).toContainEqual({
      code: "repair:thinking-to-text",
      message: "thinking signed by Anthropic cannot go to provider 'deepseek' as a thinking block; kept as text",
      path: "messages[1].content[0]",
    });
  });
});

describe("redacted thinking (the redact-thinking beta: empty text, a signature)", () => {
  test("passes to its own origin untouched, and is left out elsewhere, reported", async () => {
    const redactedBlock = { type: "thinking", thinking: "", signature: anthropicAnswer.content[0].signature };
    const text = JSON.stringify(turn("claude-sonnet-4-5", [redactedBlock, { type: "text", text: "185" }]));
    expect((await postJson(`${gateway.url}/v1/messages`, text)).status).toBe(200);
    expect(anthropic.requests[0]!.rawBody).toBe(text);

    deepseek.enqueue({ kind: "json", body: deepseekAnswer });
    const moved = await postJson(
      `${gateway.url}/v1/messages`,
      turn("deepseek-v4-pro", [redactedBlock, { type: "text", text: "185" }]),
    );
    expect(sentMessages(deepseek)[1]!.content).toEqual([{ type: "text", text: "185" }]);
    expect(lossy(moved.headers).map((entry) => [entry.code, entry.path])).toEqual([
      ["repair:removed-empty-thinking", "messages[1].content[0]"],
    ]);
  });

  test("DeepSeek's own goes back to DeepSeek untouched", async () => {
    deepseek.enqueue({
      kind: "json",
      body: {
        ...deepseekAnswer,
        content: [{ type: "thinking", thinking: "", signature: DEEPSEEK_ID }, deepseekAnswer.content[1]],
      },
    });
    const first = await postJson(`${gateway.url}/v1/messages`, {
      model: "deepseek-v4-pro",
      max_tokens: 1024,
      messages: [{ role: "user", content: "hi" }],
    });
    deepseek.enqueue({ kind: "json", body: deepseekAnswer });
    const reply = await postJson(`${gateway.url}/v1/messages`, turn("deepseek-v4-pro", (first.body as Json).content));
    expect(sentMessages(deepseek)[1]!.content[0]).toEqual({ type: "thinking", thinking: "", signature: DEEPSEEK_ID });
    expect(reply.headers["x-parley-lossy"]).toBeUndefined();
  });
});

describe("a stored conversation moving between providers", () => {
  test("DeepSeek's stored thinking goes back to DeepSeek as it made it, and to Anthropic as text", async () => {
    const created = await postJson(`${gateway.url}/v1/conversations`, {});
    const header = { "x-parley-conversation-id": (created.body as { id: string }).id };
    deepseek.enqueue({ kind: "json", body: deepseekAnswer });
    const ask = (model: string, content: string) =>
      postJson(`${gateway.url}/v1/messages`, { model, max_tokens: 100, messages: [{ role: "user", content }] }, header);
    expect((await ask("deepseek-v4-pro", "hi")).status).toBe(200);

    deepseek.enqueue({ kind: "json", body: deepseekAnswer });
    expect((await ask("deepseek-v4-pro", "and now?")).status).toBe(200);
    expect(sentMessages(deepseek)[1]!.content).toEqual(deepseekAnswer.content);

    const moved = await ask("claude-sonnet-4-5", "and on Anthropic?");
    expect(moved.status).toBe(200);
    const sent = sentMessages(anthropic);
    expect(sent.flatMap((message) => message.content).some((block) => block.type === "thinking")).toBe(false);
    expect(lossy(moved.headers).filter((entry) => entry.code === "repair:thinking-to-text")).toHaveLength(2);
  });
});

describe("a stored conversation streamed from DeepSeek", () => {
  test("goes back to DeepSeek with its own signatures on the next turn", async () => {
    const created = await postJson(`${gateway.url}/v1/conversations`, {});
    const header = { "x-parley-conversation-id": (created.body as { id: string }).id };
    deepseek.enqueue({
      kind: "sse",
      frames: anthropicFrames([
        { type: "message_start", message: { ...deepseekAnswer, content: [], stop_reason: null } },
        { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Greet back." } },
        { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: DEEPSEEK_ID } },
        { type: "content_block_stop", index: 0 },
        { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 9 } },
        { type: "message_stop" },
      ] as Array<{ type: string }>),
    });
    const streamed = await postStream(
      `${gateway.url}/v1/messages`,
      { model: "deepseek-v4-pro", max_tokens: 100, stream: true, messages: [{ role: "user", content: "hi" }] },
      header,
    );
    expect(streamed.status).toBe(200);
    deepseek.enqueue({ kind: "json", body: deepseekAnswer });
    const next = await postJson(
      `${gateway.url}/v1/messages`,
      { model: "deepseek-v4-pro", max_tokens: 100, messages: [{ role: "user", content: "and now?" }] },
      header,
    );
    expect(next.status).toBe(200);
    expect(sentMessages(deepseek)[1]!.content).toEqual([
      { type: "thinking", thinking: "Greet back.", signature: DEEPSEEK_ID },
    ]);
    expect(next.headers["x-parley-lossy"]).toBeUndefined();
  });
});
