import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { decodeOriginSignature, type Part, type StreamEvent } from "../../core/index.js";
import { accumulate } from "../../stream/accumulate.js";
import { SseDecoder } from "../../stream/sse.js";
import { type ProviderSettings, SettingError } from "../adapter.js";
import { anthropicPassthrough } from "./passthrough.js";
import { wrapAnswerSignatures } from "./signatures.js";
import { corpusStreams, referenceMessage, sseMessagesOf, sseTextOf } from "./test-support/corpus.js";
import { anthropicUpstream } from "./upstream.js";

const provider = (name: string, baseUrl: string, extra: Partial<ProviderSettings> = {}): ProviderSettings => ({
  name,
  baseUrl,
  compat: {},
  headers: {},
  ...extra,
});

/** DeepSeek's `/anthropic` signs thinking with the message id (hermes-agent PR #21048). */
const deepseekAnswer = {
  id: "91cfbb94-554b-4136-8e21-fa02280d56ed",
  type: "message",
  role: "assistant",
  model: "deepseek-v4-pro",
  content: [
    { type: "thinking", thinking: "Greet back.", signature: "91cfbb94-554b-4136-8e21-fa02280d56ed" },
    { type: "thinking", thinking: "", signature: "91cfbb94-554b-4136-8e21-fa02280d56ed" },
    { type: "text", text: "Hello!" },
  ],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 5, output_tokens: 9 },
};

describe("whose signatures an Anthropic-format provider's answers carry", () => {
  test.each([
    ["https://api.anthropic.com", undefined, [], undefined],
    ["https://api.deepseek.com/anthropic", undefined, [], "p"],
    ["https://api.moonshot.ai/anthropic", undefined, [], "p"],
    ["https://api.z.ai/api/anthropic", undefined, [], "p"],
    ["https://api.minimax.io/anthropic", undefined, [], "p"],
    ["https://openrouter.ai/api", undefined, [], "p"],
    ["http://gpu-box:8000", undefined, [], "p"],
    // a server Parley does not know: Anthropic's word for it while alone, its own beside other providers
    ["http://127.0.0.1:4000", undefined, [], undefined],
    ["http://127.0.0.1:4000", undefined, ["other"], "p"],
    // a proxy in front of Anthropic says so
    ["http://127.0.0.1:4000", "anthropic", ["other"], undefined],
    ["http://127.0.0.1:4000", "deepseek", [], "p"],
  ] as const)("%s, preset %s, beside %j: wrapped under %s", (baseUrl, preset, peers, owner) => {
    const connection = anthropicUpstream.connect(
      provider("p", baseUrl, { peers, ...(preset === undefined ? {} : { preset }) }),
    );
    expect(connection.signatureOwner).toBe(owner);
    expect(connection.repairTarget.signatureOwner).toBe(owner);
  });

  test("a preset no Anthropic-format provider has is a setting error naming it", () => {
    expect(() => anthropicUpstream.connect(provider("p", "http://127.0.0.1:1", { preset: "nvidia" }))).toThrow(
      SettingError,
    );
  });
});

describe("a provider's own signatures", () => {
  const connection = anthropicUpstream.connect(provider("deepseek", "https://api.deepseek.com/anthropic"));

  test("reach the client in an envelope naming the provider, the redact-thinking block's too", () => {
    const wrapped = wrapAnswerSignatures(deepseekAnswer, "deepseek") as typeof deepseekAnswer;
    for (const block of wrapped.content.slice(0, 2)) {
      expect(decodeOriginSignature(block.signature)).toEqual({
        format: "anthropic",
        provider: "deepseek",
        signature: "91cfbb94-554b-4136-8e21-fa02280d56ed",
      });
    }
    expect(wrapped.content[2]).toBe(deepseekAnswer.content[2]);
    const core = connection.decodeResponse(deepseekAnswer, { model: "m", messages: [] }).value;
    expect(core.message.parts.slice(0, 2)).toEqual(
      wrapped.content.slice(0, 2).map((block) => ({
        type: "thinking",
        thinking: block.thinking,
        signature: block.signature,
        origin: { format: "anthropic", provider: "deepseek", signature: "91cfbb94-554b-4136-8e21-fa02280d56ed" },
      })),
    );
  });

  test("go back to it as it made them, and to nobody else", () => {
    const core = connection.decodeResponse(deepseekAnswer, { model: "m", messages: [] }).value;
    const history = [{ role: "user" as const, parts: [{ type: "text" as const, text: "hi" }] }, core.message];
    const back = connection.encodeRequest({ model: "m", messages: history }).value as {
      messages: Array<{ content: unknown }>;
    };
    expect(back.messages[1]?.content).toEqual(deepseekAnswer.content);
    // Another provider's connection writes the envelope as it is; its repair turns the block into text first.
    const other = anthropicUpstream.connect(provider("kimi", "https://api.moonshot.ai/anthropic"));
    const written = other.encodeRequest({ model: "m", messages: history }).value as typeof back;
    expect(written.messages[1]?.content).not.toEqual(deepseekAnswer.content);
  });

  test("a client's history goes through the passthrough unwrapped for its provider only", () => {
    const wrapped = wrapAnswerSignatures(deepseekAnswer, "deepseek") as typeof deepseekAnswer;
    const body = {
      model: "m",
      max_tokens: 10,
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: wrapped.content },
        { role: "user", content: "again" },
      ],
    };
    const text = JSON.stringify(body);
    const input = { body, text, clientModel: "m", upstreamModel: "m", stored: [] };
    const passthrough = (owner?: string) =>
      anthropicPassthrough.request({ ...input, ...(owner === undefined ? {} : { signatureOwner: owner }) });
    const own = passthrough("deepseek");
    expect(own.bodyText).toBeUndefined();
    expect((own.value as typeof body).messages[1]).toEqual({ role: "assistant", content: deepseekAnswer.content });
    expect(passthrough("kimi").bodyText).toBe(text);
    expect(passthrough().bodyText).toBe(text);
  });
});

describe("streamed answers of a provider whose signatures are wrapped", () => {
  const connection = anthropicUpstream.connect(provider("vllm", "http://gpu-box:8000"));

  function streamParts(bytes: Uint8Array, cuts: number[]): Part[] {
    const sse = new SseDecoder();
    const decoder = connection.streamDecoder({ model: "m", messages: [] });
    const events: StreamEvent[] = [];
    let from = 0;
    for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
      for (const message of sse.push(bytes.subarray(from, cut))) events.push(...decoder.push(message));
      from = cut;
    }
    for (const message of [...sse.push(bytes.subarray(from)), ...sse.finish()]) events.push(...decoder.push(message));
    events.push(...decoder.finish());
    return accumulate(events).message.parts;
  }

  for (const file of corpusStreams().filter((candidate) => candidate.text.includes("signature_delta"))) {
    test(`${file.name}: the stream, however cut, gives the whole answer's parts`, () => {
      const whole = connection.decodeResponse(
        referenceMessage(sseMessagesOf(file)) as unknown as Record<string, unknown>,
        { model: "m", messages: [] },
      ).value.message.parts;
      const thinking = whole.filter((part) => part.type === "thinking");
      expect(thinking.length).toBeGreaterThan(0);
      for (const part of thinking) expect(decodeOriginSignature(part.signature)?.provider).toBe("vllm");
      const bytes = new TextEncoder().encode(sseTextOf(file));
      fc.assert(
        fc.property(fc.array(fc.nat({ max: bytes.length }), { maxLength: 30 }), (cuts) => {
          expect(streamParts(bytes, cuts)).toEqual(whole);
        }),
        { numRuns: 20 },
      );
    });
  }
});
