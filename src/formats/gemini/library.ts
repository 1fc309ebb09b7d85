import { checkMessages, checkRequest, checkResponse } from "../../core/check.js";
import type {
  ConversationRequest,
  ConversationResponse,
  Converted,
  IncrementalDecoder,
  Message,
} from "../../core/index.js";
import type { SseMessage } from "../../stream/sse.js";
import type { ClientStreamEncoder, RepairTarget } from "../adapter.js";
import { answerObject, presetOf, throwIfError } from "../codec.js";
import { ContentsWriter } from "./contents-from-core.js";
import { coreToGeminiRequest, coreToGeminiResponse, type GeminiAnswerOptions } from "./from-core.js";
import { geminiHistory } from "./history.js";
import { createGeminiStreamDecoder, type GeminiDecodeOptions } from "./stream-decoder.js";
import { createGeminiStreamEncoder } from "./stream-encoder.js";
import { geminiRequestToCore, geminiResponseToCore } from "./to-core.js";
import { checkGeminiAnswer, GEMINI_REPAIR_TARGET, geminiNotAnAnswer } from "./upstream.js";
import { parseGeminiRequest } from "./validate-request.js";
import type { GeminiContent, GeminiRequest, GeminiResponse } from "./wire-types.js";

/**
 * Google's Gemini API for the library: the names every format has (`FormatCodec`, `src/formats/codec.ts`), exported
 * as `fromGeminiRequest`, `toGeminiRequest`... (`src/library/codecs.ts`). It has no presets; `provider` names the
 * one thoughts and signatures come from and go back to: its signatures go back on exactly the parts they rode on,
 * to it alone; other thinking goes as text (`reasoning: "think-tags"`) or not at all (`"drop"`). A request's model
 * is in Gemini's URL, not its body: `fromRequest` reads `model` from the body when it has one.
 */

export type * from "./wire-types.js";

export type GeminiPresetName = never;

export interface GeminiOptions {
  preset?: GeminiPresetName;
  /** The provider whose signatures and thoughts these are and go back to: origins record it. */
  provider?: string;
  /** How thinking another provider made goes to this one: as text in `<think>` tags (the default), or not at all. */
  reasoning?: "think-tags" | "drop";
}

export type { GeminiAnswerOptions };

export const presets: readonly GeminiPresetName[] = [];

function providerOf(options: GeminiOptions | undefined): string | undefined {
  presetOf(options, presets);
  return options?.provider;
}

function decodeOptions(options: GeminiOptions | undefined): GeminiDecodeOptions {
  const provider = providerOf(options);
  return provider === undefined ? {} : { provider };
}

/** A `generateContent` body, checked, as a canonical request (its `model` from the body, when it names one). */
export function fromRequest(body: unknown): Converted<ConversationRequest> {
  const model = (body as { model?: unknown } | null)?.model;
  const name = typeof model === "string" ? model.replace(/^models\//, "") : "";
  return geminiRequestToCore(parseGeminiRequest(body), { model: name, stream: false });
}

/** A canonical request as a `generateContent` body for a provider (the model goes in the URL). */
export function toRequest(request: ConversationRequest, options?: GeminiOptions): Converted<GeminiRequest> {
  const provider = providerOf(options);
  return coreToGeminiRequest(checkRequest(request), {
    reasoning: options?.reasoning ?? "think-tags",
    ...(provider === undefined ? {} : { provider }),
  });
}

/** A whole `GenerateContentResponse`. An error body in its place throws an `UpstreamError` of its type. */
export function fromResponse(body: unknown, options?: GeminiOptions): Converted<ConversationResponse> {
  const object = answerObject(body);
  throwIfError(geminiNotAnAnswer(object));
  checkGeminiAnswer(object);
  return geminiResponseToCore(object as GeminiResponse, decodeOptions(options));
}

/** A canonical answer as the response a Gemini client gets; what must go back to its maker rides in signatures. */
export function toResponse(response: ConversationResponse, options?: GeminiAnswerOptions): Converted<GeminiResponse> {
  return coreToGeminiResponse(checkResponse(response), options);
}

/** An array of Gemini contents. */
export function fromMessages(messages: unknown): Converted<Message[]> {
  const read = geminiHistory.toCore(messages);
  return { value: read.messages, lossy: read.lossy };
}

/** Messages as Gemini contents for a provider (its own signatures on their parts). */
export function toMessages(messages: readonly Message[], options?: GeminiOptions): Converted<GeminiContent[]> {
  const provider = providerOf(options);
  const writer = new ContentsWriter({
    kind: "provider",
    reasoning: options?.reasoning ?? "think-tags",
    ...(provider === undefined ? {} : { provider }),
  });
  return { value: writer.contents(checkMessages(messages)), lossy: writer.lossy };
}

export function streamDecoder(options?: GeminiOptions): IncrementalDecoder<SseMessage> {
  return createGeminiStreamDecoder(decodeOptions(options));
}

export function streamEncoder(options: { model?: string; answerId?: string } = {}): ClientStreamEncoder {
  const encoder = createGeminiStreamEncoder(options);
  return {
    encode: (event) => encoder.encode(event),
    ping: () => "",
    error: (error) => encoder.error(error),
    end: () => "",
  };
}

export function repairTarget(options?: GeminiOptions): RepairTarget {
  const provider = providerOf(options);
  return provider === undefined ? GEMINI_REPAIR_TARGET : { ...GEMINI_REPAIR_TARGET, provider };
}
