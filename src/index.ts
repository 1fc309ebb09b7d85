/** Parley as a library: the canonical model; codecs, streams, repair and store are exported as they land. */
export * from "./core/index.js";
export { formatSse, parseSse, SseDecoder, type SseMessage } from "./stream/sse.js";
