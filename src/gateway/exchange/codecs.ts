/**
 * The codecs the gateway drives, gathered in one place: the gateway speaks to formats and streams only
 * through these names.
 */
export {
  anthropicMessagesToCore,
  anthropicRequestToCore,
  anthropicResponseToCore,
  coreToAnthropicMessages,
  coreToAnthropicRequest,
  coreToAnthropicResponse,
  parseAnthropicMessages,
  parseAnthropicRequest,
  parseCountTokensRequest,
} from "../../formats/anthropic/index.js";
export {
  coreToOpenAIMessages,
  coreToOpenAIRequest,
  coreToOpenAIResponse,
  type OpenAICompat,
  openaiRequestToCore,
  openaiResponseToCore,
  PRESETS,
  parseOpenAIRequest,
  type ReasoningMode,
  resolveCompat,
} from "../../formats/openai-chat/index.js";
export { createAnthropicStreamDecoder } from "../../stream/anthropic-decoder.js";
export { createAnthropicStreamEncoder } from "../../stream/anthropic-encoder.js";
export { createOpenAIStreamDecoder, type OpenAIDecodeOptions } from "../../stream/openai-decoder.js";
export { createOpenAIStreamEncoder } from "../../stream/openai-encoder.js";
