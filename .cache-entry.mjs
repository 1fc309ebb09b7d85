import { readStream } from "./dist/library/stream.js";
import { anthropicStreamDecoder as a, openaiStreamDecoder as o } from "./dist/library/codecs.js";
const first = readStream(globalThis.body, o({ preset: "vllm" }));
const second = readStream(globalThis.body, a({ preset: "deepseek" }));
console.log(await first.message(), await second.message());