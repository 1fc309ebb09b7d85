import { checkMessages, checkRequest, checkResponse } from "../../core/check.js";
import type {
  ConversationRequest,
  ConversationResponse,
  Converted,
  IncrementalDecoder,
  Message,
} from "../../core/index.js";
import type { SseMessage } from "../../stream/sse.js";
import type { TextToolCallFormat } from "../../text/text-tool-calls/index.js";
import type { ClientStreamEncoder, ReasoningMode, RepairTarget } from "../adapter.js";
import { answerObject, presetOf, throwIfError } from "../codec.js";
import { openaiChatClient } from "./client.js";
import { type OpenAICompat, PRESETS } from "./compat.js";
import {
  coreToOpenAIMessages,
  coreToOpenAIRequest,
  coreToOpenAIResponse,
  type OpenAIEncodeOptions,
} from "./from-core.js";
import { openaiMessagesToCore } from "./messages-to-core.js";
import { OPENAI_PRESET_NAMES, type OpenAIPresetName } from "./preset-names.js";
import { createOpenAIStreamDecoder, type OpenAIDecodeOptions } from "./stream-decoder.js";
import { openaiRequestToCore, openaiResponseToCore } from "./to-core.js";
import { checkOpenAIAnswer, openaiNotAnAnswer, openaiRepairTarget } from "./upstream.js";
import { parseOpenAIRequest } from "./validate-request.js";
import type { OpenAIChatRequest, OpenAIChatResponse, OpenAIMessage } from "./wire-types.js";

/**
 * OpenAI Chat Completions for the library: the names every format has (`FormatCodec`, `src/formats/codec.ts`),
 * exported as `fromOpenAIRequest`, `toOpenAIRequest`... (`src/library/codecs.ts`). A preset names an OpenAI-compatible server (`deepseek`, `vllm`,
 * `openrouter`...): its quirks shape what is sent, its name is recorded as the origin of the reasoning it answers
 * with, and that reasoning goes back to it in the field it came in (and to others in `reasoning`'s mode).
 */

export type { TextToolCallFormat } from "../../text/text-tool-calls/index.js";
export type { ReasoningMode } from "../adapter.js";
export type { OpenAIPresetName } from "./preset-names.js";
export type * from "./wire-types.js";

export interface OpenAIOptions {
  preset?: OpenAIPresetName;
  /** The name reasoning origins record for the provider; default: the preset's. */
  provider?: string;
  /** Where thinking goes (not the preset provider's own, which goes back as it came); default: the preset's. */
  reasoning?: ReasoningMode;
}

/** What reading an answer takes beyond the preset. */
export interface OpenAIDecodeSettings extends OpenAIOptions {
  /** The server leaves tool calls as text in this syntax (`hermes`, `glm`...): they are read as tool calls. */
  textToolCalls?: TextToolCallFormat;
  /** The request's tools, which a tool call written as text may name. */
  tools?: ConversationRequest["tools"];
}

export const presets: readonly OpenAIPresetName[] = OPENAI_PRESET_NAMES;

interface Resolved {
  compat: OpenAICompat | undefined;
  provider: string | undefined;
}

function resolve(options: OpenAIOptions | undefined): Resolved {
  const preset = presetOf(options, OPENAI_PRESET_NAMES);
  return {
    compat: preset === undefined ? undefined : PRESETS[preset],
    provider: options?.provider ?? preset,
  };
}

function encodeOptions(options: OpenAIOptions | undefined): OpenAIEncodeOptions {
  const { compat, provider } = resolve(options);
  const encode: OpenAIEncodeOptions = { reasoning: options?.reasoning ?? compat?.reasoningMode ?? "think-tags" };
  if (compat !== undefined) encode.compat = compat;
  if (provider !== undefined) encode.provider = provider;
  return encode;
}

/**
 * Whose reasoning an answer holds, and the syntax of tool calls written as text. Only the preset's name is read here,
 * so that a stream decoder does not carry the presets' table (no preset sets a text syntax: a server's own does).
 */
function decodeOptions(options: OpenAIDecodeSettings | undefined): OpenAIDecodeOptions {
  const preset = presetOf(options, OPENAI_PRESET_NAMES);
  const provider = options?.provider ?? preset;
  const decode: OpenAIDecodeOptions = {};
  if (provider !== undefined) decode.provider = provider;
  if (options?.textToolCalls !== undefined) decode.textToolCalls = options.textToolCalls;
  if (options?.tools !== undefined) decode.tools = options.tools;
  return decode;
}

/** A `POST /v1/chat/completions` body, checked, as a canonical request (system messages stay in place). */
export function fromRequest(body: unknown): Converted<ConversationRequest> {
  return openaiRequestToCore(parseOpenAIRequest(body));
}

/** A canonical request as a Chat Completions body; a streamed one asks for usage, as the gateway does. */
export function toRequest(request: ConversationRequest, options?: OpenAIOptions): Converted<OpenAIChatRequest> {
  const encode = encodeOptions(options);
  const converted = coreToOpenAIRequest(checkRequest(request), encode);
  const body = converted.value;
  if (request.stream === true && body.stream_options === undefined && encode.compat?.streamUsage !== false)
    body.stream_options = { include_usage: true };
  return converted;
}

/** A whole answer as a canonical one; an error object in its place throws an `UpstreamError` of its type. */
export function fromResponse(body: unknown, options?: OpenAIDecodeSettings): Converted<ConversationResponse> {
  const answer = answerObject(body);
  throwIfError(openaiNotAnAnswer(answer));
  checkOpenAIAnswer(answer);
  return openaiResponseToCore(answer as unknown as OpenAIChatResponse, decodeOptions(options));
}

/** A canonical answer as a Chat Completions answer; thinking goes in `reasoning`'s field (`reasoning_content`). */
export function toResponse(
  response: ConversationResponse,
  options: { reasoning?: ReasoningMode } = {},
): Converted<OpenAIChatResponse> {
  return coreToOpenAIResponse(checkResponse(response), options);
}

/** A history of chat messages, checked, as canonical messages: `tool` messages join the user message they answer. */
export function fromMessages(messages: unknown): Converted<Message[]> {
  if (Array.isArray(messages) && messages.length === 0) return { value: [], lossy: [] };
  const read = openaiMessagesToCore(parseOpenAIRequest({ model: "history", messages }).messages);
  return { value: read.messages, lossy: read.lossy };
}

export function toMessages(messages: readonly Message[], options?: OpenAIOptions): Converted<OpenAIMessage[]> {
  return coreToOpenAIMessages(checkMessages(messages) as Message[], encodeOptions(options));
}

/**
 * SSE messages of a chat completion stream in, canonical events out. A body that ends with neither `[DONE]` nor a
 * finish reason ends in an error.
 */
export function streamDecoder(options?: OpenAIDecodeSettings): IncrementalDecoder<SseMessage> {
  return createOpenAIStreamDecoder(decodeOptions(options));
}

/**
 * Canonical events in, `chat.completion.chunk` SSE text out, `data: [DONE]` from `end()` (`model`: the name the
 * client sees; `includeUsage`: a last chunk with usage).
 */
export function streamEncoder(
  options: { model?: string; reasoning?: ReasoningMode; includeUsage?: boolean } = {},
): ClientStreamEncoder {
  return openaiChatClient.streamEncoder(options);
}

/** OpenAI's own history rules, or those of the preset's server (DeepSeek and Kimi want reasoning on tool turns). */
export function repairTarget(options?: OpenAIOptions): RepairTarget {
  const { compat, provider } = resolve(options);
  return openaiRepairTarget(compat ?? { strictToolMessageOrder: true }, provider);
}
