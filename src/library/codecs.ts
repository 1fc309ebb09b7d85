/**
 * `parley/codecs`: every API format under one naming scheme, derived from the format's id and the names every
 * format's library module has (`FormatCodec`, `src/formats/codec.ts`): `from<Format>Request` reads the API's JSON
 * into the canonical model, `to<Format>Request` writes it back, and so for `Response` and `Messages`;
 * `<format>StreamDecoder`, `<format>StreamEncoder`, `<format>RepairTarget`, `<format>Presets`. Flat names, so that
 * any bundler keeps only what a program calls. `codecs` holds the same functions by format id, for a program that
 * holds an id (`codecs[format].fromMessages(...)`). A format is one block here and one line in `codecs`, which
 * does not compile without it once its id is in `WIRE_FORMATS`; `src/library/codecs.test.ts` checks the names.
 */
import type { WireFormat } from "../core/index.js";
import * as anthropic from "../formats/anthropic/library.js";
import type { FormatCodec } from "../formats/codec.js";
import * as gemini from "../formats/gemini/library.js";
import * as openai from "../formats/openai-chat/library.js";
import * as responses from "../formats/openai-responses/library.js";

export type { ClientStreamEncoder as StreamEncoder, ReasoningMode, RepairTarget } from "../formats/adapter.js";
export {
  type AnthropicOptions,
  type AnthropicPresetName,
  fromMessages as fromAnthropicMessages,
  fromRequest as fromAnthropicRequest,
  fromResponse as fromAnthropicResponse,
  presets as anthropicPresets,
  repairTarget as anthropicRepairTarget,
  streamDecoder as anthropicStreamDecoder,
  streamEncoder as anthropicStreamEncoder,
  toMessages as toAnthropicMessages,
  toRequest as toAnthropicRequest,
  toResponse as toAnthropicResponse,
} from "../formats/anthropic/library.js";
export type * from "../formats/anthropic/wire-types.js";
export type { CodecOptions, FormatCodec } from "../formats/codec.js";
export {
  fromMessages as fromGeminiMessages,
  fromRequest as fromGeminiRequest,
  fromResponse as fromGeminiResponse,
  type GeminiAnswerOptions,
  type GeminiOptions,
  type GeminiPresetName,
  presets as geminiPresets,
  repairTarget as geminiRepairTarget,
  streamDecoder as geminiStreamDecoder,
  streamEncoder as geminiStreamEncoder,
  toMessages as toGeminiMessages,
  toRequest as toGeminiRequest,
  toResponse as toGeminiResponse,
} from "../formats/gemini/library.js";
export type * from "../formats/gemini/wire-types.js";
export {
  fromMessages as fromOpenAIMessages,
  fromRequest as fromOpenAIRequest,
  fromResponse as fromOpenAIResponse,
  type OpenAIDecodeSettings,
  type OpenAIOptions,
  type OpenAIPresetName,
  presets as openaiPresets,
  repairTarget as openaiRepairTarget,
  streamDecoder as openaiStreamDecoder,
  streamEncoder as openaiStreamEncoder,
  toMessages as toOpenAIMessages,
  toRequest as toOpenAIRequest,
  toResponse as toOpenAIResponse,
} from "../formats/openai-chat/library.js";
export type * from "../formats/openai-chat/wire-types.js";
export {
  fromMessages as fromResponsesMessages,
  fromRequest as fromResponsesRequest,
  fromResponse as fromResponsesResponse,
  presets as responsesPresets,
  type ResponsesAnswerOptions,
  type ResponsesOptions,
  type ResponsesPresetName,
  repairTarget as responsesRepairTarget,
  streamDecoder as responsesStreamDecoder,
  streamEncoder as responsesStreamEncoder,
  toMessages as toResponsesMessages,
  toRequest as toResponsesRequest,
  toResponse as toResponsesResponse,
} from "../formats/openai-responses/library.js";
export type * from "../formats/openai-responses/wire-types.js";
export type { TextToolCallFormat } from "../text/text-tool-calls/index.js";

/** Every format's codec by id. */
export const codecs = { anthropic, openai, responses, gemini } as const satisfies {
  readonly [Id in WireFormat]: FormatCodec;
};
