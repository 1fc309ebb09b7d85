/** `parley/stream`: an answer's stream read as canonical events and folded into the whole answer. */
export { IncompleteStreamError } from "../core/errors.js";
export type * from "../core/stream-events.js";
export { accumulate } from "../stream/accumulate.js";
export { type AnswerStream, type FetchResponse, readStream, type StreamSource } from "../stream/read-stream.js";
export { formatSse, parseSse, SseDecoder, type SseMessage } from "../stream/sse.js";
