import {
  encodeOriginSignature,
  type IncrementalDecoder,
  NEXT_TEXT,
  promptUsage,
  type ReasoningField,
  type ReasoningOrigin,
  type SignatureCarrier,
  type StreamEvent,
  signaturePart,
  type ToolDefinition,
} from "../../core/index.js";
import type { SseMessage } from "../../stream/sse.js";
import {
  createTextToolCallParser,
  type TextToolCallFormat,
  type TextToolSegment,
} from "../../text/text-tool-calls/index.js";
import { createThinkTagParser, type ThinkSegmentSink, type ThinkTagParser } from "../../text/think-tags.js";
import { streamErrorFromOpenAI } from "./map-error.js";
import { answerStopReason } from "./map-finish-reason.js";
import { mergeReasoningDetails, reasoningDetailsText } from "./reasoning-details.js";
import { readExtraContent } from "./thought-signatures.js";
import { usageFromOpenAI } from "./usage.js";
import type {
  OpenAIChatChunk,
  OpenAIContentPart,
  OpenAIDelta,
  OpenAIReasoningDetail,
  OpenAIToolCallDelta,
  OpenAIUsage,
} from "./wire-types.js";

export interface OpenAIDecodeOptions {
  /** The provider name recorded in the origin of reasoning (gateway config key or preset id). */
  provider?: string;
  /** Parse `<think>` in `content` (beside a reasoning field too). Default true. */
  thinkTags?: boolean;
  /** The server leaves tool calls as text in this syntax. */
  textToolCalls?: TextToolCallFormat;
  tools?: ToolDefinition[];
}

/** OpenAI chunks already parsed from JSON -> core events; the non-stream codec feeds whole answers through it. */
export interface OpenAIChunkDecoder {
  pushChunk(chunk: unknown): StreamEvent[];
  /** `[DONE]` or the end of the body: closes what is open and emits `finish`. */
  end(): StreamEvent[];
  /** An upstream error object: closes what is open and emits `error`. */
  fail(error: unknown): StreamEvent[];
  /** Whether a chunk carried a `finish_reason`. */
  finishReasonSeen(): boolean;
}

type OpenBlock =
  | { kind: "text"; index: number }
  | { kind: "thinking"; index: number; origin: ReasoningOrigin; details: OpenAIReasoningDetail[] }
  | { kind: "tool"; index: number; slot: ToolSlot };

/**
 * One tool call of the answer. It streams live (its block open, each fragment passed on) when it can, or is
 * held, its fragments kept, and sent whole once what comes before it has closed: a call whose name has not
 * come yet, or one that starts while the live call's arguments are not yet whole JSON (servers that send
 * every call's opener first, then interleave the fragments).
 */
interface ToolSlot {
  id: string;
  name: string;
  state: "live" | "held" | "done";
  /** The live call's arguments so far (to see whether they are whole), or the held call's fragments. */
  fragments: string[];
  /**
   * Its thought signature (`extra_content`, Google's endpoints) not sent yet: it goes right before the call's block,
   * or, come after the block opened, right after it.
   */
  signature?: string;
}

type TextToolParser = ReturnType<typeof createTextToolCallParser>;

