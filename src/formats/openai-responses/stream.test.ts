import fc from "fast-check";
import OpenAI from "openai";
import { describe, expect, test } from "vitest";
import { cutAt } from "../../../test/support/cut.js";
import { checkResponsesStream, fixtureJson, sseOfChunks } from "../../../test/support/responses-stream.js";
import type { ConversationResponse, Part, StreamEvent } from "../../core/index.js";
import { decodeOriginSignature, encodeOriginSignature } from "../../core/index.js";
import { accumulate } from "../../stream/accumulate.js";
import { SseDecoder } from "../../stream/sse.js";
import { coreToResponsesResponse } from "./from-core.js";
import { createResponsesStreamDecoder } from "./stream-decoder.js";
import { createResponsesStreamEncoder } from "./stream-encoder.js";
import { responsesResponseToCore } from "./to-core.js";
import type { Json } from "./wire-types.js";

const RECORDED = [
  "gpt-5.1-codex-max-reasoning-tool-call.chunks.jsonl",
  "gpt-5.1-tool-call.chunks.jsonl",
  "gpt-5-nano-error-midstream.chunks.jsonl",
  "gpt-4o-mini-response-failed.chunks.jsonl",
];

/** A stream's bytes cut at the given points (mid-line, mid-character), through the SSE layer and the decoder. */
function decodeCut(text: string, cuts: number[]): StreamEvent[] {
  const bytes = new TextEncoder().encode(text);
  const sse = new SseDecoder();
  const decoder = createResponsesStreamDecoder({ provider: "openai" });
  const events: StreamEvent[] = [];
  for (const piece of cutAt(bytes, cuts)) {
    for (const message of sse.push(piece)) events.push(...decoder.push(message));
  }
  for (const message of sse.finish()) events.push(...decoder.push(message));
  return [...events, ...decoder.finish()];
}

function encode(events: StreamEvent[], answerId = "resp_test"): string {
  const encoder = createResponsesStreamEncoder({ answerId });
  return events.map((event) => encoder.encode(event)).join("");
}

/** The SDK's own stream helper (`responses.stream()`) reading our text as a server's answer: its final response. */
async function sdkFinal(text: string): Promise<Json> {
  const client = new OpenAI({
    apiKey: "sk-test",
    maxRetries: 0,
    fetch: async () => new Response(text, { headers: { "content-type": "text/event-stream" } }),
  });
  const stream = client.responses.stream({ model: "m", input: "x" });
  return (await stream.finalResponse()) as unknown as Json;
}

describe("recorded Responses streams", () => {
  test("decode to the same answer however the bytes are cut", () => {
    for (const file of RECORDED) {
      const text = sseOfChunks(`openai-responses/${file}`);
      const whole = decodeCut(text, []);
      fc.assert(
        fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
          expect(decodeCut(text, cuts)).toEqual(whole);
        }),
        { numRuns: 40 },
      );
    }
  });

  test("a streamed answer is the answer its final response holds", () => {
    const text = sseOfChunks("openai-responses/gpt-5.1-tool-call.chunks.jsonl");
    const events = decodeCut(text, []);
    const final = checkResponsesStream(text).last;
    expect(accumulate(events)).toEqual(responsesResponseToCore(final, { provider: "openai" }).value);
  });

  test("reasoning is signed with its origin, the provider's last encrypted content sealed inside", () => {
    const text = sseOfChunks("openai-responses/gpt-5.1-codex-max-reasoning-tool-call.chunks.jsonl");
    const answer = accumulate(decodeCut(text, []));
    const done = checkResponsesStream(text).events[38]!.item as Json;
    const [thinking, call] = answer.message.parts;
    expect(thinking).toMatchObject({ type: "thinking", thinking: (done.summary as Json[])[0]!.text });
    const origin = decodeOriginSignature((thinking as { signature: string }).signature);
    expect(origin).toEqual({
      format: "responses",
      provider: "openai",
      field: "summary",
      model: "gpt-5.1-codex-max",
      id: done.id,
      sealed: done.encrypted_content,
    });
    expect(call).toMatchObject({ type: "tool_call", name: "calculator", input: { a: 12, b: 7, op: "add" } });
    expect(answer.stopReason).toEqual({ unified: "tool_use", raw: "completed" });
  });

  test("an error after the start ends the answer in an error, as a failed response does", () => {
    for (const file of ["gpt-5-nano-error-midstream.chunks.jsonl", "gpt-4o-mini-response-failed.chunks.jsonl"]) {
      const events = decodeCut(sseOfChunks(`openai-responses/${file}`), []);
      expect(events.at(-1)).toMatchObject({ type: "error", error: { type: "rate_limit_error", status: 429 } });
    }
  });

  test("re-encoded for a Responses client, they are valid streams the SDK reads to the whole answer", async () => {
    for (const file of RECORDED) {
      const events = decodeCut(sseOfChunks(`openai-responses/${file}`), []);
      const text = encode(events);
      const checked = checkResponsesStream(text);
      const failure = events.at(-1);
      if (failure?.type === "error") {
        // As from OpenAI: the `error` event, then the failed response; the SDK throws the error's message.
        expect(checked.last).toMatchObject({ status: "failed", error: { code: "rate_limit_exceeded" } });
        await expect(sdkFinal(text)).rejects.toThrow(failure.error.message);
        continue;
      }
      const final = await sdkFinal(text);
      const answer = accumulate(events);
      const whole = coreToResponsesResponse(answer, { answerId: "resp_test" }).value;
      expect(withoutTime(checked.assembled)).toEqual(withoutTime(whole));
      expect(withoutTime(final)).toMatchObject(withoutTime(whole));
    }
  });
});

