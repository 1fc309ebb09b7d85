export {
  coreToAnthropicMessages,
  coreToAnthropicRequest,
  coreToAnthropicResponse,
  DEFAULT_MAX_TOKENS,
} from "./from-core.js";
export { anthropicStopReasonFromCore, mapAnthropicStopReason } from "./map-stop-reason.js";
export { createAnthropicStreamDecoder } from "./stream-decoder.js";
export { createAnthropicStreamEncoder } from "./stream-encoder.js";
export {
  anthropicBlockToCore,
  anthropicMessagesToCore,
  anthropicMessageToCore,
  anthropicRequestToCore,
  anthropicResponseToCore,
} from "./to-core.js";
export { anthropicUsageToCore, coreUsageToAnthropic, partialAnthropicUsageToCore } from "./usage.js";
export { parseAnthropicMessages, parseAnthropicRequest, parseCountTokensRequest } from "./validate-request.js";
export type * from "./wire-types.js";
