import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  findJsonEnd,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  skipWhitespace,
} from "./text-tool-calls/json-text.js";

/** One top-level member of an object's text: where its key and its value start and end. */
interface Member {
  keyStart: number;
  keyEnd: number;
  valueStart: number;
  valueEnd: number;
}

/** The top-level members of a JSON object's text, in order; undefined when the text is not such an object. */
function topLevelMembers(text: string): Member[] | undefined {
  let index = skipWhitespace(text, 0);
  if (text.charCodeAt(index) !== OPEN_BRACE) return undefined;
  const members: Member[] = [];
  index = skipWhitespace(text, index + 1);
  while (text.charCodeAt(index) !== CLOSE_BRACE) {
    if (text.charCodeAt(index) !== QUOTE) return undefined;
    const keyEnd = stringEnd(text, index);
    if (keyEnd === -1) return undefined;
    const colon = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(colon) !== COLON) return undefined;
    const valueStart = skipWhitespace(text, colon + 1);
    const valueEnd = valueEndAt(text, valueStart);
    if (valueEnd === -1) return undefined;
    members.push({ keyStart: index, keyEnd, valueStart, valueEnd });
    index = skipWhitespace(text, valueEnd);
    if (text.charCodeAt(index) === COMMA) index = skipWhitespace(text, index + 1);
    else if (text.charCodeAt(index) !== CLOSE_BRACE) return undefined;
  }
  return members;
}

/**
 * Replaces the value of one top-level string field in a JSON object's text and leaves every other byte as it
 * was: the client's own body can then go to an Anthropic upstream with only `model` renamed (invariant 8),
 * numbers, escapes, key order and spacing included, which a parse and re-serialise would not keep. Returns
 * undefined when the text is not an object with that key holding a string (the caller then serialises).
 * Every top-level occurrence is replaced, so that a duplicated key reads the same to any parser.
 */
export function replaceTopLevelString(text: string, key: string, value: string): string | undefined {
  const spans = topLevelMembers(text)?.filter(
    (member) =>
      text.charCodeAt(member.valueStart) === QUOTE && keyName(text.slice(member.keyStart, member.keyEnd)) === key,
  );
  if (spans === undefined || spans.length === 0) return undefined;
  const replacement = JSON.stringify(value);
  let out = "";
  let from = 0;
  for (const { valueStart, valueEnd } of spans) {
    out += text.slice(from, valueStart) + replacement;
    from = valueEnd;
  }
  return out + text.slice(from);
}

/**
 * The text of each element of the array under a top-level key, as sent (spacing, numbers, escapes, key order):
 * a stored message keeps the client's own JSON. The last such key counts, as `JSON.parse` reads a duplicate;
 * undefined when the text is not an object with that key holding an array.
 */
export function topLevelArrayElements(text: string, key: string): string[] | undefined {
  const member = topLevelMembers(text)?.findLast(
    (candidate) => keyName(text.slice(candidate.keyStart, candidate.keyEnd)) === key,
  );
  if (member === undefined || text.charCodeAt(member.valueStart) !== OPEN_BRACKET) return undefined;
  const elements: string[] = [];
  let index = skipWhitespace(text, member.valueStart + 1);
  while (text.charCodeAt(index) !== CLOSE_BRACKET) {
    const end = valueEndAt(text, index);
    if (end === -1) return undefined;
    elements.push(text.slice(index, end));
    index = skipWhitespace(text, end);
    if (text.charCodeAt(index) === COMMA) index = skipWhitespace(text, index + 1);
    else if (text.charCodeAt(index) !== CLOSE_BRACKET) return undefined;
  }
  return elements;
}

/** Where the value that starts at `start` ends: a string, an object or array, or a literal; -1 if it does not. */
function valueEndAt(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) return stringEnd(text, start);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) return Math.max(-1, findJsonEnd(text, start));
  let end = start;
  while (end < text.length && isLiteralChar(text.charCodeAt(end))) end++;
  return end === start ? -1 : end;
}

/** A character of a number, `true`, `false` or `null`. */
function isLiteralChar(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x61 && code <= 0x7a) ||
    code === 0x2e ||
    code === 0x2b ||
    code === 0x2d ||
    code === 0x45
  );
}

/** The index just past the string that opens at `start`, or -1 when it never closes. */
function stringEnd(text: string, start: number): number {
  let index = start + 1;
  for (;;) {
    const quote = text.indexOf('"', index);
    if (quote === -1) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    index = quote + 1;
  }
}

/** A key's name; escapes are rare in keys, so the plain case skips the parse. */
function keyName(token: string): string {
  return token.includes("\\") ? (JSON.parse(token) as string) : token.slice(1, -1);
}
