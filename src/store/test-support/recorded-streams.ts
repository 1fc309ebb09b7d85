import { readdirSync, readFileSync } from "node:fs";
import { BetaMessageStream } from "@anthropic-ai/sdk/lib/BetaMessageStream";
import type { Message, StreamEvent } from "../../core/index.js";
import { createAnthropicStreamDecoder } from "../../formats/anthropic/stream-decoder.js";
import { anthropicResponseToCore } from "../../formats/anthropic/to-core.js";
import type { AnthropicMessageResponse } from "../../formats/anthropic/wire-types.js";
import { createOpenAIStreamDecoder } from "../../formats/openai-chat/stream-decoder.js";
import { rebuildResponse } from "../../formats/openai-chat/test-support/chunks.js";
import { openaiResponseToCore } from "../../formats/openai-chat/to-core.js";
import { accumulate, parseSse, type SseMessage } from "../../stream/index.js";

/** One recorded upstream stream: its core events, and the message the same answer unstreamed converts to. */
export interface RecordedStream {
  file: string;
  events: StreamEvent[];
  whole: Message;
}

const fixtures = new URL("../../../test/fixtures/", import.meta.url);

/**
 * OpenAI streams that send something after a tool call (Vercel's Gemini: encrypted reasoning details; Avian: a
 * space after text and calls): a whole response cannot say that order, so for these the whole answer is the
 * stream's own fold.
 */
const orderOnlyAStreamCarries = new Set([
  "vercel-gateway/gemini-3-pro-thinking-tool-call.sse",
  "avian/kimi-k2.5-parallel-tools.sse",
]);

/** Every stream fixture (`.sse`, `.chunks.jsonl`), each with its whole answer: the official SDK's for Anthropic's. */
export async function recordedStreams(): Promise<RecordedStream[]> {
  const files = readdirSync(fixtures, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((folder) => readdirSync(new URL(`${folder.name}/`, fixtures)).map((name) => `${folder.name}/${name}`))
    .filter((file) => file.endsWith(".sse") || file.endsWith(".chunks.jsonl"))
    .sort();
  const streams: RecordedStream[] = [];
  for (const file of files) {
    const messages = sseMessagesOf(file);
    const anthropic = messages.some((message) => message.data.includes('"type":"message_start"'));
    const events = anthropic ? decodeAnthropic(messages) : decodeOpenAI(messages);
    let whole: Message;
    if (anthropic) whole = anthropicResponseToCore(await sdkFinalMessage(messages)).message;
    else if (orderOnlyAStreamCarries.has(file)) whole = accumulate(events).message;
    else whole = openaiResponseToCore(rebuildResponse(dataChunks(messages))).value.message;
    streams.push({ file, events, whole });
  }
  return streams;
}

function sseMessagesOf(file: string): SseMessage[] {
  const text = readFileSync(new URL(file, fixtures), "utf8");
  if (file.endsWith(".sse")) return parseSse(text);
  // A `.chunks.jsonl` holds the data lines alone; cerebras' holds two answers, of which the first is taken.
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  const second = lines.findIndex((line, index) => index > 0 && JSON.parse(line).choices?.[0]?.delta?.role);
  return (second > 0 ? lines.slice(0, second) : lines).map((data) => ({ data }) as SseMessage);
}

function decodeAnthropic(messages: SseMessage[]): StreamEvent[] {
  const decoder = createAnthropicStreamDecoder();
  return [...messages.flatMap((message) => decoder.push(message)), ...decoder.finish()];
}

function decodeOpenAI(messages: SseMessage[]): StreamEvent[] {
  const decoder = createOpenAIStreamDecoder();
  return [...messages.flatMap((message) => decoder.push(message)), ...decoder.finish()];
}

function dataChunks(messages: SseMessage[]): unknown[] {
  return messages
    .filter((message) => message.data !== "[DONE]" && message.event !== "error")
    .map((message) => JSON.parse(message.data) as unknown);
}

/** The whole message as the Anthropic SDK's own stream accumulator assembles it from the events. */
async function sdkFinalMessage(messages: SseMessage[]): Promise<AnthropicMessageResponse> {
  const lines = messages
    .filter((message) => message.data.trim().startsWith("{"))
    .map((message) => `${JSON.stringify(JSON.parse(message.data))}\n`)
    .join("");
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(lines));
      controller.close();
    },
  });
  const stream = BetaMessageStream.fromReadableStream(body);
  return JSON.parse(JSON.stringify(await stream.finalMessage())) as AnthropicMessageResponse;
}
