import { jsonrepair } from "jsonrepair";
import type { ConversationResponse } from "../core/conversation.js";
import { IncompleteStreamError } from "../core/errors.js";
import type { Extra } from "../core/extra.js";
import type { Part, ToolCallPart } from "../core/parts.js";
import { decodeOriginSignature } from "../core/reasoning-origin.js";
import type { StopReason } from "../core/stop-reason.js";
import type { StreamError, StreamEvent } from "../core/stream-events.js";
import type { Usage } from "../core/usage.js";
import { jsonNestsDeeperThan } from "../text/json-depth.js";

/**
 * Folds core stream events into the message they describe: the one reducer from events to a message, used by
 * whole answers, the gateway's traces, the CLI and the store's streaming writer alike, so that a streamed
 * answer is the non-streamed one wherever it lands. It checks the event rules of `stream-events.ts` and throws
 * a `StreamOrderError` naming the broken rule, so that a faulty decoder is caught where it goes wrong; the
 * store's lenient form absorbs such events instead (a store keeps whatever arrived, and never throws mid-stream).
 */
export class StreamOrderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StreamOrderError";
  }
}

export interface AccumulatorOptions {
  /**
   * Absorb events that break the order rules instead of throwing: a delta for a block never opened opens it
   * (text and thinking), a block-start while another is open closes that one, a finish closes the open block;
   * anything else out of order is skipped.
   */
  lenient?: boolean;
  /** Remember which parts changed since the last `takeChanges` (an incremental writer's flushes). */
  trackChanges?: boolean;
}

/** A part that changed since the last `takeChanges`, as it reads now (a view: read it, do not modify it). */
export interface ChangedPart {
  position: number;
  part: Part;
}

export interface Accumulator {
  push(event: StreamEvent): void;
  /** The message so far: closed blocks as they are, the open block as received up to now. */
  snapshot(): ConversationResponse;
  /**
   * The finished answer. A stream that ended in an `error` event, or whose events stop before `finish`, has none:
   * that throws an `IncompleteStreamError` carrying the answer as far as it came.
   */
  result(): ConversationResponse;
  /** The parts so far, as `snapshot` shows them, uncopied (views: read them, do not modify them). */
  parts(): Part[];
  /** With `trackChanges`: the parts changed since the last call, in position order. */
  takeChanges(): ChangedPart[];
  /** Marks positions changed again (their write failed and must be retried). */
  restoreChanges(positions: Iterable<number>): void;
  /** The stream's `error` event, if it ended with one. */
  readonly error: StreamError | undefined;
  /** True after `finish` or `error`. */
  readonly ended: boolean;
}

export function createAccumulator(options: AccumulatorOptions = {}): Accumulator {
  return new StreamAccumulator(options);
}

/**
 * The answer a whole stream of events describes. A stream that ended in an error (an upstream's, or a cut that the
 * decoder's `finish()` reported), or whose events stop before `finish`, throws an `IncompleteStreamError` with the
 * answer as far as it came: an interrupted answer never reads as a finished one.
 */
export function accumulate(events: Iterable<StreamEvent>): ConversationResponse {
  const accumulator = new StreamAccumulator({});
  for (const event of events) accumulator.push(event);
  if (accumulator.ended && accumulator.error === undefined) return accumulator.take();
  throw new IncompleteStreamError(accumulator.take(), accumulator.error);
}

/** The fold of `accumulate` without its check of the ending: for a caller that reads `error` itself. */
export function foldEvents(events: Iterable<StreamEvent>): { answer: ConversationResponse; error?: StreamError } {
  const accumulator = new StreamAccumulator({});
  for (const event of events) accumulator.push(event);
  const answer = accumulator.take();
  return accumulator.error === undefined ? { answer } : { answer, error: accumulator.error };
}

/**
 * Tool-call arguments as received: parsed at block end; invalid JSON is repaired and the text kept. Arguments that
 * nest deeper than `MAX_JSON_DEPTH` are kept as text only (input `{}`): parsed, they would overflow the stack of
 * everything that walks a value (conversion, the store, `JSON.stringify`), which made such an answer a 500, or an
 * empty stored answer.
 */
export function parseToolInput(rawInput: string): { input: unknown; rawInput?: string } {
  if (jsonNestsDeeperThan(rawInput)) return { input: {}, rawInput };
  try {
    return { input: JSON.parse(rawInput) };
  } catch {
    try {
      return { input: JSON.parse(jsonrepair(rawInput)), rawInput };
    } catch {
      return { input: {}, rawInput };
    }
  }
}

