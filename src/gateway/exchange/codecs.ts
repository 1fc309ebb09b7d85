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
export { createAnthropicStreamDecoder } from "../../formats/anthropic/stream-decoder.js";
export { createAnthropicStreamEncoder } from "../../formats/anthropic/stream-encoder.js";
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
export { createOpenAIStreamDecoder, type OpenAIDecodeOptions } from "../../formats/openai-chat/stream-decoder.js";
export { createOpenAIStreamEncoder } from "../../formats/openai-chat/stream-encoder.js";
