/** Stream decoders and encoders: SSE in, core events, SSE out, in any chunking. */
export { accumulate } from "./accumulate.js";
export { createAnthropicStreamDecoder } from "./anthropic-decoder.js";
export { createAnthropicStreamEncoder } from "./anthropic-encoder.js";
export { createOpenAIChunkDecoder, createOpenAIStreamDecoder, type OpenAIDecodeOptions } from "./openai-decoder.js";
export { createOpenAIStreamEncoder } from "./openai-encoder.js";
export { formatSse, parseSse, SseDecoder, type SseMessage } from "./sse.js";
export { createTextToolCallParser, type TextToolCallFormat } from "./text-tool-calls/index.js";
export {
  createThinkTagParser,
  type ThinkSegment,
  type ThinkSegmentSink,
  type ThinkTagParser,
} from "./think-tags.js";