class StreamAccumulator implements Accumulator {
  private started = false;
  error: StreamError | undefined;
  ended = false;
  private id = "";
  private model = "";
  private extra: Extra | undefined;
  private usage: Usage = { inputTokens: 0, outputTokens: 0 };
  private stopReason: StopReason = { unified: "other", raw: null };
  private stopSequence: string | null | undefined;
  /** Position = block index; the lenient form may leave holes (a block opened past the next index). */
  private readonly blocks: Array<Part | undefined> = [];
  private openIndex: number | undefined;
  /** Tool-input fragments of the open block (builder state kept apart from the parts). */
  private inputText = "";
  private readonly lenient: boolean;
  private readonly changed: Set<number> | undefined;

  constructor(options: AccumulatorOptions) {
    this.lenient = options.lenient === true;
    if (options.trackChanges === true) this.changed = new Set();
  }

  push(event: StreamEvent): void {
    if (this.ended) {
      this.refuse(`${event.type} after the stream ended`);
      return;
    }
    if (event.type === "message-start") {
      if (this.started) {
        this.refuse("a second message-start");
        return;
      }
      this.started = true;
      this.id = event.id;
      this.model = event.model;
      this.usage = { ...this.usage, ...event.usage };
      if (event.extra !== undefined) this.extra = event.extra;
      return;
    }
    if (!this.started) {
      this.refuse(`${event.type} before message-start`);
      this.started = true;
    }
    switch (event.type) {
      case "block-start":
        if (this.openIndex !== undefined) {
          this.refuse(`block-start ${event.index} while block ${this.openIndex} is open`);
          this.close(this.openIndex);
        }
        if (event.index !== this.blocks.length)
          this.refuse(`block-start ${event.index} where block ${this.blocks.length} was expected`);
        this.blocks[event.index] = structuredClone(event.part);
        this.openIndex = event.index;
        this.inputText = "";
        this.changed?.add(event.index);
        return;
      case "text-delta": {
        const part = this.target(event.index, event.type, "text");
        if (part?.type !== "text") {
          this.wrongType(event.type, event.index, part);
          return;
        }
        part.text += event.text;
        this.changed?.add(event.index);
        return;
      }
      case "thinking-delta": {
        const part = this.target(event.index, event.type, "thinking");
        if (part?.type !== "thinking") {
          this.wrongType(event.type, event.index, part);
          return;
        }
        part.thinking += event.thinking;
        this.changed?.add(event.index);
        return;
      }
      case "signature": {
        const part = this.target(event.index, event.type, "thinking");
        if (part?.type !== "thinking") {
          this.wrongType(event.type, event.index, part);
          return;
        }
        part.signature = event.signature;
        const origin = decodeOriginSignature(event.signature);
        if (origin) part.origin = origin;
        this.changed?.add(event.index);
        return;
      }
      case "tool-input-delta": {
        const part = this.target(event.index, event.type, undefined);
        if (part === undefined || !takesInput(part)) {
          this.wrongType(event.type, event.index, part);
          return;
        }
        // Fragments of a block that is not the open one (lenient form) have no text to join: skipped.
        if (event.index !== this.openIndex) return;
        this.inputText += event.partialJson;
        this.changed?.add(event.index);
        return;
      }
      case "opaque-delta": {
        const part = this.target(event.index, event.type, undefined);
        if (part !== undefined && applyOpaqueDelta(part, event.delta)) this.changed?.add(event.index);
        return;
      }
      case "block-end":
        if (this.openIndex !== event.index) {
          this.refuse(this.notOpen(event.type, event.index));
          return;
        }
        this.close(event.index);
        return;
      case "finish":
        if (this.openIndex !== undefined) {
          this.refuse(`finish while block ${this.openIndex} is open`);
          this.close(this.openIndex);
        }
        this.stopReason = event.stopReason;
        if (event.stopSequence !== undefined) this.stopSequence = event.stopSequence;
        this.usage = { ...event.usage };
        this.ended = true;
        return;
      case "error":
        this.error = event.error;
        this.ended = true;
        return;
      default: {
        // Exhaustive at compile time; a value from outside the types (a library caller's) is refused, not thrown on.
        this.refuse(`unknown stream event ${JSON.stringify(event satisfies never)}`);
        return;
      }
    }
  }

  snapshot(): ConversationResponse {
    const parts = this.parts().map((part) => structuredClone(part));
    return this.build(parts, this.extra === undefined ? undefined : structuredClone(this.extra));
  }

