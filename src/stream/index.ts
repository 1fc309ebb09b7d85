/** SSE in any chunking, the reducer that folds core events into an answer, and the text scanners. */
export { accumulate } from "./accumulate.js";
export { formatSse, parseSse, SseDecoder, type SseMessage } from "./sse.js";
export { createTextToolCallParser, type TextToolCallFormat } from "./text-tool-calls/index.js";
export {
  createThinkTagParser,
  type ThinkSegment,
  type ThinkSegmentSink,
  type ThinkTagParser,
} from "./think-tags.js";
