import { readFileSync } from "node:fs";
import type { IncrementalDecoder, StreamEvent } from "../src/core/index.js";
import { createAnthropicStreamEncoder } from "../src/formats/anthropic/stream-encoder.js";
import { createOpenAIStreamDecoder } from "../src/formats/openai-chat/stream-decoder.js";
import { createResponsesStreamDecoder } from "../src/formats/openai-responses/stream-decoder.js";
import { createResponsesStreamEncoder } from "../src/formats/openai-responses/stream-encoder.js";
import { SseDecoder, type SseMessage } from "../src/stream/sse.js";
import { type BenchSection, fixed, sideBySide, table } from "./harness.js";

/**
 * The Responses API's two stream paths: a Chat upstream's stream to a Responses client (Codex on an
 * OpenAI-compatible server), and a Responses upstream's stream to an Anthropic client (Claude Code on OpenAI).
 */
const fixture = (file: string) => readFileSync(new URL(`../test/fixtures/${file}`, import.meta.url), "utf8");

const CHAT = [
  "deepseek/deepseek-reasoner-thinking.sse",
  "openrouter/kimi-k2.5-parallel-tools.sse",
  "zai/glm-4.7-flash-thinking-tool-call.sse",
  "openai/gpt-5-parallel-tools.sse",
].map(fixture);

/** Recorded Responses events (one per line) with their SSE framing back. */
const RESPONSES = [
  "openai-responses/gpt-5.1-codex-max-reasoning-tool-call.chunks.jsonl",
  "openai-responses/gpt-5.1-tool-call.chunks.jsonl",
]
  .map(fixture)
  .map((text) =>
    text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`)
      .join(""),
  );

const megabytes = (streams: string[]) => streams.reduce((total, text) => total + Buffer.byteLength(text), 0) / 2 ** 20;

function run(
  streams: string[],
  decoder: () => IncrementalDecoder<SseMessage>,
  encoder: () => { encode(event: StreamEvent): string },
): () => void {
  return () => {
    for (const text of streams) {
      const sse = new SseDecoder();
      const decode = decoder();
      const encode = encoder();
      let out = 0;
      for (const message of [...sse.push(text), ...sse.finish()])
        for (const event of decode.push(message)) out += encode.encode(event).length;
      for (const event of decode.finish()) out += encode.encode(event).length;
      if (out === 0) throw new Error("no output");
    }
  };
}

/** The floor: parse every input event and serialise one object per input event, nothing else. */
function floor(streams: string[]): () => void {
  const lines = streams.map((text) =>
    [...new SseDecoder().push(text)].map((message) => message.data).filter((data) => data !== "[DONE]"),
  );
  return () => {
    let out = 0;
    for (const stream of lines) for (const line of stream) out += JSON.stringify(JSON.parse(line)).length;
    if (out === 0) throw new Error("no output");
  };
}

export default async function responsesStream(): Promise<BenchSection> {
  const chat = sideBySide(
    run(
      CHAT,
      () => createOpenAIStreamDecoder(),
      () => createResponsesStreamEncoder({ answerId: "resp_bench" }),
    ),
    floor(CHAT),
  );
  const responses = sideBySide(
    run(
      RESPONSES,
      () => createResponsesStreamDecoder({ provider: "openai" }),
      () => createAnthropicStreamEncoder(),
    ),
    floor(RESPONSES),
  );
  const markdown = [
    table(
      ["path", "MB/s", "floor MB/s", "ratio to the floor"],
      [
        [
          "Chat SSE -> Responses SSE",
          fixed(chat.subject * megabytes(CHAT)),
          fixed(chat.baseline * megabytes(CHAT)),
          fixed(chat.ratio),
        ],
        [
          "Responses SSE -> Anthropic SSE",
          fixed(responses.subject * megabytes(RESPONSES)),
          fixed(responses.baseline * megabytes(RESPONSES)),
          fixed(responses.ratio),
        ],
      ],
    ),
    "",
    `Input: ${CHAT.length} recorded Chat streams (${fixed(megabytes(CHAT), 2)} MB) and ${RESPONSES.length} recorded Responses`,
    `streams (${fixed(megabytes(RESPONSES), 2)} MB). The floor parses each input event and serialises one object for it.`,
    "A Responses stream writes more events than a Chat one reads (each item opens and closes with its own), so the",
    "first ratio is expected below the Chat -> Anthropic one above.",
  ].join("\n");
  return { title: "Stream conversion (the Responses API)", markdown };
}
