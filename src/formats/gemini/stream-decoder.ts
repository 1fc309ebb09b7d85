import {
  assertNever,
  geminiSignature,
  type IncrementalDecoder,
  NEXT_TEXT,
  type Part,
  promptUsage,
  type StreamEvent,
  signaturePart,
  type Usage,
} from "../../core/index.js";
import type { SseMessage } from "../../stream/sse.js";
import { CallPairing, type ContentsReader, contentToCore } from "./contents-to-core.js";
import { streamErrorFromGemini } from "./errors.js";
import { newAnswerId } from "./ids.js";
import { blockedPrompt, mapFinishReason } from "./map-finish-reason.js";
import { providerReader } from "./to-core.js";
import { usageToCore } from "./usage.js";
import type { GeminiResponse } from "./wire-types.js";

export interface GeminiDecodeOptions {
  /** The provider whose answer this is: its signatures and thoughts record it. */
  provider?: string;
}

/**
 * `streamGenerateContent?alt=sse` to core events. Each event is a whole `GenerateContentResponse` whose parts are
 * new: text continues the open text block, a thought the open thinking block; a call comes whole; a signature is a
 * block of its own, before its call, and before its text where the event that opens the text carries it, as the whole
 * answer reads it (`contents-to-core.ts`); one on a later piece of the text ends the text and follows it, the only
 * place left once the text is out (it goes back on the same part). The start carries the first event's prompt
 * counts; the finish waits for the stream's end: the last event's `usageMetadata` is the answer's.
 */
export function createGeminiStreamDecoder(options: GeminiDecodeOptions = {}): IncrementalDecoder<SseMessage> {
  return new Decoder(options);
}

class Decoder implements IncrementalDecoder<SseMessage> {
  private started = false;
  private ended = false;
  private reader: ContentsReader | undefined;
  private calls = 0;
  private index = -1;
  private open: "text" | "thinking" | undefined;
  private finishReason: string | undefined;
  private blockReason: string | undefined;
  private usage: Usage | undefined;
  private sawCalls = false;
  private readonly pairing = new CallPairing();

  constructor(private readonly options: GeminiDecodeOptions) {}

  push(message: SseMessage): StreamEvent[] {
    if (this.ended) return [];
    let body: unknown;
    try {
      body = JSON.parse(message.data);
    } catch {
      return this.fail({
        type: "api_error",
        message: `upstream sent an event that is not JSON: ${message.data.slice(0, 200)}`,
      });
    }
    if (body === null || typeof body !== "object" || Array.isArray(body)) return [];
    const event = body as GeminiResponse;
    if (event.error !== undefined && event.candidates === undefined)
      return this.fail(streamErrorFromGemini(event.error));
    const out = this.start(event);
    const candidate = event.candidates?.[0];
    const parts = candidate?.content?.parts;
    if (Array.isArray(parts) && parts.length > 0) {
      const read = contentToCore({ role: "model", parts }, 0, this.reader!, this.pairing, [], "candidates[0].content");
      for (let index = 0; index < read.parts.length; index++) {
        const part = read.parts[index]!;
        const next = read.parts[index + 1];
        const signature = geminiSignature(part);
        // A signature on a later piece of the open text: the text is out already, so it follows the piece.
        if (
          signature?.field === NEXT_TEXT &&
          this.open === "text" &&
          next?.type === "text" &&
          next.extra === undefined
        ) {
          out.push(...this.part(next), ...this.part(signaturePart(signature.sealed, signature.provider, "text")));
          index++;
          continue;
        }
        out.push(...this.part(part));
      }
    }
    if (typeof candidate?.finishReason === "string") this.finishReason = candidate.finishReason;
    if (typeof event.promptFeedback?.blockReason === "string") this.blockReason = event.promptFeedback.blockReason;
    if (event.usageMetadata !== undefined) this.usage = usageToCore(event.usageMetadata);
    return out;
  }

  finish(): StreamEvent[] {
    if (this.ended) return [];
    if (this.finishReason === undefined && this.blockReason === undefined) {
      if (!this.started) return [];
      return this.fail({ type: "api_error", message: "upstream stream ended before its finishReason" });
    }
    const out = this.close();
    this.ended = true;
    out.push({
      type: "finish",
      stopReason:
        this.finishReason === undefined && this.blockReason !== undefined
          ? blockedPrompt(this.blockReason)
          : mapFinishReason(this.finishReason, this.sawCalls),
      usage: this.usage ?? { inputTokens: 0, outputTokens: 0 },
    });
    return out;
  }

  private start(event: GeminiResponse): StreamEvent[] {
    if (this.started) return [];
    this.started = true;
    const id = typeof event.responseId === "string" ? event.responseId : newAnswerId();
    const model = typeof event.modelVersion === "string" ? event.modelVersion : "";
    const reader = providerReader(id, this.options.provider, model);
    this.reader = { ...reader, callId: () => reader.callId(0, this.calls++) };
    // Gemini counts the prompt (and what of it came from the cache) on every chunk, the first included: the start
    // carries it, as Anthropic's `message_start` does.
    const usage = event.usageMetadata === undefined ? undefined : promptUsage(usageToCore(event.usageMetadata));
    return [usage === undefined ? { type: "message-start", id, model } : { type: "message-start", id, model, usage }];
  }

  private part(part: Part): StreamEvent[] {
    if (part.type === "text" && this.open === "text" && part.extra === undefined)
      return [{ type: "text-delta", index: this.index, text: part.text }];
    if (part.type === "thinking" && part.signature === undefined && this.open === "thinking")
      return [{ type: "thinking-delta", index: this.index, thinking: part.thinking }];
    const out = this.close();
    const index = ++this.index;
    switch (part.type) {
      case "text":
        out.push(
          { type: "block-start", index, part: { ...part, text: "" } },
          { type: "text-delta", index, text: part.text },
        );
        if (part.extra === undefined) {
          this.open = "text";
          return out;
        }
        break;
      case "thinking": {
        const { signature, ...rest } = part;
        out.push({ type: "block-start", index, part: { ...rest, thinking: "" } });
        if (part.thinking !== "") out.push({ type: "thinking-delta", index, thinking: part.thinking });
        if (signature === undefined) {
          this.open = "thinking";
          return out;
        }
        out.push({ type: "signature", index, signature });
        break;
      }
      case "tool_call":
        this.sawCalls = true;
        out.push(
          { type: "block-start", index, part: { ...part, input: {} } },
          { type: "tool-input-delta", index, partialJson: JSON.stringify(part.input) },
        );
        break;
      case "redacted_thinking":
      case "tool_result":
      case "image":
      case "document":
      case "opaque":
        out.push({ type: "block-start", index, part });
        break;
      default:
        return assertNever(part, "part");
    }
    out.push({ type: "block-end", index });
    return out;
  }

  private close(): StreamEvent[] {
    if (this.open === undefined) return [];
    this.open = undefined;
    return [{ type: "block-end", index: this.index }];
  }

  private fail(error: { type: string; message: string; status?: number }): StreamEvent[] {
    this.ended = true;
    return [...this.close(), { type: "error", error }];
  }
}