  parts(): Part[] {
    const parts: Part[] = [];
    this.blocks.forEach((_, position) => {
      const part = this.partAt(position);
      if (part !== undefined) parts.push(part);
    });
    return parts;
  }

  takeChanges(): ChangedPart[] {
    const changed = this.changed;
    if (changed === undefined || changed.size === 0) return [];
    const positions = [...changed].sort((a, b) => a - b);
    changed.clear();
    const changes: ChangedPart[] = [];
    for (const position of positions) {
      const part = this.partAt(position);
      if (part !== undefined) changes.push({ position, part });
    }
    return changes;
  }

  restoreChanges(positions: Iterable<number>): void {
    for (const position of positions) this.changed?.add(position);
  }

  result(): ConversationResponse {
    if (this.ended && this.error === undefined) return this.snapshot();
    throw new IncompleteStreamError(this.snapshot(), this.error);
  }

  /** The message itself, uncopied, for a caller that discards the accumulator (`accumulate`). */
  take(): ConversationResponse {
    return this.build(this.parts(), this.extra);
  }

  private build(parts: Part[], extra: Extra | undefined): ConversationResponse {
    const response: ConversationResponse = {
      id: this.id,
      model: this.model,
      message: { role: "assistant", parts },
      stopReason: { ...this.stopReason },
      usage: { ...this.usage },
    };
    if (this.stopSequence !== undefined) response.stopSequence = this.stopSequence;
    if (extra !== undefined) response.extra = extra;
    return response;
  }

  /** A part as it reads now: the open block shows its arguments as far as they go, as block-end would parse them. */
  private partAt(position: number): Part | undefined {
    const part = this.blocks[position];
    if (part === undefined || position !== this.openIndex || this.inputText === "") return part;
    return withInput(part, parseToolInput(this.inputText));
  }

  /**
   * The block a delta is for: the open one. The lenient form also takes a block that is not open, and opens
   * a missing text or thinking block where a delta for it comes.
   */
  private target(index: number, type: string, opens: "text" | "thinking" | undefined): Part | undefined {
    if (this.openIndex === index) return this.blocks[index];
    this.refuse(this.notOpen(type, index));
    const existing = this.blocks[index];
    if (existing !== undefined || opens === undefined) return existing;
    const part: Part = opens === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "" };
    this.blocks[index] = part;
    return part;
  }

  private notOpen(type: string, index: number): string {
    return this.openIndex === undefined
      ? `${type} for block ${index}, but no block is open`
      : `${type} for block ${index}, but block ${this.openIndex} is the open one`;
  }

  private wrongType(type: string, index: number, part: Part | undefined): void {
    this.refuse(`${type} for block ${index}, which is ${part?.type ?? "missing"}`);
  }

  private refuse(message: string): void {
    if (!this.lenient) throw new StreamOrderError(message);
  }

  private close(index: number): void {
    const part = this.blocks[index];
    if (part !== undefined && this.inputText !== "")
      this.blocks[index] = withInput(part, parseToolInput(this.inputText));
    this.inputText = "";
    this.openIndex = undefined;
    this.changed?.add(index);
  }
}

/** server_tool_use and mcp_tool_use stream their input like tool_use. */
function takesInput(part: Part): boolean {
  return part.type === "tool_call" || (part.type === "opaque" && hasInput(part.block));
}

function hasInput(block: unknown): block is { input: unknown } {
  return typeof block === "object" && block !== null && "input" in block;
}

/** A copy of `part` with the parsed arguments in place (the part itself stays as it started). */
function withInput(part: Part, parsed: { input: unknown; rawInput?: string }): Part {
  if (part.type === "tool_call") {
    const { rawInput: _, ...rest } = part;
    const call: ToolCallPart = { ...rest, input: parsed.input };
    if (parsed.rawInput !== undefined) call.rawInput = parsed.rawInput;
    return call;
  }
  if (part.type === "opaque" && hasInput(part.block)) return { ...part, block: { ...part.block, input: parsed.input } };
  return part;
}

/** Anthropic `citations_delta` adds one citation to its text block; other opaque deltas have no fold. */
function applyOpaqueDelta(part: Part, delta: unknown): boolean {
  if (typeof delta !== "object" || delta === null) return false;
  const wire = delta as { type?: unknown; citation?: unknown };
  if (wire.type !== "citations_delta" || part.type !== "text") return false;
  const fields = part.extra?.anthropic ?? {};
  const citations = Array.isArray(fields.citations) ? fields.citations : [];
  citations.push(wire.citation);
  part.extra = { ...part.extra, anthropic: { ...fields, citations } };
  return true;
}
