import { isObject } from "../../core/json.js";
import {
  findJsonEnd,
  JsonBalance,
  jsonArrayElementEnds,
  NOT_CLOSED,
  NOT_JSON,
  parseJsonObject,
  parseLenientJson,
  skipWhitespace,
} from "./json-text.js";
import type { ToolLookup } from "./schema-values.js";
import { type ParsedCall, SECTION_FAILED, SECTION_OPEN, type SectionEndFinder } from "./syntax.js";

/** Formats whose arguments are JSON: Hermes, Kimi K2, DeepSeek V3/V3.1, Mistral, Llama 3. */

/** `{"name", "arguments" | "parameters"}` (arguments as an object or as JSON text), or OpenAI's `{"function": {...}}`. */
export function callFromObject(value: unknown): ParsedCall | undefined {
  if (!isObject(value)) return undefined;
  if (isObject(value.function) && value.name === undefined) {
    const inner = callFromObject(value.function);
    return inner !== undefined && typeof value.id === "string" && value.id !== "" ? { ...inner, id: value.id } : inner;
  }
  if (typeof value.name !== "string" || value.name === "") return undefined;
  const input = argumentsObject(value.arguments ?? value.parameters);
  if (input === undefined) return undefined;
  return typeof value.id === "string" && value.id !== ""
    ? { name: value.name, input, id: value.id }
    : { name: value.name, input };
}

function argumentsObject(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return {};
  if (isObject(value)) return value;
  if (typeof value === "string") return value.trim() === "" ? {} : parseJsonObject(value);
  return undefined;
}

/** The body of a Hermes `<tool_call>`: one JSON call object. */
export function parseHermesCall(body: string): ParsedCall | undefined {
  const trimmed = body.trim();
  if (!trimmed.startsWith("{")) return undefined;
  const parsed = parseLenientJson(trimmed);
  return parsed === undefined ? undefined : callFromObject(parsed.value);
}

/** The markers of a format that wraps each call in begin / separator / end tokens. */
interface MarkedCallTokens {
  begin: string;
  separator: string;
  end: string;
}

/** Reads every `begin HEAD separator TAIL end` call of a section body; one unreadable call fails them all. */
function parseMarkedCalls(
  section: string,
  from: number,
  to: number,
  tokens: MarkedCallTokens,
  read: (head: string, tail: string) => ParsedCall | undefined,
): ParsedCall[] | undefined {
  const calls: ParsedCall[] = [];
  let index = from;
  for (;;) {
    const begin = section.indexOf(tokens.begin, index);
    if (begin === -1 || begin >= to) break;
    if (section.slice(index, begin).trim() !== "") return undefined;
    const headStart = begin + tokens.begin.length;
    const separator = section.indexOf(tokens.separator, headStart);
    if (separator === -1 || separator >= to) return undefined;
    const tailStart = separator + tokens.separator.length;
    const endAt = section.indexOf(tokens.end, tailStart);
    const closed = endAt !== -1 && endAt < to;
    const call = read(section.slice(headStart, separator), section.slice(tailStart, closed ? endAt : to));
    if (call === undefined) return undefined;
    index = closed ? endAt + tokens.end.length : to;
    calls.push({ ...call, end: index });
  }
  if (section.slice(index, to).trim() !== "") return undefined;
  return calls.length > 0 ? calls : undefined;
}

const KIMI_TOKENS: MarkedCallTokens = {
  begin: "<|tool_call_begin|>",
  separator: "<|tool_call_argument_begin|>",
  end: "<|tool_call_end|>",
};

/** Kimi K2: the id `functions.NAME:IDX` is kept as the call id. */
export function parseKimiCalls(section: string, from: number, to: number): ParsedCall[] | undefined {
  return parseMarkedCalls(section, from, to, KIMI_TOKENS, (head, tail) => {
    const id = head.trim();
    const name = /^(?:functions\.)?(.+?)(?::\d+)?$/.exec(id)?.[1];
    if (name === undefined) return undefined;
    const input = tail.trim() === "" ? {} : parseJsonObject(tail);
    return input === undefined ? undefined : { name, input, id };
  });
}

const DEEPSEEK_TOKENS: MarkedCallTokens = {
  begin: "<｜tool▁call▁begin｜>",
  separator: "<｜tool▁sep｜>",
  end: "<｜tool▁call▁end｜>",
};

/** DeepSeek V3 (`function<sep>NAME\n```json\n{..}\n````) and V3.1 (`NAME<sep>{..}`), either way round. */
export function parseDeepSeekCalls(section: string, from: number, to: number): ParsedCall[] | undefined {
  return parseMarkedCalls(section, from, to, DEEPSEEK_TOKENS, (head, tail) => {
    let name = head.trim();
    let argumentsText = tail;
    if (name === "function" || name === "") {
      const newline = tail.indexOf("\n");
      name = (newline === -1 ? tail : tail.slice(0, newline)).trim();
      argumentsText = newline === -1 ? "" : tail.slice(newline + 1);
    }
    if (name === "") return undefined;
    argumentsText = withoutCodeFence(argumentsText);
    const input = argumentsText.trim() === "" ? {} : parseJsonObject(argumentsText);
    return input === undefined ? undefined : { name, input };
  });
}

