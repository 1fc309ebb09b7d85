import type { ToolDefinition } from "../../core/conversation.js";
import { syntaxFor, type TextToolCallFormat } from "./formats.js";
import { TextToolCallScanner, type TextToolSegment } from "./scanner.js";
import { createToolLookup } from "./schema-values.js";

/**
 * Tool calls that a server left in the text (it ran no tool-call parser for the model), read back
 * into calls, streaming or whole. Text before, between and after calls stays text, in order; a call
 * that cannot be read (bad JSON beyond repair, unknown shape) stays text too, so nothing is lost.
 * Values of XML-ish formats are typed by the tool's JSON schema, hence `tools`.
 *
 * Contract: for any split of the input, the pushed output, with consecutive text segments merged and
 * generated ids aside, equals `parseTextToolCalls(input)`; and the texts plus the calls' `rawInput`,
 * in order, are exactly the input.
 */

export type { TextToolCallFormat } from "./formats.js";
export type { TextToolSegment } from "./scanner.js";

export interface TextToolCallParser {
  push(text: string): TextToolSegment[];
  finish(): TextToolSegment[];
}

export const TEXT_TOOL_CALL_FORMATS: readonly TextToolCallFormat[] = [
  "hermes",
  "qwen3-coder",
  "glm",
  "kimi-k2",
  "deepseek-v3",
  "deepseek-v3.1",
  "minimax",
  "llama3-json",
  "mistral",
];

export function createTextToolCallParser(format: TextToolCallFormat, tools?: ToolDefinition[]): TextToolCallParser {
  return new TextToolCallScanner(syntaxFor(format, (tools?.length ?? 0) > 0), createToolLookup(tools));
}

/** The whole-text form: consecutive text segments are merged. */
export function parseTextToolCalls(
  text: string,
  format: TextToolCallFormat,
  tools?: ToolDefinition[],
): TextToolSegment[] {
  const parser = createTextToolCallParser(format, tools);
  return mergeTextSegments([...parser.push(text), ...parser.finish()]);
}

export function mergeTextSegments(segments: readonly TextToolSegment[]): TextToolSegment[] {
  const merged: TextToolSegment[] = [];
  for (const segment of segments) {
    const last = merged[merged.length - 1];
    if (segment.type === "text" && last?.type === "text") {
      merged[merged.length - 1] = { type: "text", text: last.text + segment.text };
    } else {
      merged.push(segment);
    }
  }
  return merged;
}
