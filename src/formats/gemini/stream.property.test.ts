import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { cutAt } from "../../../test/support/cut.js";
import { geminiSignature, type Part, type StreamEvent, signaturePart } from "../../core/index.js";
import { accumulate } from "../../stream/accumulate.js";
import { SseDecoder } from "../../stream/sse.js";
import { contentsToCore } from "./contents-to-core.js";
import { coreToGeminiResponse } from "./from-core.js";
import { createGeminiStreamDecoder } from "./stream-decoder.js";
import { createGeminiStreamEncoder } from "./stream-encoder.js";
import { clientReader, geminiResponseToCore } from "./to-core.js";
import type { GeminiPart, GeminiResponse } from "./wire-types.js";

/**
 * Gemini streams deltas: each event a whole `GenerateContentResponse` holding the parts new since the last. Any
 * answer, its text and thoughts cut into any events and the SSE text cut anywhere, folds to what the whole answer
 * reads as; and what Parley streams to a Gemini client reads back as what it sends whole.
 */
const word = fc.string({ minLength: 1, maxLength: 6 });
const signature = fc.option(fc.stringMatching(/^[A-Za-z0-9+/]{4,12}$/), { nil: undefined });

/** One part of an answer: a thought, a text, a call (each maybe signed), or a signature on an empty part. */
const part = fc.oneof(
  fc.record({ text: word, thought: fc.constant(true as const), thoughtSignature: signature }),
  fc.record({ text: word, thoughtSignature: signature }),
  fc.record({
    functionCall: fc.record({
      name: fc.constantFrom("read", "grep"),
      args: fc.dictionary(fc.constantFrom("a", "b"), fc.integer()),
    }),
    thoughtSignature: signature,
  }),
  fc.record({ text: fc.constant(""), thoughtSignature: fc.stringMatching(/^[A-Za-z0-9]{4,8}$/) }),
);

/**
 * No two text parts (or two unsigned thoughts) in a row: a stream cannot tell them from one part cut in two (a text's
 * signature may come on its first piece, so it does not end the text either).
 */
const parts = fc.array(part, { minLength: 1, maxLength: 6 }).map(separated);

function separated(drawn: readonly object[]): GeminiPart[] {
  const kind = (p: GeminiPart) => (p.functionCall ? "call" : p.thought ? "thought" : p.text === "" ? "own" : "text");
  const out: GeminiPart[] = [];
  for (const item of drawn) {
    const next = JSON.parse(JSON.stringify(item)) as GeminiPart;
    const before = out.at(-1);
    if (
      before !== undefined &&
      kind(before) === kind(next) &&
      kind(next) !== "call" &&
      (kind(next) === "text" || before.thoughtSignature === undefined)
    )
      continue;
    out.push(next);
  }
  return out;
}

function whole(list: GeminiPart[]): GeminiResponse {
  return {
    candidates: [{ content: { role: "model", parts: list }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 3, totalTokenCount: 18 },
    modelVersion: "gemini-3-pro-preview",
    responseId: "r1",
  };
}

/** The parts as events: texts and thoughts cut where `points` say (a signature on the last piece). */
function events(list: GeminiPart[], points: number[]): GeminiResponse[] {
  const pieces: GeminiPart[] = [];
  for (const item of list) {
    if (item.functionCall !== undefined || item.text === undefined || item.text === "") {
      pieces.push(item);
      continue;
    }
    const cut = cutAt(item.text, points).filter((piece) => piece !== "");
    cut.forEach((text, index) => {
      const piece: GeminiPart = { text };
      if (item.thought) piece.thought = true;
      if (index === cut.length - 1 && item.thoughtSignature !== undefined)
        piece.thoughtSignature = item.thoughtSignature;
      pieces.push(piece);
    });
  }
  const body = whole([]);
  const out: GeminiResponse[] = pieces.map((piece) => ({
    candidates: [{ content: { role: "model", parts: [piece] }, index: 0 }],
    modelVersion: body.modelVersion!,
    responseId: body.responseId!,
  }));
  out.push({ ...body, candidates: [{ content: { role: "model", parts: [] }, finishReason: "STOP", index: 0 }] });
  return out;
}

/**
 * A text's signature that came on a later piece of the text follows it in a stream (the text is out by then); the
 * whole answer puts it before its text. Both go back to Gemini on the same part: this puts the first where the second
 * stands.
 */
function signaturesBeforeTheirTexts(parts: readonly Part[]): Part[] {
  const out = [...parts];
  for (let index = 1; index < out.length; index++) {
    const signature = geminiSignature(out[index]!);
    const text = out[index - 1]!;
    if (signature === undefined || signature.id !== undefined || signature.field !== undefined || text.type !== "text")
      continue;
    out.splice(index - 1, 2, signaturePart(signature.sealed, signature.provider, "next-text"), text);
  }
  return out;
}

function decode(text: string, cuts: number[]): StreamEvent[] {
  const sse = new SseDecoder();
  const decoder = createGeminiStreamDecoder({ provider: "google" });
  const out: StreamEvent[] = [];
  for (const piece of cutAt(text, cuts)) for (const message of sse.push(piece)) out.push(...decoder.push(message));
  for (const message of sse.finish?.() ?? []) out.push(...decoder.push(message));
  out.push(...decoder.finish());
  return out;
}

describe("Gemini streams", () => {
  test("any answer, cut into any events and any bytes, folds to what the whole answer reads as", () => {
    fc.assert(
      fc.property(
        parts,
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (list, points, cuts) => {
          const text = events(list, points)
            .map((event) => `data: ${JSON.stringify(event)}\r\n\r\n`)
            .join("");
          const streamed = accumulate(decode(text, cuts));
          const expected = geminiResponseToCore(whole(list), { provider: "google" }).value;
          const parts = signaturesBeforeTheirTexts(streamed.message.parts);
          expect({ ...streamed.message, parts }).toEqual(expected.message);
          expect(streamed.stopReason).toEqual(expected.stopReason);
          expect(streamed.usage).toEqual(expected.usage);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("what Parley streams to a Gemini client reads back as the whole answer it would send", () => {
    fc.assert(
      fc.property(parts, (list) => {
        const core = geminiResponseToCore(whole(list), { provider: "google" }).value;
        const text = events(list, [])
          .map((event) => `data: ${JSON.stringify(event)}\n\n`)
          .join("");
        const encoder = createGeminiStreamEncoder({});
        const frames = decode(text, [])
          .map((event) => encoder.encode(event))
          .join("");
        const sent = new SseDecoder().push(frames).flatMap((message) => {
          const body = JSON.parse(message.data) as GeminiResponse;
          return body.candidates?.[0]?.content?.parts ?? [];
        });
        const wholeParts = coreToGeminiResponse(core).value.candidates![0]!.content!.parts;
        // What a client keeps (no thoughts) reads back as the same parts, streamed or whole.
        const read = (kept: GeminiPart[]) =>
          contentsToCore([{ role: "model", parts: kept.filter((p) => p.thought !== true) }], clientReader, "c")
            .messages[0]!.parts;
        expect(read(sent)).toEqual(read(wholeParts));
        expect(read(wholeParts).filter((p) => p.type !== "thinking" || p.signature !== undefined)).toEqual(
          core.message.parts.filter((p) => p.type !== "thinking" || p.signature !== undefined),
        );
      }),
      { numRuns: 200 },
    );
  });
});