function withoutCodeFence(text: string): string {
  const opened = /^\s*```[\w-]*[ \t]*\r?\n?/.exec(text);
  if (opened === null) return text;
  const rest = text.slice(opened[0].length);
  const close = rest.lastIndexOf("```");
  return close === -1 ? rest : rest.slice(0, close);
}

/**
 * Mistral, after `[TOOL_CALLS]`: a JSON array of call objects (tokenizers before v11), or
 * `NAME[ARGS]{json}` with an optional `[CALL_ID]id` before `[ARGS]` (v11 and later).
 */
export function parseMistralCalls(section: string, from: number): ParsedCall[] | undefined {
  const start = skipWhitespace(section, from);
  const first = section[start];
  if (first === "[" || first === "{") {
    const parsed = parseLenientJson(section.slice(start));
    if (parsed === undefined) return undefined;
    const objects = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
    const calls = objects.map(callFromObject);
    if (calls.length === 0 || calls.some((call) => call === undefined)) return undefined;
    const ends = first === "[" ? jsonArrayElementEnds(section, start) : undefined;
    return (calls as ParsedCall[]).map((call, index) =>
      ends !== undefined && ends.length === calls.length ? { ...call, end: ends[index]! } : call,
    );
  }
  const named = /^([\w.-]+)(?:\[CALL_ID\]([\w-]*))?\[ARGS\]/.exec(section.slice(start));
  if (named === null) return undefined;
  const input = parseJsonObject(section.slice(start + named[0].length));
  if (input === undefined) return undefined;
  const id = named[2];
  return [id !== undefined && id !== "" ? { name: named[1]!, input, id } : { name: named[1]!, input }];
}

/** Where the JSON of a Mistral call begins in the text after the marker, or `NOT_CLOSED` / `NOT_JSON`. */
function mistralJsonStart(header: string): number {
  const first = skipWhitespace(header, 0);
  if (first === header.length) return NOT_CLOSED;
  if (header[first] === "[" || header[first] === "{") return first;
  let cursor = first + (/^[\w.-]*/.exec(header.slice(first))?.[0].length ?? 0);
  if (cursor === first) return NOT_JSON;
  if (header.startsWith("[CALL_ID]", cursor)) {
    cursor += "[CALL_ID]".length;
    cursor += /^[\w-]*/.exec(header.slice(cursor))?.[0].length ?? 0;
  } else if ("[CALL_ID]".startsWith(header.slice(cursor))) {
    return NOT_CLOSED;
  }
  if (header.startsWith("[ARGS]", cursor)) return cursor + "[ARGS]".length;
  return "[ARGS]".startsWith(header.slice(cursor)) ? NOT_CLOSED : NOT_JSON;
}

/** Mistral sections have no end marker: they end where the arguments' JSON closes. */
export function mistralEndFinder(): SectionEndFinder {
  let header = "";
  let balance: JsonBalance | undefined;
  return (chunk) => {
    let from = 0;
    if (balance === undefined) {
      const before = header.length;
      header += chunk;
      const jsonStart = mistralJsonStart(header);
      if (jsonStart === NOT_CLOSED) return SECTION_OPEN;
      if (jsonStart === NOT_JSON) return SECTION_FAILED;
      balance = new JsonBalance();
      from = jsonStart - before;
    }
    const end = balance.feed(chunk, from);
    if (end === NOT_JSON) return SECTION_FAILED;
    return end === NOT_CLOSED ? SECTION_OPEN : end;
  };
}

/**
 * Llama 3 JSON: the whole message is one call object, or several separated by `;` (Llama 3.2), with
 * an optional `<|python_tag|>` first. A JSON answer is not a call: the object needs `parameters` (or
 * `arguments`), and when tools are declared its name must be one of them.
 */
export function parseLlamaCalls(
  section: string,
  from: number,
  lookup: ToolLookup,
  hasTools: boolean,
): ParsedCall[] | undefined {
  const calls: ParsedCall[] = [];
  let index = skipWhitespace(section, from);
  while (index < section.length) {
    const closedAt = findJsonEnd(section, index);
    if (closedAt === NOT_JSON) return undefined;
    const end = closedAt === NOT_CLOSED ? section.length : closedAt;
    const parsed = parseLenientJson(section.slice(index, end));
    if (parsed === undefined || !isObject(parsed.value)) return undefined;
    if (!("parameters" in parsed.value) && !("arguments" in parsed.value)) return undefined;
    const call = callFromObject(parsed.value);
    if (call === undefined || (hasTools && lookup(call.name) === undefined)) return undefined;
    index = skipWhitespace(section, end);
    if (section[index] === ";") index = skipWhitespace(section, index + 1);
    calls.push({ ...call, end: index });
  }
  return calls.length > 0 ? calls : undefined;
}
