import type { Part, StreamError, StreamEvent, Usage } from "../../core/index.js";
import { assertNever, geminiSignature } from "../../core/index.js";
import { parseToolInput } from "../../stream/accumulate.js";
import type { ClientStreamOptions } from "../adapter.js";
import { ContentsWriter } from "./contents-from-core.js";
import { geminiErrorBody } from "./errors.js";
import { newAnswerId } from "./ids.js";
import { finishReasonFor } from "./map-finish-reason.js";
import { isThoughtSummary, type Rider, riderSignature } from "./signatures.js";
import { usageFromCore } from "./usage.js";
import type { GeminiPart, GeminiResponse } from "./wire-types.js";

/**
 * Core events to `streamGenerateContent?alt=sse` frames, each `data: <GenerateContentResponse>` holding the new parts:
 * text and thoughts as they come, a call whole at its end, the finish reason and usage in the last frame. What rides
 * to the client in a signature rides as in a whole answer (`contents-from-core.ts`): on the call it belongs to, the
 * rest on the first call, and what has no call on an empty part of its own in the last frame.
 */
export interface GeminiStreamEncoder {
  encode(event: StreamEvent): string;
  error(error: StreamError): string;
}

export function createGeminiStreamEncoder(
  options: Pick<ClientStreamOptions, "model" | "answerId"> = {},
): GeminiStreamEncoder {
  return new Encoder(options);
}

interface OpenBlock {
  part: Part;
  json: string;
}

class Encoder implements GeminiStreamEncoder {
  private id: string | undefined;
  private model: string;
  private readonly blocks = new Map<number, OpenBlock>();
  private kept = 0;
  private readonly waiting: Rider[] = [];
  private readonly forCall = new Map<string, Rider>();
  private callSeen = false;
  private readonly writer = new ContentsWriter({ kind: "client" });

  constructor(options: Pick<ClientStreamOptions, "model" | "answerId">) {
    this.id = options.answerId;
    this.model = options.model ?? "";
  }

  encode(event: StreamEvent): string {
    switch (event.type) {
      case "message-start":
        if (this.model === "") this.model = event.model;
        this.id ??= event.id === "" ? newAnswerId() : event.id;
        return "";
      case "block-start": {
        const part = structuredClone(event.part);
        this.blocks.set(event.index, { part, json: "" });
        if (part.type === "text") {
          this.kept++;
          return part.text === "" ? "" : this.frame([{ text: part.text }]);
        }
        if (part.type === "thinking" && part.thinking !== "")
          return this.frame([{ text: part.thinking, thought: true }]);
        return "";
      }
      case "text-delta": {
        const block = this.blocks.get(event.index);
        if (block?.part.type === "text") block.part.text += event.text;
        return event.text === "" ? "" : this.frame([{ text: event.text }]);
      }
      case "thinking-delta": {
        const block = this.blocks.get(event.index);
        if (block?.part.type === "thinking") block.part.thinking += event.thinking;
        return event.thinking === "" ? "" : this.frame([{ text: event.thinking, thought: true }]);
      }
      case "signature": {
        const block = this.blocks.get(event.index);
        if (block?.part.type === "thinking") block.part.signature = event.signature;
        return "";
      }
      case "tool-input-delta": {
        const block = this.blocks.get(event.index);
        if (block !== undefined) block.json += event.partialJson;
        return "";
      }
      case "opaque-delta":
        return "";
      case "block-end":
        return this.end(event.index);
      case "finish":
        return this.finish(event.stopReason, event.usage);
      case "error":
        return this.error(event.error);
      default:
        return assertNever(event, "stream event");
    }
  }

  error(error: StreamError): string {
    return `data: ${JSON.stringify(geminiErrorBody(error.type, error.message, error.status))}\n\n`;
  }

  private end(index: number): string {
    const block = this.blocks.get(index);
    this.blocks.delete(index);
    if (block === undefined) return "";
    const { part } = block;
    switch (part.type) {
      case "text":
        return "";
      case "thinking":
      case "redacted_thinking": {
        if (isThoughtSummary(part)) return "";
        const rider: Rider = { k: this.kept, part };
        const signature = geminiSignature(part);
        if (signature !== undefined && signature.id !== undefined && signature.id !== "") {
          this.forCall.set(signature.id, rider);
          return "";
        }
        if (signature !== undefined) return this.frame([{ text: "", thoughtSignature: riderSignature([rider]) }]);
        this.waiting.push(rider);
        return "";
      }
      case "tool_call": {
        const parsed = block.json === "" ? { input: part.input } : parseToolInput(block.json);
        const call = { ...part, input: parsed.input };
        const [written] = this.writer.modelParts({ role: "assistant", parts: [call] }, 0);
        if (written === undefined) return "";
        const riders: Rider[] = [];
        const own = this.forCall.get(part.id);
        if (own !== undefined) riders.push(own);
        this.forCall.delete(part.id);
        if (!this.callSeen) riders.push(...this.waiting.splice(0));
        this.callSeen = true;
        riders.sort((a, b) => a.k - b.k);
        if (riders.length > 0) written.thoughtSignature = riderSignature(riders);
        this.kept++;
        return this.frame([written]);
      }
      case "tool_result":
      case "image":
      case "document":
      case "opaque": {
        const written = this.writer.modelParts({ role: "assistant", parts: [part] }, 0);
        this.kept += written.length;
        return written.length === 0 ? "" : this.frame(written);
      }
      default:
        return assertNever(part, "part");
    }
  }

  private finish(stopReason: Parameters<typeof finishReasonFor>[0], usage: Usage): string {
    const parts: GeminiPart[] = [];
    const riders = [...this.waiting.splice(0), ...this.forCall.values()].sort((a, b) => a.k - b.k);
    this.forCall.clear();
    if (riders.length > 0) parts.push({ text: "", thoughtSignature: riderSignature(riders) });
    const body: GeminiResponse = {
      candidates: [{ content: { role: "model", parts }, finishReason: finishReasonFor(stopReason), index: 0 }],
      usageMetadata: usageFromCore(usage),
      modelVersion: this.model,
      responseId: this.answerId(),
    };
    return `data: ${JSON.stringify(body)}\n\n`;
  }

  private answerId(): string {
    this.id ??= newAnswerId();
    return this.id;
  }

  private frame(parts: GeminiPart[]): string {
    const body: GeminiResponse = {
      candidates: [{ content: { role: "model", parts }, index: 0 }],
      modelVersion: this.model,
      responseId: this.answerId(),
    };
    return `data: ${JSON.stringify(body)}\n\n`;
  }
}
