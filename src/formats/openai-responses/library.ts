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
import { coreToResponsesRequest, coreToResponsesResponse } from "./from-core.js";
import { responsesHistory } from "./history.js";
import { ItemWriter } from "./items-from-core.js";
import { createResponsesStreamDecoder, type ResponsesDecodeOptions } from "./stream-decoder.js";
import { createResponsesStreamEncoder } from "./stream-encoder.js";
import { responsesRequestToCore, responsesResponseToCore } from "./to-core.js";
import { checkResponsesAnswer, RESPONSES_REPAIR_TARGET, responsesNotAnAnswer } from "./upstream.js";
import { parseResponsesRequest } from "./validate-request.js";
import type { ResponsesItem, ResponsesObject, ResponsesRequest } from "./wire-types.js";

/**
 * The OpenAI Responses API for the library: the names every format has (`FormatCodec`, `src/formats/codec.ts`),
 * exported as `fromResponsesRequest`, `toResponsesRequest`... (`src/library/codecs.ts`). It has no presets (the
 * servers that speak it have no quirks Parley knows of); `provider` names the one reasoning comes from and goes back
 * to: a provider's reasoning item (its id and sealed `encrypted_content`) goes back to that provider alone, as it
 * came, and to any other as text (`reasoning: "think-tags"`) or not at all (`"drop"`).
 */

export type * from "./wire-types.js";

/** The Responses API has no presets: a name given is refused. */
export type ResponsesPresetName = never;

export interface ResponsesOptions {
  preset?: ResponsesPresetName;
  /** The provider whose reasoning this is and goes back to: origins record it. */
  provider?: string;
  /** How thinking another provider made goes to this one: as text in `<think>` tags (the default), or not at all. */
  reasoning?: "think-tags" | "drop";
}

/** What writing a whole answer for a Responses client may take: the request it answers, its id and time. */
export interface ResponsesAnswerOptions {
  /** The request answered: its tools say how a call is written (function or custom), its settings are repeated. */
  request?: ConversationRequest;
  /** The response's id (`resp_...`); absent, a new one. */
  answerId?: string;
  /** When the answer began, in Unix seconds; absent, now. */
  createdAt?: number;
}

export const presets: readonly ResponsesPresetName[] = [];

function providerOf(options: ResponsesOptions | undefined): string | undefined {
  presetOf(options, presets);
  return options?.provider;
}

function decodeOptions(options: ResponsesOptions | undefined): ResponsesDecodeOptions {
  const provider = providerOf(options);
  return provider === undefined ? {} : { provider };
}

/** A `POST /v1/responses` body, checked, as a canonical request (`instructions` as a leading system message). */
export function fromRequest(body: unknown): Converted<ConversationRequest> {
  return responsesRequestToCore(parseResponsesRequest(body));
}

/**
 * A canonical request as a Responses body for a provider. Parley keeps the conversation itself, so the provider is
 * asked to keep nothing (`store: false`) and to hand back its reasoning sealed (`reasoning.encrypted_content`).
 */
export function toRequest(request: ConversationRequest, options?: ResponsesOptions): Converted<ResponsesRequest> {
  const provider = providerOf(options);
  return coreToResponsesRequest(checkRequest(request), {
    reasoning: options?.reasoning ?? "think-tags",
    ...(provider === undefined ? {} : { provider }),
  });
}

/** A whole response object as a canonical answer; an error object or a failed response throws an `UpstreamError`. */
export function fromResponse(body: unknown, options?: ResponsesOptions): Converted<ConversationResponse> {
  const answer = answerObject(body);
  throwIfError(responsesNotAnAnswer(answer));
  checkResponsesAnswer(answer);
  return responsesResponseToCore(answer, decodeOptions(options));
}

/** A canonical answer as the response object a Responses client gets; reasoning sealed in Parley's envelope. */
export function toResponse(
  response: ConversationResponse,
  options: ResponsesAnswerOptions = {},
): Converted<ResponsesObject> {
  return coreToResponsesResponse(checkResponse(response), options);
}

/**
 * A history of Responses input items, checked, as canonical messages (a call's output joins a user message). With
 * `provider`, reasoning items without Parley's envelope are that provider's, and go back to it as they came.
 */
export function fromMessages(messages: unknown, options?: ResponsesOptions): Converted<Message[]> {
  const provider = providerOf(options);
  const read = responsesHistory.toCore(messages);
  if (provider !== undefined)
    for (const message of read.messages)
      for (const part of message.parts)
        if (part.type === "thinking" && part.origin?.format === "responses" && part.origin.provider === undefined)
          part.origin.provider = provider;
  return { value: read.messages, lossy: read.lossy };
}

/** Canonical messages as the input items a request to `provider` holds (what `toRequest` writes as its `input`). */
export function toMessages(messages: readonly Message[], options?: ResponsesOptions): Converted<ResponsesItem[]> {
  const provider = providerOf(options);
  const writer = new ItemWriter(
    {
      kind: "provider",
      reasoning: options?.reasoning ?? "think-tags",
      ...(provider === undefined ? {} : { provider }),
    },
    undefined,
  );
  return { value: writer.messages(checkMessages(messages) as Message[]), lossy: writer.lossy };
}

/**
 * SSE messages of a Responses stream in, canonical events out. A body that ends before `response.completed` (or
 * `response.incomplete`) ends in an error; `response.failed` is the error it reports.
 */
export function streamDecoder(options?: ResponsesOptions): IncrementalDecoder<SseMessage> {
  return createResponsesStreamDecoder(decodeOptions(options));
}

/**
 * Canonical events in, Responses SSE text out (`response.created` ... `response.completed`, each with its
 * `sequence_number`); `model`: the name the client sees; the answer options as `toResponse` takes them.
 */
export function streamEncoder(options: ResponsesAnswerOptions & { model?: string } = {}): ClientStreamEncoder {
  const encoder = createResponsesStreamEncoder(options);
  return {
    encode: (event) => encoder.encode(event),
    // An SSE comment: ignored by the SDKs and by Codex, keeps proxies from closing an idle connection.
    ping: () => ": ping\n\n",
    error: (error) => encoder.error(error),
    end: () => "",
  };
}

/** The Responses API's history rules: every call answered by its output, no output without its call. */
export function repairTarget(options?: ResponsesOptions): RepairTarget {
  const provider = providerOf(options);
  return provider === undefined ? RESPONSES_REPAIR_TARGET : { ...RESPONSES_REPAIR_TARGET, provider };
}
