import {
  assertNever,
  encodeOriginSignature,
  geminiSignature,
  isOriginSignature,
  NEXT_TEXT,
  type ReasoningOrigin,
  ridesOnText,
  type StreamEvent,
  type ThinkingPart,
} from "../../core/index.js";
import { randomHex } from "../../core/portable.js";
import type { ReasoningMode } from "./compat.js";
import { finishReasonFor } from "./map-finish-reason.js";
import { sealedDetail } from "./sealed-reasoning.js";
import { withThoughtSignature } from "./thought-signatures.js";
import { usageToOpenAI } from "./usage.js";
import type { OpenAIChatChunk, OpenAIDelta } from "./wire-types.js";

export interface OpenAIStreamEncoderOptions {
  /** The model name shown to the client. */
  model: string;
  id?: string;
  created?: number;
  /** Where thinking goes for the client. Default `reasoning_content`. */
  reasoning?: ReasoningMode;
  /** Send a final `choices: []` chunk with usage (the client asked for `stream_options.include_usage`). */
  includeUsage?: boolean;
}

export interface OpenAIStreamEncoder {
  encode(event: StreamEvent): string;
  done(): string;
}

/**
 * Core events -> `data: {chat.completion.chunk}` lines. A tool call's id, type and name go in its first
 * delta only, then argument fragments alone: clients concatenate every string field they see again. A thought
 * signature goes in `extra_content.google` as Google's endpoint sends it (`thought-signatures.ts`): on its call's
 * first delta, on the first content delta of the text it stands before, or on a delta of its own.
 */
export function createOpenAIStreamEncoder(options: OpenAIStreamEncoderOptions): OpenAIStreamEncoder {
  return new StreamEncoder(options);
}

class StreamEncoder implements OpenAIStreamEncoder {
  private id: string;
  private readonly created: number;
  private readonly mode: ReasoningMode;
  /** Block index -> OpenAI tool-call index, for tool-call blocks. */
  private readonly toolIndexes = new Map<number, number>();
  /** Tool blocks whose arguments have not gone out yet: their input from the block's start. */
  private readonly toolsWithoutArguments = new Map<number, unknown>();
  private readonly thinkingBlocks = new Set<number>();
  /**
   * Thinking blocks as they come (text, origin, signature), for the detail that carries the reasoning another API
   * sealed (see sealed-reasoning): whether a block is such is known at its start or only from its signature.
   */
  private readonly sealedBlocks = new Map<number, ThinkingPart>();
  private sealedCount = 0;
  /** Thought signature blocks (`geminiSignature`): what they are, and their envelope once it came. */
  private readonly signatureBlocks = new Map<number, { origin: ReasoningOrigin; signature?: string }>();
  /** Signatures waiting for their call (by id) or for the text they stand before. */
  private readonly callSignatures = new Map<string, string>();
  private textSignature: string | undefined;
  /** Calls sent so far, by id: their OpenAI tool-call index. */
  private readonly sentCalls = new Map<string, number>();
  /** Thinking blocks started so far: in one reasoning field they are joined by a blank line, as whole answers are. */
  private thinkingCount = 0;
  private toolCount = 0;

  constructor(private readonly options: OpenAIStreamEncoderOptions) {
    this.id = options.id ?? "";
    this.created = options.created ?? Math.floor(Date.now() / 1000);
    this.mode = options.reasoning ?? "reasoning_content";
  }

  encode(event: StreamEvent): string {
    switch (event.type) {
      case "message-start":
        // Clients key chunks by id: a source that had none (or Parley's own start) still gets one.
        if (this.id === "") this.id = event.id === "" ? `chatcmpl-${randomHex(12)}` : event.id;
        return this.chunk({ role: "assistant", content: "" });
      case "block-start": {
        const part = event.part;
        if (part.type === "tool_call") {
          const toolIndex = this.toolCount++;
          this.toolIndexes.set(event.index, toolIndex);
          this.toolsWithoutArguments.set(event.index, part.input);
          const call: Record<string, unknown> = {
            index: toolIndex,
            id: part.id,
            type: "function",
            function: { name: part.name, arguments: "" },
          };
          this.sentCalls.set(part.id, toolIndex);
          const signature = this.callSignatures.get(part.id);
          if (signature !== undefined) {
            this.callSignatures.delete(part.id);
            call.extra_content = withThoughtSignature(undefined, "google", signature);
          }
          return this.chunk({ tool_calls: [call] });
        }
        const signature = geminiSignature(part);
        if (signature !== undefined) {
          this.signatureBlocks.set(event.index, { origin: signature });
          return "";
        }
        if (part.type === "thinking") {
          this.thinkingBlocks.add(event.index);
          if (this.mode !== "drop") this.sealedBlocks.set(event.index, { ...part });
          const separated =
            this.thinkingCount++ > 0 && (this.mode === "reasoning_content" || this.mode === "reasoning");
          const opening =
            this.mode === "think-tags" ? this.chunk({ content: "<think>" }) : separated ? this.thinking("\n\n") : "";
          return part.thinking === "" ? opening : opening + this.thinking(part.thinking);
        }
        if (part.type === "text" && part.text !== "") return this.content(part.text);
        return "";
      }
      case "text-delta":
        return event.text === "" ? "" : this.content(event.text);
      case "thinking-delta": {
        const sealed = this.sealedBlocks.get(event.index);
        if (sealed !== undefined) sealed.thinking += event.thinking;
        return event.thinking === "" ? "" : this.thinking(event.thinking);
      }
      case "tool-input-delta": {
        const toolIndex = this.toolIndexes.get(event.index);
        if (toolIndex === undefined || event.partialJson === "") return "";
        this.toolsWithoutArguments.delete(event.index);
        return this.chunk({ tool_calls: [{ index: toolIndex, function: { arguments: event.partialJson } }] });
      }
      case "block-end":
        if (this.signatureBlocks.has(event.index)) return this.thoughtSignature(event.index);
        if (this.toolsWithoutArguments.has(event.index)) return this.wholeArguments(event.index);
        if (this.thinkingBlocks.delete(event.index)) return this.sealed(event.index);
        return "";
      case "signature": {
        const block = this.signatureBlocks.get(event.index);
        if (block !== undefined) block.signature = event.signature;
        const sealed = this.sealedBlocks.get(event.index);
        if (sealed !== undefined) sealed.signature = event.signature;
        return "";
      }
      case "opaque-delta":
        return "";
      case "finish": {
        // a signature for a text that never came still reaches the client, on a delta of its own
        const waiting = this.takeTextSignature();
        let out = waiting === undefined ? "" : this.chunk(waiting);
        out += this.chunk({}, finishReasonFor(event.stopReason));
        if (this.options.includeUsage) {
          out += data({ ...this.envelope(), choices: [], usage: usageToOpenAI(event.usage) });
        }
        return out;
      }
      case "error": {
        const error: Record<string, unknown> = { message: event.error.message, type: event.error.type };
        if (event.error.status !== undefined) error.code = event.error.status;
        return data({ error });
      }
      default:
        return assertNever(event, "stream event");
    }
  }

