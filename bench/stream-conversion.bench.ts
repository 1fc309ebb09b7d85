import { readFileSync } from "node:fs";
import { createAnthropicStreamEncoder } from "../src/formats/anthropic/stream-encoder.js";
import { createOpenAIStreamDecoder } from "../src/formats/openai-chat/stream-decoder.js";
import { SseDecoder } from "../src/stream/sse.js";
import { createThinkTagParser, type ThinkSegmentSink } from "../src/text/think-tags.js";
import { type BenchSection, fixed, rate, sideBySide, table } from "./harness.js";

/** A realistic mix: reasoning fields, inline think tags, parallel tool calls, usage chunks. */
const MIX = [
  "huggingface/deepseek-r1-think-inline.sse",
  "deepseek/deepseek-reasoner-thinking.sse",
  "openrouter/kimi-k2.5-parallel-tools.sse",
  "zai/glm-4.7-flash-thinking-tool-call.sse",
  "openai/gpt-5-parallel-tools.sse",
  "vercel-gateway/gpt-5-thinking-tool-call.sse",
];

const streams = MIX.map((file) => readFileSync(new URL(`../test/fixtures/${file}`, import.meta.url), "utf8"));
const bytes = streams.reduce((total, text) => total + Buffer.byteLength(text), 0);
const dataLines = streams.map((text) =>
  [...new SseDecoder().push(text)].map((message) => message.data).filter((data) => data !== "[DONE]"),
);

/** OpenAI SSE text -> SSE events -> core events -> Anthropic SSE text. */
function convert(): void {
  for (const text of streams) {
    const sse = new SseDecoder();
    const decoder = createOpenAIStreamDecoder();
    const encoder = createAnthropicStreamEncoder();
    let out = 0;
    for (const message of [...sse.push(text), ...sse.finish()])
      for (const event of decoder.push(message)) out += encoder.encode(event).length;
    for (const event of decoder.finish()) out += encoder.encode(event).length;
    if (out === 0) throw new Error("no output");
  }
}

/** The floor: parse every input chunk and serialise one object per output chunk, nothing else. */
function floor(): void {
  for (const lines of dataLines) {
    let out = 0;
    for (const line of lines) out += JSON.stringify(JSON.parse(line)).length;
    if (out === 0) throw new Error("no output");
  }
}

const thinkText = dataLines[0]!
  .map((line) => JSON.parse(line).choices?.[0]?.delta?.content)
  .filter((content): content is string => typeof content === "string");
const thinkBytes = thinkText.reduce((total, text) => total + Buffer.byteLength(text), 0);

/** The same content pushed in 4 KB pieces, as a server that batches tokens sends it. */
const joined = thinkText.join("");
const batched = Array.from({ length: Math.ceil(joined.length / 4096) }, (_, index) =>
  joined.slice(index * 4096, (index + 1) * 4096),
);

/** The form the OpenAI decoder uses: segments handed to a sink, no array per push. */
let seen = 0;
const sink: ThinkSegmentSink = {
  text: (text) => {
    seen += text.length;
  },
  thinking: (text) => {
    seen += text.length;
  },
  thinkingStart: () => {},
  thinkingEnd: () => {},
};

function thinkTags(pieces: readonly string[]): void {
  const parser = createThinkTagParser();
  for (const text of pieces) parser.pushTo(text, sink);
  parser.finishTo(sink);
  if (seen < 0) throw new Error("unreachable");
}

export default async function streamConversion(): Promise<BenchSection> {
  const measured = sideBySide(convert, floor);
  const megabytes = bytes / 2 ** 20;
  const thinkRate = rate(() => thinkTags(thinkText), 500) * (thinkBytes / 2 ** 20);
  const batchedRate = rate(() => thinkTags(batched), 500) * (thinkBytes / 2 ** 20);
  const markdown = [
    table(
      ["measure", "value"],
      [
        ["OpenAI SSE -> Anthropic SSE, MB/s", fixed(measured.subject * megabytes)],
        ["floor (JSON.parse in + JSON.stringify out), MB/s", fixed(measured.baseline * megabytes)],
        ["ratio to the floor (target >= 0.6)", fixed(measured.ratio)],
        ["think-tag parser alone, DeepSeek-R1 content as recorded (one token a push), MB/s", fixed(thinkRate, 0)],
        ["think-tag parser alone, same content in 4 KB pushes, MB/s", fixed(batchedRate, 0)],
      ],
    ),
    "",
    `Input: ${MIX.length} recorded streams, ${fixed(megabytes, 2)} MB of SSE. The ratio is conversion speed over`,
    "the floor, measured in alternating rounds; the think-tag figures count content bytes only (many tiny deltas)",
    "and use the parser's sink form, as the decoder does. The think-tag target (500 MB/s) and every push size are",
    "in the next section.",
  ].join("\n");
  return { title: "Stream conversion (OpenAI -> Anthropic)", markdown };
}