/** `created_at` is the clock's; everything else must match. */
function withoutTime(response: Json): Json {
  const { created_at: _created, output_text: _text, ...rest } = response;
  return rest;
}

// ---- any answer, cut any way ----

const text = fc.string({ unit: "grapheme", maxLength: 30 });
const partArbitrary: fc.Arbitrary<Part> = fc.oneof(
  text.map((value): Part => ({ type: "text", text: value })),
  fc
    .record({ thinking: text, signed: fc.constantFrom("none", "anthropic", "origin") })
    .map(({ thinking, signed }): Part => {
      const part: Part = { type: "thinking", thinking };
      if (signed === "anthropic") part.signature = `sig-${thinking.length}`;
      if (signed === "origin")
        part.signature = encodeOriginSignature({ format: "openai", provider: "p", field: "reasoning_content" });
      return part;
    }),
  fc
    .record({
      id: fc.stringMatching(/^call_[a-z0-9]{1,6}$/),
      input: fc.dictionary(fc.stringMatching(/^[a-z]{1,4}$/), fc.jsonValue(), { maxKeys: 3 }),
    })
    .map(({ id, input }): Part => ({ type: "tool_call", id, name: "tool", input })),
  fc.stringMatching(/^[A-Za-z0-9+/]{4,12}$/).map((data): Part => ({ type: "redacted_thinking", data })),
);

const answerArbitrary = fc.record({
  parts: fc.array(partArbitrary, { maxLength: 6 }),
  stop: fc.constantFrom("end_turn", "tool_use", "max_tokens", "refusal") as fc.Arbitrary<
    "end_turn" | "tool_use" | "max_tokens" | "refusal"
  >,
  cuts: fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 4 }),
});

/** An answer as an upstream might stream it: each block's text and arguments in pieces of the given sizes. */
function eventsOf(answer: ConversationResponse, cuts: number[]): StreamEvent[] {
  const events: StreamEvent[] = [{ type: "message-start", id: answer.id, model: answer.model }];
  const pieces = (value: string) => {
    const out: string[] = [];
    for (let at = 0, turn = 0; at < value.length; turn++) {
      const size = cuts[turn % cuts.length]!;
      out.push(value.slice(at, at + size));
      at += size;
    }
    return out;
  };
  answer.message.parts.forEach((part, index) => {
    switch (part.type) {
      case "text":
        events.push({ type: "block-start", index, part: { type: "text", text: "" } });
        for (const piece of pieces(part.text)) events.push({ type: "text-delta", index, text: piece });
        break;
      case "thinking":
        events.push({ type: "block-start", index, part: { type: "thinking", thinking: "" } });
        for (const piece of pieces(part.thinking)) events.push({ type: "thinking-delta", index, thinking: piece });
        if (part.signature !== undefined) events.push({ type: "signature", index, signature: part.signature });
        break;
      case "tool_call":
        events.push({ type: "block-start", index, part: { ...part, input: {} } });
        for (const piece of pieces(JSON.stringify(part.input)))
          events.push({ type: "tool-input-delta", index, partialJson: piece });
        break;
      default:
        events.push({ type: "block-start", index, part });
    }
    events.push({ type: "block-end", index });
  });
  events.push({ type: "finish", stopReason: answer.stopReason, usage: answer.usage });
  return events;
}

describe("any answer, streamed to a Responses client", () => {
  test("is a valid event sequence that assembles to the whole answer's response, however it was cut", async () => {
    await fc.assert(
      fc.asyncProperty(answerArbitrary, async ({ parts, stop, cuts }) => {
        const answer = accumulate(
          eventsOf(
            {
              id: "up_1",
              model: "m",
              message: { role: "assistant", parts },
              stopReason: { unified: stop, raw: stop },
              usage: { inputTokens: 3, outputTokens: 4 },
            },
            [1000],
          ),
        );
        const streamed = encode(eventsOf(answer, cuts));
        const checked = checkResponsesStream(streamed);
        const whole = coreToResponsesResponse(answer, { answerId: "resp_test" }).value;
        expect(withoutTime(checked.assembled)).toEqual(withoutTime(whole));
        expect(withoutTime(checked.last)).toEqual(withoutTime(whole));
        expect(withoutTime(await sdkFinal(streamed))).toMatchObject(withoutTime(whole));
      }),
      { numRuns: 150 },
    );
  });
});

describe("Parley's own answers, recorded", () => {
  test("a whole recorded answer goes to a client with its reasoning and text in order", () => {
    const answer = responsesResponseToCore(fixtureJson("openai-responses/gpt-5-mini-reasoning-encrypted.json"), {
      provider: "openai",
    }).value;
    const out = coreToResponsesResponse(answer, { answerId: "resp_x" }).value;
    expect(out.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    // The provider's message keeps its id; its part is a plain output_text (no bookkeeping of Parley's leaks in).
    expect(out.output[1]).toEqual({
      id: "msg_0f35ed53160b395301693cc95c1d288190997018450969162b",
      type: "message",
      status: "completed",
      role: "assistant",
      content: [
        { type: "output_text", text: "12 + 7 = 19\n19 × 3 = 57\n57 × 10 = 570\n\nFinal result: 570", annotations: [] },
      ],
    });
    expect(out.status).toBe("completed");
    expect(out.usage).toEqual({
      input_tokens: 865,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 163,
      output_tokens_details: { reasoning_tokens: 128 },
      total_tokens: 1028,
    });
  });
});
