/**
 * How deep JSON may nest. `JSON.parse` copes with any depth, but the code that walks a value (conversion, repair,
 * the store, `JSON.stringify`) recurses, and past about 4,000 levels it overflows the stack: every JSON route
 * answered a 500. No real request or answer comes near this depth (tool schemas nest a few dozen levels).
 */
export const MAX_JSON_DEPTH = 512;

/** Whether `text` (JSON or not) opens more than `max` arrays and objects inside each other, strings aside. */
export function jsonNestsDeeperThan(text: string, max = MAX_JSON_DEPTH): boolean {
  // Each level takes a bracket: shorter text cannot be deeper.
  if (text.length <= max) return false;
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) depth--;
  }
  return false;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
