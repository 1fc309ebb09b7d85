/**
 * Parley as a library: the canonical model at the centre, a codec per API format, stream decoders and
 * encoders, repair and normalize, the conversation store and the gateway.
 */
export * from "./core/index.js";
export type {
  AnswerState,
  ClientSide,
  ClientStreamEncoder,
  FormatAdapter,
  HistoryCodec,
  SameFormatPassthrough,
  UpstreamConnection,
  UpstreamSide,
} from "./formats/adapter.js";
export * from "./formats/anthropic/index.js";
export * from "./formats/openai-chat/index.js";
export * from "./formats/openai-responses/index.js";
export * from "./formats/registry.js";
export * from "./gateway/index.js";
export * from "./repair/index.js";
export * from "./store/index.js";
export * from "./stream/index.js";
export * from "./text/index.js";
