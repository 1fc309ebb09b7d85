import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { formatSse, parseSse, type SseMessage } from "../../../stream/sse.js";
import type { AnthropicContentBlock, AnthropicMessageResponse } from "../wire-types.js";

/** The recorded Anthropic traffic in `test/fixtures`, and a plain reference reader for its streams. */

const FIXTURES = fileURLToPath(new URL("../../../../test/fixtures/", import.meta.url));
const FOLDERS = ["anthropic", "anthropic-compat"];

export interface CorpusFile {
  name: string;
  text: string;
}

function files(suffixes: string[]): CorpusFile[] {
  const out: CorpusFile[] = [];
  for (const folder of FOLDERS) {
    for (const file of readdirSync(FIXTURES + folder).sort()) {
      if (suffixes.some((suffix) => file.endsWith(suffix)))
        out.push({ name: `${folder}/${file}`, text: readFileSync(`${FIXTURES}${folder}/${file}`, "utf8") });
    }
  }
  return out;
}

export function corpusStreams(): CorpusFile[] {
  return files([".sse", ".chunks.jsonl"]);
}

export function corpusResponses(): CorpusFile[] {
  return files([".json"]);
}

/** SSE messages of a stream file; `.chunks.jsonl` holds one event payload per line. */
export function sseMessagesOf(file: CorpusFile): SseMessage[] {
  if (file.name.endsWith(".sse")) return parseSse(file.text);
  return file.text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => ({ event: (JSON.parse(line) as { type: string }).type, data: line }));
}

/** The stream as SSE text, whatever file it came from. */
export function sseTextOf(file: CorpusFile): string {
  if (file.name.endsWith(".sse")) return file.text;
  return sseMessagesOf(file)
    .map((message) => formatSse(message.event, message.data))
    .join("");
}

type Json = Record<string, unknown>;

/**
 * The final message a stream describes, read the way Anthropic's SDK reads it and with no Parley code:
 * the independent answer the decoder and accumulator are checked against.
 */
export function referenceMessage(messages: SseMessage[]): AnthropicMessageResponse {
  let message: Json = {};
  const content: Json[] = [];
  const inputs = new Map<number, string>();
  for (const { data } of messages) {
    const event = JSON.parse(data) as Json;
    const index = event.index as number;
    const delta = event.delta as Json;
    switch (event.type) {
      case "message_start":
        message = structuredClone(event.message as Json);
        break;
      case "content_block_start":
        content[index] = structuredClone(event.content_block as Json);
        break;
      case "content_block_delta": {
        const block = content[index] as Json;
        if (delta.type === "text_delta") block.text = `${block.text}${delta.text}`;
        else if (delta.type === "thinking_delta") block.thinking = `${block.thinking}${delta.thinking}`;
        else if (delta.type === "signature_delta") block.signature = delta.signature;
        else if (delta.type === "input_json_delta") inputs.set(index, (inputs.get(index) ?? "") + delta.partial_json);
        else if (delta.type === "citations_delta") {
          if (!Array.isArray(block.citations)) block.citations = [];
          (block.citations as unknown[]).push(delta.citation);
        }
        break;
      }
      case "content_block_stop": {
        const json = inputs.get(index);
        if (json) (content[index] as Json).input = JSON.parse(json);
        break;
      }
      case "message_delta":
        Object.assign(message, { stop_reason: delta.stop_reason, stop_sequence: delta.stop_sequence });
        Object.assign(message.usage as Json, event.usage);
        break;
      default:
        break;
    }
  }
  message.content = content as AnthropicContentBlock[];
  return message as unknown as AnthropicMessageResponse;
}
