import { randomHex } from "../../core/portable.js";
import { heldSuffixLength } from "../think-tags.js";
import type { ToolLookup } from "./schema-values.js";
import { type CallSyntax, SECTION_FAILED, SECTION_OPEN, type SectionEndFinder } from "./syntax.js";

export type TextToolSegment =
  | { type: "text"; text: string }
  | {
      type: "tool-call";
      id: string;
      name: string;
      input: Record<string, unknown>;
      /** The exact text of the call, markers included: text segments and raw calls rebuild the input. */
      rawInput: string;
    };

interface OpenSection {
  start: string;
  chunks: string[];
  finder: SectionEndFinder;
}

/**
 * The streaming engine shared by every format: text passes through until a start marker, a section
 * is collected until its end, then read as calls or, failing that, given back as text.
 *
 * - A suffix that could still begin a start marker is held until ruled out (and a lone high surrogate).
 * - Whitespace at the very start or after a call is held: if a call follows, it becomes the front of
 *   that call's `rawInput`; if text follows, it is text; at the end it comes out as text. So nothing is
 *   dropped, and no whitespace-only text sits between two calls.
 * - A section that is not a call gives back only its start marker as text; the rest is scanned again,
 *   so a marker mentioned in prose does not swallow a real call after it.
 * Every decision depends on the text alone, never on where it was cut: streaming equals whole.
 */
export class TextToolCallScanner {
  private held = "";
  private pendingWhitespace = "";
  /** At the start of the message or right after a call. */
  private atBoundary = true;
  /** Nothing but whitespace seen so far (for whole-message formats). */
  private atMessageStart = true;
  private section: OpenSection | undefined;
  private readonly longestStart: number;
  private readonly singleStart: string | undefined;
  private readonly newCallId = createCallIds();

  constructor(
    private readonly syntax: CallSyntax,
    private readonly lookup: ToolLookup,
  ) {
    this.longestStart = Math.max(...syntax.starts.map((start) => start.length));
    this.singleStart = syntax.starts.length === 1 && !syntax.wholeMessage ? syntax.starts[0] : undefined;
  }

  push(text: string): TextToolSegment[] {
    const out: TextToolSegment[] = [];
    if (text.length === 0) return out;
    if (this.section === undefined && this.held.length === 0 && !this.atBoundary && this.singleStart !== undefined) {
      // The common chunk of prose: no marker in it and none beginning at its end.
      if (text.indexOf(this.singleStart) === -1 && heldSuffixLength(text, 0, this.singleStart) === 0) {
        out.push({ type: "text", text });
        return out;
      }
    }
    const buffer = this.held.length === 0 ? text : this.held + text;
    this.held = "";
    this.consume(buffer, out);
    return out;
  }

  finish(): TextToolSegment[] {
    const out: TextToolSegment[] = [];
    for (;;) {
      if (this.section !== undefined) {
        const section = this.section;
        this.section = undefined;
        const raw = section.chunks.join("");
        if (!this.emitCalls(raw, section.start, out)) this.rescan(raw, section.start, out);
        continue;
      }
      if (this.held.length > 0) {
        const held = this.held;
        this.held = "";
        this.emitText(held, out);
        continue;
      }
      break;
    }
    if (this.pendingWhitespace.length > 0) {
      appendText(out, this.pendingWhitespace);
      this.pendingWhitespace = "";
    }
    return out;
  }

  private consume(input: string, out: TextToolSegment[]): void {
    let buffer = input;
    let position = 0;
    while (position < buffer.length) {
      const section = this.section;
      if (section !== undefined) {
        const rest = position === 0 ? buffer : buffer.slice(position);
        const end = section.finder(rest);
        if (end === SECTION_OPEN) {
          section.chunks.push(rest);
          return;
        }
        this.section = undefined;
        if (end === SECTION_FAILED) {
          section.chunks.push(rest);
          // Scanning goes on from just after the marker, over everything collected.
          buffer = section.chunks.join("").slice(section.start.length);
          position = 0;
          this.emitText(section.start, out);
          continue;
        }
        section.chunks.push(rest.slice(0, end));
        const raw = section.chunks.join("");
        position += end;
        if (!this.emitCalls(raw, section.start, out)) {
          buffer = raw.slice(section.start.length) + buffer.slice(position);
          position = 0;
          this.emitText(section.start, out);
        }
        continue;
      }
      const match = this.findStart(buffer, position);
      if (match === undefined) {
        const keep = this.heldLength(buffer, position);
        const end = buffer.length - keep;
        this.emitText(position === 0 && end === buffer.length ? buffer : buffer.slice(position, end), out);
        if (keep > 0) this.held = buffer.slice(end);
        return;
      }
      this.emitText(buffer.slice(position, match.index), out);
      this.section = { start: match.start, chunks: [match.start], finder: this.syntax.endFinder(match.start) };
      position = match.index + match.start.length;
    }
  }

