import { afterEach, describe, expect, it } from "vitest";
import { type Json, postJson, postStream, startTestGateway } from "../../test/support/gateway-harness.js";
import {
  anthropicFrames,
  type ScriptedReply,
  type ScriptedUpstream,
  startScriptedUpstream,
  type UpstreamKind,
} from "../../test/support/scripted-upstream.js";
import { encodeOriginSignature } from "../core/index.js";
import type { RunningGateway } from "./server.js";

/**
 * Fail soft, once (issue 31): a provider's 400 for reasoning it cannot verify (a key rotated, another organisation,
 * another model family) makes Parley send the same request once more with the history's reasoning as text,
 * reported; a second refusal reaches the client.
 */

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
  gateway = await startTestGateway({
    providers: { main: { upstream, type: kind, ...(kind === "openai-responses" ? {} : { defaultModel: "m" }) } },
  });
  return { url: gateway.url, upstream };
}

function lossyCodes(headers: Record<string, unknown>): string[] {
  const header = headers["x-parley-lossy"];
  return typeof header === "string" ? (JSON.parse(header) as Array<{ code: string }>).map((entry) => entry.code) : [];
}

const anthropicRefusal: ScriptedReply = {
  kind: "error",
  status: 400,
  body: {
    type: "error",
    error: { type: "invalid_request_error", message: "messages.1.content.0: Invalid `signature` in `thinking` block" },
  },
};

const anthropicAnswer = {
  id: "msg_2",
  type: "message",
  role: "assistant",
  model: "claude-x",
  content: [{ type: "text", text: "Done." }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 20, output_tokens: 2 },
};

const signedHistory = {
  model: "claude-x",
  max_tokens: 1024,
  messages: [
    { role: "user", content: "Think, then answer." },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "The user wants an answer.", signature: "EqSignedUnderTheOldKey==" },
        { type: "text", text: "First answer." },
      ],
    },
    { role: "user", content: "Again." },
  ],
};

describe("an Anthropic provider refusing a thinking signature", () => {
  it("gets the request once more with the thinking as text, reported", async () => {
    const { url, upstream } = await gatewayOn("anthropic");
    upstream.enqueue(anthropicRefusal, { kind: "json", body: anthropicAnswer });
    const reply = await postJson(`${url}/v1/messages`, signedHistory);
    expect(reply.status).toBe(200);
    expect((reply.body as Json).content).toEqual([{ type: "text", text: "Done." }]);
    expect(upstream.requests).toHaveLength(2);
    // The first went as the client sent it; the second with no signature anywhere.
    expect(upstream.requests[0]!.rawBody).toContain("EqSignedUnderTheOldKey==");
    expect(upstream.requests[1]!.rawBody).not.toContain("EqSignedUnderTheOldKey==");
    const assistant = (upstream.requests[1]!.body as Json).messages[1];
    expect(assistant.content[0]).toEqual({ type: "text", text: "The user wants an answer." });
    const codes = lossyCodes(reply.headers);
    expect(codes).toContain("reasoning-refused-resent");
    expect(codes).toContain("repair:thinking-to-text");
  });

  it("streamed: the same, before the status line", async () => {
    const { url, upstream } = await gatewayOn("anthropic");
    upstream.enqueue(
      {
        ...anthropicRefusal,
        body: {
          type: "error",
          error: {
            type: "invalid_request_error",
            message:
              "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.",
          },
        },
      },
      {
        kind: "sse",
        frames: anthropicFrames(<Json[]>[
          {
            type: "message_start",
            message: { ...anthropicAnswer, content: [], usage: { input_tokens: 20, output_tokens: 0 } },
          },
          { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
          { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Done." } },
          { type: "content_block_stop", index: 0 },
          {
            type: "message_delta",
            delta: { stop_reason: "end_turn", stop_sequence: null },
            usage: { output_tokens: 2 },
          },
          { type: "message_stop" },
        ]),
      },
    );
    const reply = await postStream(`${url}/v1/messages`, { ...signedHistory, stream: true });
    expect(reply.status).toBe(200);
    expect(reply.data.some((event) => event.type === "message_stop")).toBe(true);
    expect(upstream.requests).toHaveLength(2);
    expect(lossyCodes(reply.headers)).toContain("reasoning-refused-resent");
  });

  it("a second refusal reaches the client", async () => {
    const { url, upstream } = await gatewayOn("anthropic");
    upstream.enqueue(anthropicRefusal, anthropicRefusal, { kind: "json", body: anthropicAnswer });
    const reply = await postJson(`${url}/v1/messages`, signedHistory);
    expect(reply.status).toBe(400);
    expect(JSON.stringify(reply.body)).toContain("Invalid `signature`");
    expect(upstream.requests).toHaveLength(2);
  });

  it("any other 400 is not sent again", async () => {
    const { url, upstream } = await gatewayOn("anthropic");
    upstream.enqueue(
      {
        kind: "error",
        status: 400,
        body: { type: "error", error: { type: "invalid_request_error", message: "max_tokens: too large" } },
      },
      { kind: "json", body: anthropicAnswer },
    );
    const reply = await postJson(`${url}/v1/messages`, signedHistory);
    expect(reply.status).toBe(400);
    expect(upstream.requests).toHaveLength(1);
  });
});

describe("a Responses provider refusing sealed reasoning (invalid_encrypted_content)", () => {
  it("gets the request once more without the sealed content, its text instead", async () => {
    const { url, upstream } = await gatewayOn("openai-responses");
    // Reasoning this provider made, as a Responses client got it back from Parley.
    const envelope = encodeOriginSignature({
      format: "responses",
      provider: "main",
      field: "summary",
      id: "rs_1",
      sealed: "gAAAAB-sealed-under-another-org==",
    });
    upstream.enqueue(
      {
        kind: "error",
        status: 400,
        body: {
          error: {
            message: "The encrypted content for item rs_1 could not be verified.",
            type: "invalid_request_error",
            param: null,
            code: "invalid_encrypted_content",
          },
        },
      },
      {
        kind: "json",
        body: {
          id: "resp_2",
          object: "response",
          created_at: 1,
          status: "completed",
          model: "gpt-x",
          output: [
            { id: "msg_2", type: "message", role: "assistant", content: [{ type: "output_text", text: "Done." }] },
          ],
          usage: { input_tokens: 20, output_tokens: 2, total_tokens: 22 },
        },
      },
    );
    const reply = await postJson(`${url}/v1/responses`, {
      model: "gpt-x",
      store: false,
      input: [
        { type: "message", role: "user", content: "Think." },
        {
          type: "reasoning",
          id: "rs_1",
          summary: [{ type: "summary_text", text: "Thinking it over." }],
          encrypted_content: envelope,
        },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "First." }] },
        { type: "message", role: "user", content: "Again." },
      ],
    });
    expect(reply.status).toBe(200);
    expect(upstream.requests).toHaveLength(2);
    expect(upstream.requests[0]!.rawBody).toContain("gAAAAB-sealed-under-another-org==");
    expect(upstream.requests[1]!.rawBody).not.toContain("gAAAAB-sealed-under-another-org==");
    expect(upstream.requests[1]!.rawBody).toContain("Thinking it over.");
    expect(lossyCodes(reply.headers)).toContain("reasoning-refused-resent");
  });
});
