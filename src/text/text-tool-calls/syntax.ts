import type { ToolLookup } from "./schema-values.js";

/** One call read out of a section of model text. */
export interface ParsedCall {
  name: string;
  input: Record<string, unknown>;
  /** The model's own id, when the format writes one (Kimi's `functions.NAME:IDX`, Mistral's). */
  id?: string;
  /** Where this call's text ends within the section; the last call always runs to the section's end. */
  end?: number;
}

/**
 * Watches the text after a start marker, piece by piece. Returns the index in `chunk` just past the
 * section's end, `SECTION_OPEN` while it goes on, or `SECTION_FAILED` once the text cannot be a call.
 */
export type SectionEndFinder = (chunk: string) => number;
export const SECTION_OPEN = -1;
export const SECTION_FAILED = -2;

/** How one model family writes tool calls into its text. */
export interface CallSyntax {
  /** Markers that open a section, matched anywhere in the text unless `wholeMessage`. */
  starts: readonly string[];
  /** A fresh end finder for a section opened by `start`. */
  endFinder(start: string): SectionEndFinder;
  /** The section must be the whole message (Llama 3 JSON): a start marker counts only at its beginning. */
  wholeMessage?: boolean;
  /** Reads the calls of a whole section (start marker included, end marker when it came); `undefined` = not calls. */
  parse(section: string, start: string, lookup: ToolLookup): ParsedCall[] | undefined;
}

/** A section that ends with a fixed marker, which may itself be cut across pieces. */
export function endMarkerFinder(marker: string): SectionEndFinder {
  let tail = "";
  return (chunk) => {
    const joined = tail.length === 0 ? chunk : tail + chunk;
    const found = joined.indexOf(marker);
    if (found !== -1) return found + marker.length - tail.length;
    tail = marker.length > 1 ? joined.slice(-(marker.length - 1)) : "";
    return SECTION_OPEN;
  };
}

/** A section that runs to the end of the message. */
export function untilEndFinder(): SectionEndFinder {
  return () => SECTION_OPEN;
}

/** The section without its start marker and, when present, its end marker. */
export function sectionBody(section: string, start: string, end: string): string {
  const bodyEnd =
    section.endsWith(end) && section.length - end.length >= start.length ? section.length - end.length : section.length;
  return section.slice(start.length, bodyEnd);
}
