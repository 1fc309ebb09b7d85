import { assertNever, type StreamEvent, type ThinkingPart } from "../../core/index.js";
import { randomHex } from "../../core/portable.js";
import type { ReasoningMode } from "./compat.js";
import { finishReasonFor } from "./map-finish-reason.js";
import { sealedDetail } from "./sealed-reasoning.js";
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
 * delta only, then argument fragments alone: clients concatenate every string field they see again.
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
          const call = {
            index: toolIndex,
            id: part.id,
            type: "function",
            function: { name: part.name, arguments: "" },
          };
          return this.chunk({ tool_calls: [call] });
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
        if (part.type === "text" && part.text !== "") return this.chunk({ content: part.text });
        return "";
      }
      case "text-delta":
        return event.text === "" ? "" : this.chunk({ content: event.text });
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
        if (this.toolsWithoutArguments.has(event.index)) return this.wholeArguments(event.index);
        if (this.thinkingBlocks.delete(event.index)) return this.sealed(event.index);
        return "";
      case "signature": {
        const sealed = this.sealedBlocks.get(event.index);
        if (sealed !== undefined) sealed.signature = event.signature;
        return "";
      }
      case "opaque-delta":
        return "";
      case "finish": {
        let out = this.chunk({}, finishReasonFor(event.stopReason));
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
