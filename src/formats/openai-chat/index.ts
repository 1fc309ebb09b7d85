export * from "./compat.js";
export * from "./from-core.js";
export * from "./map-finish-reason.js";
export { createOpenAIChunkDecoder, createOpenAIStreamDecoder } from "./stream-decoder.js";
export { createOpenAIStreamEncoder } from "./stream-encoder.js";
export * from "./to-core.js";
export * from "./usage.js";
export * from "./validate-request.js";
export type * from "./wire-types.js";
