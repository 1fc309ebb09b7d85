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

/**
 * Receives a parser's output without any allocation per push: the same segments, in the same order, as
 * the array form returns, one call each. `text` and `thinking` are never called with "".
 */
export interface ThinkSegmentSink {
  text(text: string): void;
  thinkingStart(): void;
  thinking(text: string): void;
  thinkingEnd(): void;
}

export interface ThinkTagParser {
  push(text: string): ThinkSegment[];
  finish(): ThinkSegment[];
  /** `push` with the segments handed to `sink` instead of returned (the streaming hot path). */
  pushTo(text: string, sink: ThinkSegmentSink): void;
  /** `finish` with the segments handed to `sink`. */
  finishTo(sink: ThinkSegmentSink): void;
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

/** The sink behind the array form: appends segment objects to `out`, which the caller swaps per push. */
class SegmentCollector implements ThinkSegmentSink {
  out: ThinkSegment[] = [];
  text(text: string): void {
    this.out.push({ type: "text", text });
  }
  thinkingStart(): void {
    this.out.push({ type: "thinking-start" });
  }
  thinking(text: string): void {
    this.out.push({ type: "thinking", text });
  }
  thinkingEnd(): void {
    this.out.push({ type: "thinking-end" });
  }
}

class StreamingThinkTagParser implements ThinkTagParser {
  private readonly openTag: string;
  private readonly closeTag: string;
  /** The first character of each tag: a push without the awaited one can hold no tag nor the start of one. */
  private readonly openFirst: string;
  private readonly closeFirst: string;
  private inThinking = false;
  /** The first character of the tag awaited in the current state. */
  private awaitedFirst: string;
  /** A suffix of the input that may still turn out to be the start of a tag. */
  private held = "";
  /** `startInThinking` before the first input: the implicit block is not yet announced. */
  private implicitOpenPending: boolean;
  /** `startInThinking`: an explicit open tag at the very start belongs to the implicit block. */
  private absorbLeadingOpenTag: boolean;
  /** Nothing held and nothing pending: a push can take the fast path. */
  private plain: boolean;
  private readonly collector = new SegmentCollector();

  constructor(options: ThinkTagOptions) {
    this.openTag = options.openTag ?? "<think>";
    this.closeTag = options.closeTag ?? "</think>";
    if (this.openTag === "" || this.closeTag === "") throw new Error("think tags must not be empty");
    this.openFirst = this.openTag[0]!;
    this.closeFirst = this.closeTag[0]!;
    this.awaitedFirst = this.openFirst;
    this.implicitOpenPending = options.startInThinking === true;
    this.absorbLeadingOpenTag = this.implicitOpenPending;
    this.plain = !this.implicitOpenPending;
  }

  push(text: string): ThinkSegment[] {
    if (this.plain && this.passesThrough(text)) {
      if (text.length === 0) return [];
      return [this.inThinking ? { type: "thinking", text } : { type: "text", text }];
    }
    const out: ThinkSegment[] = [];
    this.collector.out = out;
    this.pushSlow(text, this.collector);
    return out;
  }

  pushTo(text: string, sink: ThinkSegmentSink): void {
    if (this.plain && this.passesThrough(text)) {
      if (text.length === 0) return;
      if (this.inThinking) sink.thinking(text);
      else sink.text(text);
      return;
    }
    this.pushSlow(text, sink);
  }

  finish(): ThinkSegment[] {
    const out: ThinkSegment[] = [];
    this.collector.out = out;
    this.finishTo(this.collector);
    return out;
  }

  finishTo(sink: ThinkSegmentSink): void {
    this.announceImplicitOpen(sink);
    this.absorbLeadingOpenTag = false;
    if (this.held.length > 0) {
      this.emit(this.held, sink);
      this.held = "";
    }
    if (this.inThinking) {
      sink.thinkingEnd();
      this.inThinking = false;
    }
    this.awaitedFirst = this.openFirst;
    this.plain = true;
  }

  /**
   * The common push, with nothing held: it holds no character that could begin the tag awaited and
   * does not end in a high surrogate, so it is all one segment.
   */
  private passesThrough(text: string): boolean {
    const length = text.length;
    if (length === 0) return true;
    const last = text.charCodeAt(length - 1);
    if (last >= 0xd800 && last <= 0xdbff) return false;
    return text.indexOf(this.awaitedFirst) === -1;
  }

  private pushSlow(text: string, sink: ThinkSegmentSink): void {
    this.announceImplicitOpen(sink);
    if (text.length === 0) return;
    const buffer = this.held.length === 0 ? text : this.held + text;
    this.held = "";
    let position = 0;
    if (this.absorbLeadingOpenTag) {
      if (buffer.length < this.openTag.length && this.openTag.startsWith(buffer)) {
        this.held = buffer;
        return;
      }
      this.absorbLeadingOpenTag = false;
      if (buffer.startsWith(this.openTag)) position = this.openTag.length;
    }
    for (;;) {
      const tag = this.inThinking ? this.closeTag : this.openTag;
      const found = buffer.indexOf(tag, position);
      if (found === -1) break;
      if (found > position) this.emit(buffer.slice(position, found), sink);
      if (this.inThinking) sink.thinkingEnd();
      else sink.thinkingStart();
      this.inThinking = !this.inThinking;
      position = found + tag.length;
    }
    this.awaitedFirst = this.inThinking ? this.closeFirst : this.openFirst;
    const keep = heldSuffixLength(buffer, position, this.inThinking ? this.closeTag : this.openTag);
    const end = buffer.length - keep;
    if (end > position) this.emit(position === 0 && end === buffer.length ? buffer : buffer.slice(position, end), sink);
    if (keep > 0) this.held = buffer.slice(end);
    this.plain = keep === 0;
  }

  private announceImplicitOpen(sink: ThinkSegmentSink): void {
    if (!this.implicitOpenPending) return;
    this.implicitOpenPending = false;
    this.inThinking = true;
    this.awaitedFirst = this.closeFirst;
    sink.thinkingStart();
  }

  private emit(text: string, sink: ThinkSegmentSink): void {
    if (this.inThinking) sink.thinking(text);
    else sink.text(text);
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