  done(): string {
    return "data: [DONE]\n\n";
  }

  /**
   * A call with no argument fragments (no arguments at all, or its input given whole at the block's start)
   * still gets its arguments, as OpenAI sends them: `"{}"` for none, never an empty string a client cannot parse.
   */
  private wholeArguments(blockIndex: number): string {
    const input = this.toolsWithoutArguments.get(blockIndex);
    this.toolsWithoutArguments.delete(blockIndex);
    const toolIndex = this.toolIndexes.get(blockIndex)!;
    const args = JSON.stringify(input ?? {});
    return this.chunk({ tool_calls: [{ index: toolIndex, function: { arguments: args } }] });
  }

  /** A thinking block's end: the closing tag, and the sealed detail of reasoning another API sealed. */
  private sealed(blockIndex: number): string {
    const close = this.mode === "think-tags" ? this.chunk({ content: "</think>" }) : "";
    const part = this.sealedBlocks.get(blockIndex);
    if (part === undefined) return close;
    this.sealedBlocks.delete(blockIndex);
    const detail = sealedDetail(part, this.sealedCount++);
    return detail === undefined ? close : close + this.chunk({ reasoning_details: [detail] });
  }

  /** A content delta, with the signature of the text it begins when one waits for it. */
  private content(text: string): string {
    return this.chunk({ content: text, ...this.takeTextSignature() });
  }

  /** The signature waiting for the text it stands before, as a delta's `extra_content`, taken. */
  private takeTextSignature(): { extra_content: Record<string, unknown> } | undefined {
    const signature = this.textSignature;
    if (signature === undefined) return undefined;
    this.textSignature = undefined;
    return { extra_content: withThoughtSignature(undefined, "google", signature) };
  }

  /**
   * A thought signature block's end: its envelope (who made it, where it rode) goes with its call, with the text it
   * stands before, or on a delta of its own (a text's that came after it); a call's that follows its call goes on a
   * delta of that call's.
   */
  private thoughtSignature(blockIndex: number): string {
    const block = this.signatureBlocks.get(blockIndex)!;
    this.signatureBlocks.delete(blockIndex);
    const { origin } = block;
    const envelope =
      block.signature !== undefined && isOriginSignature(block.signature)
        ? block.signature
        : encodeOriginSignature(origin);
    const extra_content = withThoughtSignature(undefined, "google", envelope);
    if (!ridesOnText(origin)) {
      const sent = this.sentCalls.get(origin.id!);
      if (sent === undefined) {
        this.callSignatures.set(origin.id!, envelope);
        return "";
      }
      return this.chunk({ tool_calls: [{ index: sent, extra_content }] });
    }
    if (origin.field === NEXT_TEXT) {
      const waiting = this.takeTextSignature();
      this.textSignature = envelope;
      return waiting === undefined ? "" : this.chunk(waiting);
    }
    return this.chunk({ extra_content });
  }

  private thinking(text: string): string {
    switch (this.mode) {
      case "think-tags":
        return this.chunk({ content: text });
      case "reasoning_content":
        return this.chunk({ reasoning_content: text });
      case "reasoning":
        return this.chunk({ reasoning: text });
      case "reasoning_details":
        return this.chunk({ reasoning_details: [{ type: "reasoning.text", text, index: 0 }] });
      case "drop":
        return "";
      default:
        return assertNever(this.mode, "reasoning mode");
    }
  }

  private envelope(): Omit<OpenAIChatChunk, "choices"> {
    return { id: this.id, object: "chat.completion.chunk", created: this.created, model: this.options.model };
  }

  private chunk(delta: OpenAIDelta, finishReason: string | null = null): string {
    return data({ ...this.envelope(), choices: [{ index: 0, delta, finish_reason: finishReason }] });
  }
}

function data(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}
