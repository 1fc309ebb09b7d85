/** SSE in any chunking, and the reducer that folds core events into an answer. */
export { accumulate } from "./accumulate.js";
export { formatSse, parseSse, SseDecoder, type SseMessage } from "./sse.js";
