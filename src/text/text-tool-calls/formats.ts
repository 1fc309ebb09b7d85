import { assertNever } from "../../core/parts.js";
import {
  mistralEndFinder,
  parseDeepSeekCalls,
  parseHermesCall,
  parseKimiCalls,
  parseLlamaCalls,
  parseMistralCalls,
} from "./json-bodies.js";
import type { ToolLookup } from "./schema-values.js";
import { type CallSyntax, endMarkerFinder, type ParsedCall, sectionBody, untilEndFinder } from "./syntax.js";
import { parseGlmCall, parseMinimaxCalls, parseQwenCoderCalls } from "./xml-bodies.js";

export type TextToolCallFormat =
  | "hermes"
  | "qwen3-coder"
  | "glm"
  | "kimi-k2"
  | "deepseek-v3"
  | "deepseek-v3.1"
  | "minimax"
  | "llama3-json"
  | "mistral";

const TOOL_CALL_OPEN = "<tool_call>";
const TOOL_CALL_CLOSE = "</tool_call>";

/**
 * Hermes, Qwen3-Coder and GLM share `<tool_call>...</tool_call>`. Each reads its own body first and
 * falls back to its neighbours' (a JSON body, a `<function=` body), since models of one family drift
 * into another's form.
 */
function toolCallElementSyntax(
  readBody: (body: string, offset: number, lookup: ToolLookup) => ParsedCall[] | undefined,
): CallSyntax {
  return {
    starts: [TOOL_CALL_OPEN],
    endFinder: () => endMarkerFinder(TOOL_CALL_CLOSE),
    parse(section, start, lookup) {
      const body = sectionBody(section, start, TOOL_CALL_CLOSE);
      return readBody(body, start.length, lookup);
    },
  };
}

function hermesBody(body: string, offset: number, lookup: ToolLookup): ParsedCall[] | undefined {
  const call = parseHermesCall(body);
  if (call !== undefined) return [call];
  return body.includes("<function=") ? qwenCoderCalls(body, offset, lookup) : undefined;
}

function qwenCoderBody(body: string, offset: number, lookup: ToolLookup): ParsedCall[] | undefined {
  const calls = qwenCoderCalls(body, offset, lookup);
  if (calls !== undefined) return calls;
  const call = parseHermesCall(body);
  return call === undefined ? undefined : [call];
}

function qwenCoderCalls(body: string, offset: number, lookup: ToolLookup): ParsedCall[] | undefined {
  const calls = parseQwenCoderCalls(body, 0, body.length, lookup);
  return calls?.map((call) => (call.end === undefined ? call : { ...call, end: call.end + offset }));
}

function glmBody(body: string, offset: number, lookup: ToolLookup): ParsedCall[] | undefined {
  const json = parseHermesCall(body);
  if (json !== undefined) return [json];
  const call = parseGlmCall(body, lookup);
  if (call !== undefined) return [call];
  return body.includes("<function=") ? qwenCoderCalls(body, offset, lookup) : undefined;
}

/** A section between two fixed markers whose inside a `read(section, from, to)` understands. */
function markedSectionSyntax(
  pairs: ReadonlyArray<readonly [start: string, end: string]>,
  read: (section: string, from: number, to: number, lookup: ToolLookup) => ParsedCall[] | undefined,
): CallSyntax {
  const endOf = new Map(pairs);
  return {
    starts: pairs.map(([start]) => start),
    endFinder: (start) => endMarkerFinder(endOf.get(start) ?? ""),
    parse(section, start, lookup) {
      const end = endOf.get(start) ?? "";
      const body = sectionBody(section, start, end);
      return read(section, start.length, start.length + body.length, lookup);
    },
  };
}

const DEEPSEEK_SECTION = [["<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"]] as const;

export function syntaxFor(format: TextToolCallFormat, hasTools: boolean): CallSyntax {
  switch (format) {
    case "hermes":
      return toolCallElementSyntax(hermesBody);
    case "qwen3-coder":
      return toolCallElementSyntax(qwenCoderBody);
    case "glm":
      return toolCallElementSyntax(glmBody);
    case "kimi-k2":
      // Some Kimi builds write the singular `tool_call_section` markers.
      return markedSectionSyntax(
        [
          ["<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"],
          ["<|tool_call_section_begin|>", "<|tool_call_section_end|>"],
        ],
        (section, from, to) => parseKimiCalls(section, from, to),
      );
    case "deepseek-v3":
    case "deepseek-v3.1":
      return markedSectionSyntax(DEEPSEEK_SECTION, (section, from, to) => parseDeepSeekCalls(section, from, to));
    case "minimax":
      return markedSectionSyntax([["<minimax:tool_call>", "</minimax:tool_call>"]], parseMinimaxCalls);
    case "llama3-json":
      return {
        starts: ["<|python_tag|>", "{"],
        wholeMessage: true,
        endFinder: untilEndFinder,
        parse: (section, start, lookup) => parseLlamaCalls(section, start === "{" ? 0 : start.length, lookup, hasTools),
      };
    case "mistral":
      return {
        starts: ["[TOOL_CALLS]"],
        endFinder: mistralEndFinder,
        parse: (section, start) => parseMistralCalls(section, start.length),
      };
    default:
      return assertNever(format, "text tool-call format");
  }
}
