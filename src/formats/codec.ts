import type {
  ConversationRequest,
  ConversationResponse,
  Converted,
  IncrementalDecoder,
  Message,
} from "../core/index.js";
import { InvalidRequestError, isErrorType, isRetryableErrorType, UpstreamError } from "../core/index.js";
import type { SseMessage } from "../stream/sse.js";
import type { ClientStreamEncoder, NotAnAnswer, RepairTarget } from "./adapter.js";

/**
 * One API format as the library offers it: the same names for every format, each a module of its format's folder
 * (`<api>/library.ts`), exported with the format's name in them (`fromAnthropicRequest`, `fromOpenAIRequest`) and
 * by id (`codecs.anthropic.fromRequest`) built from the pieces its
 * adapter is built from, so that a program pays only for the functions it calls. `from*` reads the API's JSON into
 * the canonical model, checking it first (an `InvalidRequestError` naming the field); `to*` writes canonical values
 * (checked too: they may come from JSON) as the API's JSON. Options name a provider's preset, which alone
 * configures both directions: its quirks going out, and whose reasoning and signatures come back. Each format
 * types its own options (`preset` by its presets' names), so options are only `object` here.
 */
export interface FormatCodec {
  fromRequest(body: unknown): Converted<ConversationRequest>;
  toRequest(request: ConversationRequest, options?: object): Converted<unknown>;
  /** A whole answer. An error document in its place throws an `UpstreamError` of its type. */
  fromResponse(body: unknown, options?: object): Converted<ConversationResponse>;
  toResponse(response: ConversationResponse, options?: object): Converted<unknown>;
  /** A history: an array of the API's messages. */
  fromMessages(messages: unknown, options?: object): Converted<Message[]>;
  toMessages(messages: readonly Message[], options?: object): Converted<unknown[]>;
  /** SSE messages of an answer's stream in, canonical stream events out; `finish()` after the last one. */
  streamDecoder(options?: object): IncrementalDecoder<SseMessage>;
  /** Canonical stream events in, the API's SSE text out. */
  streamEncoder(options?: object): ClientStreamEncoder;
  /** What a history must be for this API (or this preset's provider) to take it: `repair`'s target. */
  repairTarget(options?: object): RepairTarget;
  /** The presets' names. */
  readonly presets: readonly string[];
}

/** What every format's options have; each format narrows `preset` to its own names. */
export interface CodecOptions {
  preset?: string;
  /** The name reasoning origins and signature envelopes record for the provider; default: the preset's. */
  provider?: string;
}

/** The preset named, checked against the names (for callers without the types), or undefined. */
export function presetOf(options: CodecOptions | undefined, names: readonly string[]): string | undefined {
  const preset = options?.preset;
  if (preset === undefined) return undefined;
  if (typeof preset !== "string" || !names.includes(preset))
    throw new InvalidRequestError(`unknown preset ${JSON.stringify(preset)} (known: ${names.join(", ")})`, "preset");
  return preset;
}

/** A whole answer's body as an object, or an `InvalidRequestError`. */
export function answerObject(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new InvalidRequestError(`the answer must be a JSON object, got ${body === null ? "null" : typeof body}`);
  return body as Record<string, unknown>;
}

/**
 * An error document in place of an answer, as the typed error it reports; anything else passes (what is missing of
 * an answer is for the format's check, which names the field).
 */
export function throwIfError(problem: NotAnAnswer | undefined): void {
  if (problem === undefined || "noAnswer" in problem) return;
  const { type, message, status } = problem.error;
  const known = isErrorType(type) ? type : "api_error";
  throw new UpstreamError(known, message, {
    retryable: isRetryableErrorType(known),
    ...(status === undefined ? {} : { upstreamStatus: status }),
  });
}
