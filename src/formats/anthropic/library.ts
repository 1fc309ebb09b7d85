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
import { coreToAnthropicMessages, coreToAnthropicRequest, coreToAnthropicResponse } from "./from-core.js";
import { ANTHROPIC_PRESET_NAMES, ANTHROPIC_PRESETS, type AnthropicPresetName } from "./presets.js";
import { wrapAnswerSignatures, wrapStreamSignatures } from "./signatures.js";
import { createAnthropicStreamDecoder } from "./stream-decoder.js";
import { createAnthropicStreamEncoder } from "./stream-encoder.js";
import { anthropicMessagesToCore, anthropicRequestToCore, anthropicResponseToCore } from "./to-core.js";
import { ANTHROPIC_REPAIR_TARGET, anthropicNotAnAnswer, checkAnthropicAnswer, hoistLeadingSystem } from "./upstream.js";
import { parseAnthropicMessages, parseAnthropicRequest } from "./validate-request.js";
import type { AnthropicMessage, AnthropicMessageResponse, AnthropicRequestBody } from "./wire-types.js";

/**
 * Anthropic Messages for the library: the names every format has (`FormatCodec`, `src/formats/codec.ts`), exported
 * as `fromAnthropicRequest`, `toAnthropicRequest`... (`src/library/codecs.ts`). A preset of a provider that signs its thinking itself (DeepSeek, Kimi,
 * GLM...) wraps what it signed in an envelope naming it on the way in and takes it out again only on the way back
 * to it, as the gateway does: Anthropic would answer such a signature with 400.
 */

export type { AnthropicPresetName } from "./presets.js";
export type * from "./wire-types.js";

export interface AnthropicOptions {
  preset?: AnthropicPresetName;
  /** The name signature envelopes record for the provider; default: the preset's. */
  provider?: string;
}

export const presets: readonly AnthropicPresetName[] = ANTHROPIC_PRESET_NAMES;

/** The provider whose signatures are wrapped for the options' preset, or undefined (Anthropic's own, none named). */
function signatureOwner(options: AnthropicOptions | undefined): string | undefined {
  const preset = presetOf(options, ANTHROPIC_PRESET_NAMES);
  if (preset === undefined || ANTHROPIC_PRESETS[preset]?.signatures !== "own") return undefined;
  return options?.provider ?? preset;
}

/** A `POST /v1/messages` body, checked, as a canonical request. */
export function fromRequest(body: unknown): Converted<ConversationRequest> {
  return anthropicRequestToCore(parseAnthropicRequest(body));
}

/** A canonical request as a Messages API body; leading system messages become its `system`. */
export function toRequest(request: ConversationRequest, options?: AnthropicOptions): Converted<AnthropicRequestBody> {
  const owner = signatureOwner(options);
  return coreToAnthropicRequest(
    hoistLeadingSystem(checkRequest(request)),
    owner === undefined ? {} : { signatureOwner: owner },
  );
}

/** A whole answer as a canonical one; an error document throws an `UpstreamError` of its type. */
export function fromResponse(body: unknown, options?: AnthropicOptions): Converted<ConversationResponse> {
  const answer = answerObject(body);
  throwIfError(anthropicNotAnAnswer(answer));
  checkAnthropicAnswer(answer);
  const owner = signatureOwner(options);
  const wrapped = owner === undefined ? answer : wrapAnswerSignatures(answer, owner);
  return { value: anthropicResponseToCore(wrapped as AnthropicMessageResponse), lossy: [] };
}

/** A canonical answer as a Messages API answer; thinking Anthropic did not sign carries its origin envelope. */
export function toResponse(response: ConversationResponse): Converted<AnthropicMessageResponse> {
  return coreToAnthropicResponse(checkResponse(response));
}

/** A history of Anthropic messages, checked, as canonical messages (system messages stay in place). */
export function fromMessages(messages: unknown, options?: AnthropicOptions): Converted<Message[]> {
  const wire = parseAnthropicMessages(messages, "messages");
  const owner = signatureOwner(options);
  const read =
    owner === undefined
      ? wire
      : wire.map((message) =>
          message.role === "assistant" ? (wrapAnswerSignatures(message, owner) as AnthropicMessage) : message,
        );
  return { value: anthropicMessagesToCore(read), lossy: [] };
}

export function toMessages(messages: readonly Message[], options?: AnthropicOptions): Converted<AnthropicMessage[]> {
  const owner = signatureOwner(options);
  return coreToAnthropicMessages(
    checkMessages(messages) as Message[],
    owner === undefined ? {} : { signatureOwner: owner },
  );
}

/** Anthropic SSE messages in, canonical events out; a stream that ends before `message_stop` ends in an error. */
export function streamDecoder(options?: AnthropicOptions): IncrementalDecoder<SseMessage> {
  const owner = signatureOwner(options);
  const decoder = createAnthropicStreamDecoder();
  return owner === undefined ? decoder : wrapStreamSignatures(decoder, owner);
}

/** Canonical events in, Anthropic SSE text out (`model`: the name the client sees). */
export function streamEncoder(options: { model?: string } = {}): ClientStreamEncoder {
  const encoder = createAnthropicStreamEncoder(options.model === undefined ? {} : { model: options.model });
  return {
    encode: (event) => encoder.encode(event),
    ping: () => encoder.ping(),
    error: (error) => encoder.error(error),
    end: () => "",
  };
}

/** The Messages API's history rules; with a signing provider's preset, only its own signatures go back signed. */
export function repairTarget(options?: AnthropicOptions): RepairTarget {
  const owner = signatureOwner(options);
  return owner === undefined
    ? ANTHROPIC_REPAIR_TARGET
    : { ...ANTHROPIC_REPAIR_TARGET, signatureOwner: owner, provider: owner };
}
