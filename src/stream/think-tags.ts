/**
 * Splits `<think>...</think>` reasoning out of OpenAI-style `content`, streaming or whole.
 *
 * Rules:
 * - Any number of thinking blocks, interleaved with text, in order. An empty `<think></think>` is still
 *   a block (start + end, no `thinking` segment).
 * - Tags may be cut anywhere across pushes. Only the longest suffix that could still begin the tag the
 *   parser is looking for is held back, and it is released by the next push that rules it out. A lone
 *   high surrogate at the end of a push is held too, so that no segment splits a character.
 * - Inside a block an open tag is plain thinking (no nesting): the first close tag ends the block.
 * - A `<think>` never closed ends as a thinking block at `finish()`.
 * - A close tag with no open block (DeepSeek-R1 and Qwen3 templates put `<think>` in the prompt, so
 *   some servers stream only the close tag) is kept verbatim as text. Treating the text before it as
 *   thinking would mean holding back every answer until a close tag or the end, since any answer
 *   might turn out to be one; dropping the tag would lose bytes. A caller that knows the template
 *   opened the block passes `startInThinking`: the answer then starts inside a block (an explicit
 *   open tag at the very start is absorbed into it) and the first close tag ends it.
 *
 * Streaming contract: for any split of the input, merging consecutive `text` / `thinking` segments of
 * the pushed output gives exactly `splitThinkTags(input)`.
 */

export type ThinkSegment =
  | { type: "text"; text: string }
  | { type: "thinking-start" }
  | { type: "thinking"; text: string }
  | { type: "thinking-end" };

export interface ThinkTagOptions {
  openTag?: string;
  closeTag?: string;
  /** The prompt already opened a thinking block (see the file header). */
  startInThinking?: boolean;
}

export interface ThinkTagParser {
  push(text: string): ThinkSegment[];
  finish(): ThinkSegment[];
}

export function createThinkTagParser(options: ThinkTagOptions = {}): ThinkTagParser {
  return new StreamingThinkTagParser(options);
}

/** The whole-content form: segments of the same kind are merged. */
export function splitThinkTags(content: string, options: ThinkTagOptions = {}): ThinkSegment[] {
  const parser = new StreamingThinkTagParser(options);
  return mergeThinkSegments([...parser.push(content), ...parser.finish()]);
}

/** Joins consecutive `text` segments and consecutive `thinking` segments. */
export function mergeThinkSegments(segments: readonly ThinkSegment[]): ThinkSegment[] {
  const merged: ThinkSegment[] = [];
  for (const segment of segments) {
    const last = merged[merged.length - 1];
    if (last !== undefined && (segment.type === "text" || segment.type === "thinking") && last.type === segment.type) {
      merged[merged.length - 1] = { type: segment.type, text: last.text + segment.text };
    } else {
      merged.push(segment);
    }
  }
  return merged;
}

class StreamingThinkTagParser implements ThinkTagParser {
  private readonly openTag: string;
  private readonly closeTag: string;
  private inThinking = false;
  /** A suffix of the input that may still turn out to be the start of a tag. */
  private held = "";
  /** `startInThinking` before the first input: the implicit block is not yet announced. */
  private implicitOpenPending: boolean;
  /** `startInThinking`: an explicit open tag at the very start belongs to the implicit block. */
  private absorbLeadingOpenTag: boolean;

  constructor(options: ThinkTagOptions) {
    this.openTag = options.openTag ?? "<think>";
    this.closeTag = options.closeTag ?? "</think>";
    if (this.openTag === "" || this.closeTag === "") throw new Error("think tags must not be empty");
    this.implicitOpenPending = options.startInThinking === true;
    this.absorbLeadingOpenTag = this.implicitOpenPending;
  }

  push(text: string): ThinkSegment[] {
    if (this.held.length === 0 && !this.implicitOpenPending && !this.absorbLeadingOpenTag) {
      // The common chunk: no tag in it and none beginning at its end.
      const tag = this.inThinking ? this.closeTag : this.openTag;
      if (text.indexOf(tag) === -1 && heldSuffixLength(text, 0, tag) === 0) {
        return text.length === 0 ? [] : [this.segment(text)];
      }
    }
    const out: ThinkSegment[] = [];
    this.announceImplicitOpen(out);
    if (text.length === 0) return out;
    const buffer = this.held.length === 0 ? text : this.held + text;
    this.held = "";
    let position = 0;
    if (this.absorbLeadingOpenTag) {
      if (buffer.length < this.openTag.length && this.openTag.startsWith(buffer)) {
        this.held = buffer;
        return out;
      }
      this.absorbLeadingOpenTag = false;
      if (buffer.startsWith(this.openTag)) position = this.openTag.length;
    }
    for (;;) {
      const tag = this.inThinking ? this.closeTag : this.openTag;
      const found = buffer.indexOf(tag, position);
      if (found === -1) break;
      if (found > position) out.push(this.segment(buffer.slice(position, found)));
      out.push(this.inThinking ? { type: "thinking-end" } : { type: "thinking-start" });
      this.inThinking = !this.inThinking;
      position = found + tag.length;
    }
    const keep = heldSuffixLength(buffer, position, this.inThinking ? this.closeTag : this.openTag);
    const end = buffer.length - keep;
    if (end > position)
      out.push(this.segment(position === 0 && end === buffer.length ? buffer : buffer.slice(position, end)));
    if (keep > 0) this.held = buffer.slice(end);
    return out;
  }

  finish(): ThinkSegment[] {
    const out: ThinkSegment[] = [];
    this.announceImplicitOpen(out);
    this.absorbLeadingOpenTag = false;
    if (this.held.length > 0) {
      out.push(this.segment(this.held));
      this.held = "";
    }
    if (this.inThinking) {
      out.push({ type: "thinking-end" });
      this.inThinking = false;
    }
    return out;
  }

  private announceImplicitOpen(out: ThinkSegment[]): void {
    if (!this.implicitOpenPending) return;
    this.implicitOpenPending = false;
    this.inThinking = true;
    out.push({ type: "thinking-start" });
  }

  private segment(text: string): ThinkSegment {
    return this.inThinking ? { type: "thinking", text } : { type: "text", text };
  }
}

/**
 * How many characters at the end of `buffer` (from `from` on) must wait for the next push: the
 * longest suffix that is a proper prefix of `tag`, or else a trailing lone high surrogate.
 */
export function heldSuffixLength(buffer: string, from: number, tag: string): number {
  const length = buffer.length;
  const first = tag[0]!;
  // A partial tag can only sit in the last tag.length - 1 characters; the earliest match is the longest.
  let index = buffer.indexOf(first, Math.max(from, length - tag.length + 1));
  while (index !== -1) {
    if (isPrefixAt(buffer, index, tag)) return length - index;
    index = buffer.indexOf(first, index + 1);
  }
  if (length > from) {
    const last = buffer.charCodeAt(length - 1);
    if (last >= 0xd800 && last <= 0xdbff) return 1;
  }
  return 0;
}

/** Whether `buffer.slice(index)` is a prefix of `tag` (the caller guarantees it is shorter). */
function isPrefixAt(buffer: string, index: number, tag: string): boolean {
  for (let offset = 1; index + offset < buffer.length; offset++) {
    if (buffer.charCodeAt(index + offset) !== tag.charCodeAt(offset)) return false;
  }
  return true;
}
