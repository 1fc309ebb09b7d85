/**
 * Replaces the value of one top-level string field in a JSON object's text and leaves every other byte as it
 * was: the client's own body can then go to an Anthropic upstream with only `model` renamed (invariant 8),
 * numbers, escapes, key order and spacing included, which a parse and re-serialise would not keep. Returns
 * undefined when the text is not an object with that key holding a string (the caller then serialises).
 * Every top-level occurrence is replaced, so that a duplicated key reads the same to any parser.
 */
export function replaceTopLevelString(text: string, key: string, value: string): string | undefined {
  const spans: Array<[number, number]> = [];
  let depth = 0;
  let expectKey = false;
  let index = 0;
  while (index < text.length) {
    const char = text.charCodeAt(index);
    if (char === QUOTE) {
      const end = stringEnd(text, index);
      if (end === -1) return undefined;
      if (depth !== 1 || !expectKey) {
        index = end;
        continue;
      }
      expectKey = false;
      let valueStart = skipSpace(text, end);
      if (text.charCodeAt(valueStart) !== COLON) return undefined;
      valueStart = skipSpace(text, valueStart + 1);
      if (text.charCodeAt(valueStart) === QUOTE && keyName(text.slice(index, end)) === key) {
        const valueEnd = stringEnd(text, valueStart);
        if (valueEnd === -1) return undefined;
        spans.push([valueStart, valueEnd]);
        index = valueEnd;
      } else index = valueStart;
      continue;
    }
    if (char === OPEN_BRACE || char === OPEN_BRACKET) {
      depth++;
      expectKey = depth === 1 && char === OPEN_BRACE;
    } else if (char === CLOSE_BRACE || char === CLOSE_BRACKET) depth--;
    else if (char === COMMA && depth === 1) expectKey = true;
    index++;
  }
  if (spans.length === 0) return undefined;
  const replacement = JSON.stringify(value);
  let out = "";
  let from = 0;
  for (const [start, end] of spans) {
    out += text.slice(from, start) + replacement;
    from = end;
  }
  return out + text.slice(from);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

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

function skipSpace(text: string, index: number): number {
  let at = index;
  for (;;) {
    const char = text.charCodeAt(at);
    if (char !== 0x20 && char !== 0x0a && char !== 0x0d && char !== 0x09) return at;
    at++;
  }
}

/** A key's name; escapes are rare in keys, so the plain case skips the parse. */
function keyName(token: string): string {
  return token.includes("\\") ? (JSON.parse(token) as string) : token.slice(1, -1);
}
