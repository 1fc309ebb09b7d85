/**
 * How deep JSON may nest. `JSON.parse` copes with any depth, but the code that walks a value (conversion, repair,
 * the store, `JSON.stringify`) recurses, and past about 4,000 levels it overflows the stack: every JSON route
 * answered a 500. No real request or answer comes near this depth (tool schemas nest a few dozen levels).
 */
export const MAX_JSON_DEPTH = 512;

/** Whether `text` (JSON or not) opens more than `max` arrays and objects inside each other, strings aside. */
export function jsonNestsDeeperThan(text: string, max = MAX_JSON_DEPTH): boolean {
  // Each level takes an opening bracket: text with fewer cannot be deeper. Counting them with the native search
  // is cheap, and spares most requests the scan.
  if (text.length <= max || !hasMoreThan(text, "{", "[", max)) return false;
  let depth = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      // Strings are most of a request: jump over them with the native search, not character by character.
      index = stringEnd(text, index);
      if (index === -1) return false;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) depth--;
  }
  return false;
}

/** Whether `text` holds more than `count` of the two characters together. */
function hasMoreThan(text: string, first: string, second: string, count: number): boolean {
  let found = 0;
  for (const character of [first, second]) {
    for (let index = text.indexOf(character); index !== -1; index = text.indexOf(character, index + 1)) {
      if (++found > count) return true;
    }
  }
  return false;
}

/** The index of the quote that closes the string opening at `start` (-1 when none does). */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  while (end !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
  return -1;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
