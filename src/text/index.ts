/** Scanners over plain text that several layers share: think tags, tool calls written as text, JSON. */
export { createTextToolCallParser, type TextToolCallFormat } from "./text-tool-calls/index.js";
export {
  createThinkTagParser,
  type ThinkSegment,
  type ThinkSegmentSink,
  type ThinkTagParser,
} from "./think-tags.js";
