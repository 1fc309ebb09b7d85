import { jsonrepair } from "jsonrepair";
import { isObject } from "../../core/json.js";

/** JSON helpers for arguments written by a model: often fine, sometimes cut short or sloppy. */

/** Parses JSON text, falling back to `jsonrepair` (truncated objects, single quotes, trailing commas). */
export function parseLenientJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    // fall through to the repair
  }
  try {
    return { value: JSON.parse(jsonrepair(text)) };
  } catch {
    return undefined;
  }
}

/** Parses text that must hold a JSON object; anything else is `undefined`. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  const parsed = parseLenientJson(text);
  return parsed !== undefined && isObject(parsed.value) ? parsed.value : undefined;
}

/** `feed` answers "not closed yet", "not JSON at all", or the index just past the closing bracket. */
export const NOT_CLOSED = -1;
export const NOT_JSON = -2;

/**
 * Finds where one JSON object or array ends, fed in pieces: bracket depth outside strings, with
 * escapes. Leading whitespace is skipped; any other first character is `NOT_JSON`.
 */
export class JsonBalance {
  private depth = 0;
  private inString = false;
  private escaped = false;

  /** Returns the index in `chunk` just past the value's end, `NOT_CLOSED` or `NOT_JSON`. */
  feed(chunk: string, from = 0): number {
    for (let index = from; index < chunk.length; index++) {
      const code = chunk.charCodeAt(index);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (code === BACKSLASH) this.escaped = true;
        else if (code === QUOTE) this.inString = false;
        continue;
      }
      if (this.depth === 0) {
        if (code === OPEN_BRACE || code === OPEN_BRACKET) this.depth = 1;
        else if (!isJsonWhitespace(code)) return NOT_JSON;
        continue;
      }
      if (code === QUOTE) this.inString = true;
      else if (code === OPEN_BRACE || code === OPEN_BRACKET) this.depth++;
      else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
        this.depth--;
        if (this.depth === 0) return index + 1;
      }
    }
    return NOT_CLOSED;
  }
}

/** The end of the JSON object or array starting (after optional whitespace) at `from`. */
export function findJsonEnd(text: string, from: number): number {
  return new JsonBalance().feed(text, from);
}

/**
 * The `[start, end)` ranges of the elements of a JSON array of objects starting at `from`, the
 * last one running to the end of the text; `undefined` when it is not such an array.
 */
export function jsonArrayElementEnds(text: string, from: number): number[] | undefined {
  let index = skipWhitespace(text, from);
  if (text.charCodeAt(index) !== OPEN_BRACKET) return undefined;
  index++;
  const ends: number[] = [];
  for (;;) {
    index = skipWhitespace(text, index);
    if (index >= text.length || text.charCodeAt(index) === CLOSE_BRACKET) break;
    const end = findJsonEnd(text, index);
    if (end < 0) {
      ends.push(text.length);
      break;
    }
    ends.push(end);
    index = skipWhitespace(text, end);
    if (text.charCodeAt(index) === COMMA) index++;
  }
  return ends;
}

export function skipWhitespace(text: string, from: number): number {
  let index = from;
  while (index < text.length && isJsonWhitespace(text.charCodeAt(index))) index++;
  return index;
}

function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** Character codes of JSON's structure, for scanners that walk text without parsing it. */
export const BACKSLASH = 0x5c;
export const QUOTE = 0x22;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;