  /** `finish()` on a section that could not be read: its marker is text, the rest is scanned again. */
  private rescan(raw: string, start: string, out: TextToolSegment[]): void {
    this.emitText(start, out);
    this.consume(raw.slice(start.length), out);
  }

  private findStart(buffer: string, from: number): { index: number; start: string } | undefined {
    if (this.syntax.wholeMessage) {
      if (!this.atMessageStart) return undefined;
      const first = skipSpaces(buffer, from);
      const start = this.syntax.starts.find((candidate) => buffer.startsWith(candidate, first));
      return start === undefined ? undefined : { index: first, start };
    }
    let best: { index: number; start: string } | undefined;
    for (const start of this.syntax.starts) {
      const index = buffer.indexOf(start, from);
      if (index !== -1 && (best === undefined || index < best.index)) best = { index, start };
    }
    return best;
  }

  private heldLength(buffer: string, from: number): number {
    if (this.syntax.wholeMessage) {
      if (!this.atMessageStart) return loneSurrogateLength(buffer, from);
      const first = skipSpaces(buffer, from);
      const rest = buffer.slice(first);
      const partial = rest.length > 0 && this.syntax.starts.some((start) => start.startsWith(rest));
      return partial ? buffer.length - first : loneSurrogateLength(buffer, from);
    }
    if (this.syntax.starts.length === 1) return heldSuffixLength(buffer, from, this.syntax.starts[0]!);
    // The longest suffix that is a proper prefix of any start marker.
    for (let index = Math.max(from, buffer.length - this.longestStart + 1); index < buffer.length; index++) {
      const suffix = buffer.slice(index);
      if (this.syntax.starts.some((start) => start.length > suffix.length && start.startsWith(suffix))) {
        return buffer.length - index;
      }
    }
    return loneSurrogateLength(buffer, from);
  }

  private emitText(text: string, out: TextToolSegment[]): void {
    if (text.length === 0) return;
    if (this.atBoundary) {
      if (isBlank(text)) {
        this.pendingWhitespace += text;
        return;
      }
      this.atBoundary = false;
      this.atMessageStart = false;
      if (this.pendingWhitespace.length > 0) {
        appendText(out, this.pendingWhitespace);
        this.pendingWhitespace = "";
      }
    }
    appendText(out, text);
  }

  /** Reads a finished section; `false` when it holds no call. */
  private emitCalls(raw: string, start: string, out: TextToolSegment[]): boolean {
    const calls = this.syntax.parse(raw, start, this.lookup);
    if (calls === undefined || calls.length === 0) return false;
    let previous = 0;
    calls.forEach((call, index) => {
      const end =
        index === calls.length - 1 ? raw.length : Math.min(Math.max(call.end ?? raw.length, previous), raw.length);
      let rawInput = raw.slice(previous, end);
      if (index === 0 && this.pendingWhitespace.length > 0) {
        rawInput = this.pendingWhitespace + rawInput;
        this.pendingWhitespace = "";
      }
      previous = end;
      out.push({ type: "tool-call", id: call.id ?? this.newCallId(), name: call.name, input: call.input, rawInput });
    });
    this.atBoundary = true;
    this.atMessageStart = false;
    return true;
  }
}

function appendText(out: TextToolSegment[], text: string): void {
  // Reading past the end of an array is slow in V8: check the length first.
  const last = out.length > 0 ? out[out.length - 1] : undefined;
  if (last?.type === "text") out[out.length - 1] = { type: "text", text: last.text + text };
  else out.push({ type: "text", text });
}

/** A high surrogate at the very end waits for its pair, so no segment splits a character. */
function loneSurrogateLength(buffer: string, from: number): number {
  if (buffer.length <= from) return 0;
  const last = buffer.charCodeAt(buffer.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? 1 : 0;
}

function isBlank(text: string): boolean {
  return skipSpaces(text, 0) === text.length;
}

function skipSpaces(text: string, from: number): number {
  let index = from;
  for (; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) break;
  }
  return index;
}

/** `call_`, 16 random hex digits per parser and a sequence number: unique within a parse and, in practice, across a conversation. */
function createCallIds(): () => string {
  let prefix = "";
  let sequence = 0;
  return () => {
    if (prefix === "") prefix = `call_${randomHex(8)}`;
    return `${prefix}${(sequence++).toString(36).padStart(2, "0")}`;
  };
}
