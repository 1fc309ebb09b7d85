import { jsonrepair } from "jsonrepair";
import type { ConversationResponse } from "../core/conversation.js";
import type { Extra } from "../core/extra.js";
import type { Part, ToolCallPart } from "../core/parts.js";
import { decodeOriginSignature } from "../core/reasoning-origin.js";
import type { StopReason } from "../core/stop-reason.js";
import type { StreamError, StreamEvent } from "../core/stream-events.js";
import type { Usage } from "../core/usage.js";

/**
 * Folds core stream events into the message they describe: the reducer that proves a streamed answer equals
 * the non-streamed one. It checks the event rules of `stream-events.ts` and throws a `StreamOrderError`
 * naming the broken rule, so that a faulty decoder is caught where it goes wrong.
 */
export class StreamOrderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StreamOrderError";
  }
}

export interface Accumulator {
  push(event: StreamEvent): void;
  /** The message so far: closed blocks as they are, the open block as received up to now. */
  snapshot(): ConversationResponse;
  /** The stream's `error` event, if it ended with one. */
  readonly error: StreamError | undefined;
  /** True after `finish` or `error`. */
  readonly ended: boolean;
}

export function createAccumulator(): Accumulator {
  return new StreamAccumulator();
}

export function accumulate(events: Iterable<StreamEvent>): ConversationResponse {
  const accumulator = new StreamAccumulator();
  for (const event of events) accumulator.push(event);
  return accumulator.take();
}

/** Tool-call arguments as received: parsed at block end; invalid JSON is repaired and the text kept. */
export function parseToolInput(rawInput: string): { input: unknown; rawInput?: string } {
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
  private readonly parts: Part[] = [];
  private openIndex: number | undefined;
  /** Tool-input fragments of the open block (builder state kept apart from the parts). */
  private inputText = "";

  push(event: StreamEvent): void {
    if (this.ended) throw new StreamOrderError(`${event.type} after the stream ended`);
    if (event.type === "message-start") {
      if (this.started) throw new StreamOrderError("a second message-start");
      this.started = true;
      this.id = event.id;
      this.model = event.model;
      this.usage = { ...this.usage, ...event.usage };
      if (event.extra !== undefined) this.extra = event.extra;
      return;
    }
    if (!this.started) throw new StreamOrderError(`${event.type} before message-start`);
    switch (event.type) {
      case "block-start":
        if (this.openIndex !== undefined)
          throw new StreamOrderError(`block-start ${event.index} while block ${this.openIndex} is open`);
        if (event.index !== this.parts.length)
          throw new StreamOrderError(`block-start ${event.index} where block ${this.parts.length} was expected`);
        this.parts.push(structuredClone(event.part));
        this.openIndex = event.index;
        this.inputText = "";
        return;
      case "text-delta": {
        const part = this.open(event.index, event.type);
        if (part.type !== "text") throw this.wrongType(event.type, part);
        part.text += event.text;
        return;
      }
      case "thinking-delta": {
        const part = this.open(event.index, event.type);
        if (part.type !== "thinking") throw this.wrongType(event.type, part);
        part.thinking += event.thinking;
        return;
      }
      case "signature": {
        const part = this.open(event.index, event.type);
        if (part.type !== "thinking") throw this.wrongType(event.type, part);
        part.signature = event.signature;
        const origin = decodeOriginSignature(event.signature);
        if (origin) part.origin = origin;
        return;
      }
      case "tool-input-delta": {
        const part = this.open(event.index, event.type);
        if (part.type !== "tool_call" && !(part.type === "opaque" && hasInput(part.block)))
          throw this.wrongType(event.type, part);
        this.inputText += event.partialJson;
        return;
      }
      case "opaque-delta": {
        const part = this.open(event.index, event.type);
        applyOpaqueDelta(part, event.delta);
        return;
      }
      case "block-end": {
        const part = this.open(event.index, event.type);
        this.closeInput(part);
        this.openIndex = undefined;
        return;
      }
      case "finish":
        if (this.openIndex !== undefined) throw new StreamOrderError(`finish while block ${this.openIndex} is open`);
        this.stopReason = event.stopReason;
        if (event.stopSequence !== undefined) this.stopSequence = event.stopSequence;
        this.usage = { ...event.usage };
        this.ended = true;
        return;
      case "error":
        this.error = event.error;
        this.ended = true;
        return;
      default:
        throw new StreamOrderError(`unknown stream event ${JSON.stringify(event)}`);
    }
  }

  snapshot(): ConversationResponse {
    return this.build(structuredClone(this.parts), this.extra === undefined ? undefined : structuredClone(this.extra));
  }

  /** The message itself, uncopied, for a caller that discards the accumulator (`accumulate`). */
  take(): ConversationResponse {
    return this.build(this.parts, this.extra);
  }

  private build(parts: Part[], extra: Extra | undefined): ConversationResponse {
    // the open block shows its arguments as far as they go; block-end would parse them the same way
    const open = this.openIndex === undefined ? undefined : parts[this.openIndex];
    if (open && this.inputText !== "") setInput(open, parseToolInput(this.inputText));
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

  private open(index: number, type: string): Part {
    if (this.openIndex !== index) {
      throw new StreamOrderError(
        this.openIndex === undefined
          ? `${type} for block ${index}, but no block is open`
          : `${type} for block ${index}, but block ${this.openIndex} is the open one`,
      );
    }
    return this.parts[index] as Part;
  }

  private wrongType(type: string, part: Part): StreamOrderError {
    return new StreamOrderError(`${type} for block ${this.openIndex}, which is ${part.type}`);
  }

  private closeInput(part: Part): void {
    if (this.inputText === "") return;
    setInput(part, parseToolInput(this.inputText));
    this.inputText = "";
  }
}

function hasInput(block: unknown): block is { input: unknown } {
  return typeof block === "object" && block !== null && "input" in block;
}

function setInput(part: Part, parsed: { input: unknown; rawInput?: string }): void {
  if (part.type === "tool_call") {
    const call: ToolCallPart = part;
    call.input = parsed.input;
    if (parsed.rawInput !== undefined) call.rawInput = parsed.rawInput;
  } else if (part.type === "opaque" && hasInput(part.block)) {
    // server_tool_use and mcp_tool_use stream their input like tool_use
    part.block.input = parsed.input;
  }
}

/** Anthropic `citations_delta` adds one citation to its text block; other opaque deltas have no fold. */
function applyOpaqueDelta(part: Part, delta: unknown): void {
  if (typeof delta !== "object" || delta === null) return;
  const wire = delta as { type?: unknown; citation?: unknown };
  if (wire.type !== "citations_delta" || part.type !== "text") return;
  const fields = part.extra?.anthropic ?? {};
  const citations = Array.isArray(fields.citations) ? fields.citations : [];
  citations.push(wire.citation);
  part.extra = { ...part.extra, anthropic: { ...fields, citations } };
}