/** SSE messages of an OpenAI-compatible stream -> core events. */
export function createOpenAIStreamDecoder(options: OpenAIDecodeOptions = {}): IncrementalDecoder<SseMessage> {
  const decoder = createOpenAIChunkDecoder(options);
  let sawDone = false;
  return {
    push(message: SseMessage): StreamEvent[] {
      const data = message.data;
      if (data === "[DONE]") {
        sawDone = true;
        return decoder.end();
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch {
        // A chunk that is not JSON cannot be read; carry the failure as a value and end.
        return decoder.fail({ message: `malformed stream chunk: ${data.slice(0, 200)}`, type: "api_error" });
      }
      if (message.event === "error") {
        const body = parsed as { error?: unknown } | null;
        return decoder.fail(body?.error ?? parsed);
      }
      return decoder.pushChunk(parsed);
    },
    // A body that ends with neither `[DONE]` nor a finish_reason was cut off (a dropped connection read as
    // a clean close): an answer that looks complete would hide it.
    finish: () =>
      sawDone || decoder.finishReasonSeen()
        ? decoder.end()
        : decoder.fail({ message: "the upstream stream ended before the answer was complete", type: "api_error" }),
  };
}

export function createOpenAIChunkDecoder(options: OpenAIDecodeOptions = {}): OpenAIChunkDecoder {
  return new ChunkDecoder(options);
}

class ChunkDecoder implements OpenAIChunkDecoder {
  private out: StreamEvent[] = [];
  private started = false;
  private ended = false;
  private id = "";
  private model = "";
  private nextIndex = 0;
  private open: OpenBlock | undefined;
  /** Details with no text of their own that came before any reasoning (a leading signature or encrypted item). */
  private pendingDetails: OpenAIReasoningDetail[] = [];
  private thinkParser: ThinkTagParser | undefined;
  private toolParser: TextToolParser | undefined;
  /** Calls by their wire index (or, without one, their place in the delta), by id, and the last one opened. */
  private readonly toolSlots = new Map<number, ToolSlot>();
  private readonly slotsById = new Map<string, ToolSlot>();
  private lastSlot: ToolSlot | undefined;
  /** Whether a text block was opened: a message-level thought signature after it rode on it. */
  private textSeen = false;
  /** Thought signature blocks so far (an answer of whitespace and signatures is still that whitespace). */
  private signatureCount = 0;
  /** Calls waiting, in the order they started, for the blocks before them to close. */
  private heldTools: ToolSlot[] = [];
  private toolCount = 0;
  /** Whitespace that would open a text block, held until text proper follows (see `appendText`). */
  private heldWhitespace = "";
  private finishReason: string | null = null;
  private usage: OpenAIUsage | undefined;

  constructor(private readonly options: OpenAIDecodeOptions) {}

  pushChunk(value: unknown): StreamEvent[] {
    if (this.ended || value === null || typeof value !== "object") return [];
    const chunk = value as OpenAIChatChunk;
    if (chunk.error !== undefined && chunk.error !== null) return this.fail(chunk.error);
    if (this.id === "" && typeof chunk.id === "string") this.id = chunk.id;
    if (this.model === "" && typeof chunk.model === "string") this.model = chunk.model;
    const groqUsage = (chunk.x_groq as { usage?: OpenAIUsage } | undefined)?.usage;
    if (chunk.usage !== null && typeof chunk.usage === "object") this.usage = chunk.usage;
    else if (groqUsage !== null && typeof groqUsage === "object") this.usage = groqUsage;
    for (const choice of chunk.choices ?? []) {
      // Only the first choice is a conversation turn (`n > 1` is not supported).
      if ((choice.index ?? 0) !== 0) continue;
      this.start();
      if (choice.delta !== null && typeof choice.delta === "object") this.delta(choice.delta);
      if (typeof choice.finish_reason === "string") this.finishReason = choice.finish_reason;
    }
    return this.take();
  }

  finishReasonSeen(): boolean {
    return this.finishReason !== null;
  }

  end(): StreamEvent[] {
    if (this.ended) return [];
    this.start();
    this.closeAll();
    // Tool calls the server finished with "stop" (or nothing), recovered from text included, still ask the
    // client to run them.
    this.out.push({
      type: "finish",
      stopReason: answerStopReason(this.finishReason, this.toolCount),
      usage: usageFromOpenAI(this.usage),
    });
    this.ended = true;
    return this.take();
  }

  fail(error: unknown): StreamEvent[] {
    if (this.ended) return [];
    this.start();
    this.closeAll();
    this.out.push({ type: "error", error: streamErrorFromOpenAI(error) });
    this.ended = true;
    return this.take();
  }

  /**
   * The start carries the prompt's counts when the server gave them already (usage on every chunk, the first
   * included, as vLLM's continuous usage and some hosted servers send it); most give usage only in the last chunk,
   * and the start none.
   */
  private start(): void {
    if (this.started) return;
    this.started = true;
    const usage = this.usage === undefined ? undefined : promptUsage(usageFromOpenAI(this.usage));
    this.out.push(
      usage === undefined
        ? { type: "message-start", id: this.id, model: this.model }
        : { type: "message-start", id: this.id, model: this.model, usage },
    );
  }

  private delta(delta: OpenAIDelta): void {
    this.reasoning(delta);
    const content = delta.content;
    // A message's thought signature (Google's endpoints): on the delta that opens the text, it stands before the text
    // (a whole answer's is such); later (a signature-only last delta), after what came.
    const signature = delta.extra_content === undefined ? undefined : readExtraContent(delta.extra_content).signature;
    const opensText =
      signature !== undefined && this.open?.kind !== "text" && typeof content === "string" && content !== "";
    if (opensText) this.thoughtSignature(signature, NEXT_TEXT);
    if (typeof content === "string") this.content(content);
    else if (Array.isArray(content)) for (const part of content) this.contentPart(part);
    if (typeof delta.refusal === "string") this.appendText(delta.refusal);
    if (signature !== undefined && !opensText) {
      this.flushParsers();
      this.releaseHeldTools();
      this.thoughtSignature(signature, this.textSeen ? "text" : "own-part");
    }
    if (Array.isArray(delta.tool_calls)) {
      const several = delta.tool_calls.length > 1;
      delta.tool_calls.forEach((call, position) => {
        this.toolCallDelta(call, position, several);
      });
    }
  }

  /** A thought signature as the empty thinking block that carries it (`src/core/thought-signatures.ts`). */
  private thoughtSignature(value: string, carrier: SignatureCarrier): void {
    this.flushPendingDetails();
    this.closeBlock();
    const { signature, ...start } = signaturePart(value, this.options.provider, carrier);
    // whitespace held for a text keeps waiting for it: the text a signature stands before begins with it
    const index = this.nextIndex++;
    this.signatureCount++;
    this.out.push(
      { type: "block-start", index, part: start },
      { type: "signature", index, signature: signature! },
      { type: "block-end", index },
    );
  }

  /** One reasoning text per delta: `reasoning_content`, else `reasoning`, else the details' text (never two). */
  private reasoning(delta: OpenAIDelta): void {
    const details =
      Array.isArray(delta.reasoning_details) && delta.reasoning_details.length > 0
        ? delta.reasoning_details
        : undefined;
    let text: string | undefined;
    let field: ReasoningField = "reasoning_details";
    if (typeof delta.reasoning_content === "string" && delta.reasoning_content !== "") {
      text = delta.reasoning_content;
      field = "reasoning_content";
    } else if (typeof delta.reasoning === "string" && delta.reasoning !== "") {
      text = delta.reasoning;
      field = "reasoning";
    } else if (details !== undefined) {
      text = reasoningDetailsText(details);
      const open = this.open;
      // Details without text of their own (a signature, an encrypted item) belong to the open block, or
      // to the next one: they never open a block of their own while reasoning text may still come.
      if (text === "") {
        if (open?.kind === "thinking" && open.origin.field !== "think-tags")
          mergeReasoningDetails(open.details, details);
        else mergeReasoningDetails(this.pendingDetails, details);
        return;
      }
    }
    if (text === undefined) return;
    const block = this.thinkingBlock(field);
    if (details !== undefined) mergeReasoningDetails(block.details, details);
    if (text !== "") this.out.push({ type: "thinking-delta", index: block.index, thinking: text });
  }

  /**
   * Inline `<think>` in `content` is thinking, beside a reasoning field too: a server's reasoning parser can
   * leave a block behind in the content (a second block, or a model that thinks again), which must not reach
   * the client as text.
   */
  private content(text: string): void {
    if (text === "") return;
    if (this.options.thinkTags === false) {
      this.textSink(text);
      return;
    }
    this.thinkParser ??= createThinkTagParser();
    this.thinkParser.pushTo(text, this.thinkSink);
  }

  /** Mistral Magistral: `{type: "thinking", thinking: [{type: "text", text}]}` parts inside `content`. */
  private contentPart(part: OpenAIContentPart): void {
    if (part === null || typeof part !== "object") return;
    if (part.type === "text" && typeof part.text === "string") this.content(part.text);
    else if (part.type === "thinking") {
      const thinking = part.thinking;
      const text = typeof thinking === "string" ? thinking : Array.isArray(thinking) ? textOfParts(thinking) : "";
      const block = this.thinkingBlock("content-parts");
      if (text !== "") this.out.push({ type: "thinking-delta", index: block.index, thinking: text });
    }
  }

  /** Where the think-tag parser's segments go, with no array per content delta. */
  private readonly thinkSink: ThinkSegmentSink = {
    text: (text) => this.textSink(text),
    thinkingStart: () => {
      this.closeBlock();
      this.thinkingBlock("think-tags");
    },
    thinking: (text) => {
      const block = this.thinkingBlock("think-tags");
      this.out.push({ type: "thinking-delta", index: block.index, thinking: text });
    },
    thinkingEnd: () => {
      if (this.open?.kind === "thinking") this.closeBlock();
    },
  };

  private textSink(text: string): void {
    if (this.options.textToolCalls === undefined) {
      this.appendText(text);
      return;
    }
    this.toolParser ??= createTextToolCallParser(this.options.textToolCalls, this.options.tools);
    this.toolSegments(this.toolParser.push(text));
  }

  private toolSegments(segments: TextToolSegment[]): void {
    for (const segment of segments) {
      if (segment.type === "text") this.appendText(segment.text);
      else {
        this.toolCount++;
        this.releaseHeldTools();
        this.wholeToolCall(segment.id, segment.name, JSON.stringify(segment.input));
      }
    }
  }

  /**
   * A text block opens only once it has more than whitespace: the `\n\n` after `</think>` (or alone in
   * `content`) before a tool call would otherwise be a whitespace-only block, which some clients display and
   * Anthropic refuses when it is sent back. Held whitespace goes in front of the text that follows; another
   * block coming first drops it, and an answer with nothing else keeps it (`closeAll`).
   */
  private appendText(text: string): void {
    if (text === "") return;
    this.releaseHeldTools();
    this.flushPendingDetails();
    if (this.open?.kind !== "text") {
      this.closeBlock();
      if (text.trim() === "") {
        this.heldWhitespace += text;
        return;
      }
      const index = this.nextIndex++;
      this.open = { kind: "text", index };
      this.textSeen = true;
      this.out.push({ type: "block-start", index, part: { type: "text", text: "" } });
      text = this.heldWhitespace + text;
      this.heldWhitespace = "";
    }
    this.out.push({ type: "text-delta", index: this.open.index, text });
  }

  /** The index of a new block other than text; whitespace held for a text block that never came goes. */
  private nextOtherBlock(): number {
    this.heldWhitespace = "";
    return this.nextIndex++;
  }

  private thinkingBlock(field: ReasoningField): Extract<OpenBlock, { kind: "thinking" }> {
    this.releaseHeldTools();
    const open = this.open;
    if (open?.kind === "thinking" && open.origin.field === field) return open;
    this.closeBlock();
    const origin: ReasoningOrigin = { format: "openai" };
    if (this.options.provider !== undefined) origin.provider = this.options.provider;
    origin.field = field;
    if (this.model !== "") origin.model = this.model;
    const block = { kind: "thinking" as const, index: this.nextOtherBlock(), origin, details: this.pendingDetails };
    this.pendingDetails = [];
    this.open = block;
    this.out.push({
      type: "block-start",
      index: block.index,
      part: { type: "thinking", thinking: "", origin: { ...origin } },
    });
    return block;
  }

  /**
   * Calls are keyed by `index` and `id`: a new id at a used index is a new call (Ollama numbers every call
   * of a parallel batch 0). The id comes from a call's first delta, the name from the first that has one. A call's
   * thought signature (`extra_content`) stands right before it.
   */
  private toolCallDelta(call: OpenAIToolCallDelta, position: number, several: boolean): void {
    if (call === null || typeof call !== "object") return;
    const wireIndex = typeof call.index === "number" ? call.index : position;
    const id = typeof call.id === "string" && call.id !== "" ? call.id : undefined;
    const name = typeof call.function?.name === "string" ? call.function.name : "";
    const signature = call.extra_content === undefined ? undefined : readExtraContent(call.extra_content).signature;
    let slot = this.continuedCall(call, wireIndex, id, name, several);
    if (slot === undefined) {
      this.flushParsers();
      this.flushPendingDetails();
      slot = { id: id ?? `call_${this.toolCount}`, name, state: "held", fragments: [] };
      if (signature !== undefined) slot.signature = signature;
      this.toolCount++;
      this.toolSlots.set(wireIndex, slot);
      this.slotsById.set(slot.id, slot);
      this.lastSlot = slot;
      const live = this.open?.kind === "tool" ? this.open.slot : undefined;
      if (name === "" || this.heldTools.length > 0 || (live !== undefined && !isWholeJson(live.fragments))) {
        this.heldTools.push(slot);
      } else {
        this.closeBlock();
        this.openToolBlock(slot);
      }
    } else {
      if (slot.name === "" && name !== "") slot.name = name;
      if (signature !== undefined) this.lateSignature(slot, signature);
    }
    const fragment = call.function?.arguments;
    if (typeof fragment !== "string" || fragment === "") return;
    if (slot.state === "held") slot.fragments.push(fragment);
    else if (slot.state === "live" && this.open?.kind === "tool" && this.open.slot === slot) {
      slot.fragments.push(fragment);
      this.out.push({ type: "tool-input-delta", index: this.open.index, partialJson: fragment });
    }
    // A fragment for a call already closed (its JSON was whole when the next call started, or it was sent
    // whole when other content came) has nowhere to go in a stream of blocks; servers do not send one.
  }

  /**
   * The call a delta goes on with, or undefined for a new one. With an `index`, the call there unless the delta names
   * another id. Without (Google's endpoints send each call whole, with no index): a delta of several calls by their
   * places, as before; one call alone goes on with the call of its id, or, with no id, with the last call, unless it
   * names a function when the last already has one (then it is the next call).
   */
  private continuedCall(
    call: OpenAIToolCallDelta,
    wireIndex: number,
    id: string | undefined,
    name: string,
    several: boolean,
  ): ToolSlot | undefined {
    if (typeof call.index === "number" || several) {
      const slot = this.toolSlots.get(wireIndex);
      return slot === undefined || (id !== undefined && id !== slot.id) ? undefined : slot;
    }
    if (id !== undefined) return this.slotsById.get(id);
    const last = this.lastSlot;
    return last === undefined || (name !== "" && last.name !== "") ? undefined : last;
  }

  /** A signature for a call already under way: held, it goes before it still; sent, it follows its block. */
  private lateSignature(slot: ToolSlot, signature: string): void {
    if (slot.state === "held" || (this.open?.kind === "tool" && this.open.slot === slot)) {
      slot.signature ??= signature;
      return;
    }
    this.thoughtSignature(signature, { call: slot.id });
  }

  private openToolBlock(slot: ToolSlot): void {
    this.sendSignature(slot);
    const index = this.nextOtherBlock();
    slot.state = "live";
    this.open = { kind: "tool", index, slot };
    this.out.push({ type: "block-start", index, part: { type: "tool_call", id: slot.id, name: slot.name, input: {} } });
  }

  /** Held calls go out whole, in order, once the block before them has closed. */
  private releaseHeldTools(): void {
    if (this.heldTools.length === 0) return;
    this.closeBlock();
    const held = this.heldTools;
    this.heldTools = [];
    for (const slot of held) {
      slot.state = "done";
      this.sendSignature(slot);
      this.wholeToolCall(slot.id, slot.name, slot.fragments.join(""));
      slot.fragments = [];
    }
  }

  /** A call's signature not sent yet, if it came, as a block of its own (right before the call's, where it can). */
  private sendSignature(slot: ToolSlot): void {
    const signature = slot.signature;
    if (signature === undefined) return;
    delete slot.signature;
    this.thoughtSignature(signature, { call: slot.id });
  }

  private wholeToolCall(id: string, name: string, json: string): void {
    this.flushPendingDetails();
    this.closeBlock();
    const index = this.nextOtherBlock();
    this.out.push({ type: "block-start", index, part: { type: "tool_call", id, name, input: {} } });
    if (json !== "") this.out.push({ type: "tool-input-delta", index, partialJson: json });
    this.out.push({ type: "block-end", index });
  }

  private flushThinkParser(): void {
    const parser = this.thinkParser;
    if (parser === undefined) return;
    this.thinkParser = undefined;
    parser.finishTo(this.thinkSink);
  }

  private flushParsers(): void {
    this.flushThinkParser();
    const parser = this.toolParser;
    if (parser === undefined) return;
    this.toolParser = undefined;
    this.toolSegments(parser.finish());
  }

  private closeAll(): void {
    this.flushParsers();
    this.flushPendingDetails();
    this.releaseHeldTools();
    this.closeBlock();
    if (this.heldWhitespace !== "" && this.nextIndex === this.signatureCount) {
      // Whitespace is all the answer said: it is the answer.
      const index = this.nextIndex++;
      this.out.push({ type: "block-start", index, part: { type: "text", text: "" } });
      this.out.push({ type: "text-delta", index, text: this.heldWhitespace });
      this.out.push({ type: "block-end", index });
    }
    this.heldWhitespace = "";
  }

  /** Reasoning that is only details (o3, Gemini: encrypted) still gets its thinking block, before what follows. */
  private flushPendingDetails(): void {
    if (this.pendingDetails.length === 0) return;
    if (this.open?.kind === "thinking" && this.open.origin.field !== "think-tags") {
      mergeReasoningDetails(this.open.details, this.pendingDetails);
      this.pendingDetails = [];
      return;
    }
    this.thinkingBlock("reasoning_details");
  }

  private closeBlock(): void {
    const open = this.open;
    if (open === undefined) return;
    this.open = undefined;
    if (open.kind === "tool") {
      open.slot.state = "done";
      open.slot.fragments = [];
    }
    if (open.kind === "thinking" && open.details.length > 0) {
      // Details arrive over the whole block: the signature envelope carries them, set once, at the end.
      const signature = encodeOriginSignature({ ...open.origin, details: open.details });
      this.out.push({ type: "signature", index: open.index, signature });
    }
    this.out.push({ type: "block-end", index: open.index });
    // A call's signature that came once its block was open follows it.
    if (open.kind === "tool") this.sendSignature(open.slot);
  }

  private take(): StreamEvent[] {
    if (this.out.length === 0) return [];
    const events = this.out;
    this.out = [];
    return events;
  }
}

function textOfParts(parts: ReadonlyArray<{ type: string; text?: string }>): string {
  let text = "";
  for (const part of parts) if (typeof part?.text === "string") text += part.text;
  return text;
}

/** Whether a live call's arguments so far are a whole JSON value: then the next call need not wait for it. */
function isWholeJson(fragments: string[]): boolean {
  const text = fragments.join("");
  if (text.trim() === "") return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
