import { isErrorType, statusForErrorType } from "../../core/errors.js";
import type { Part } from "../../core/parts.js";
import type { FinishEvent, IncrementalDecoder, StreamEvent } from "../../core/stream-events.js";
import type { Usage } from "../../core/usage.js";
import type { SseMessage } from "../../stream/sse.js";
import { mapAnthropicStopReason } from "./map-stop-reason.js";
import { anthropicBlockToCore } from "./to-core.js";
import { anthropicUsageToCore, partialAnthropicUsageToCore } from "./usage.js";
import type { AnthropicContentBlock, AnthropicMessageResponse, AnthropicUsage } from "./wire-types.js";

/**
 * Anthropic SSE events -> core stream events. Unknown event types and pings are skipped, unknown block
 * types become opaque parts, unknown deltas opaque deltas: Anthropic adds event types and asks clients to
 * ignore what they do not know.
 */
export function createAnthropicStreamDecoder(): IncrementalDecoder<SseMessage> {
  return new AnthropicStreamDecoder();
}

const MESSAGE_KEYS = new Set(["id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"]);
const NONE: StreamEvent[] = [];

type Payload = Record<string, unknown>;

class AnthropicStreamDecoder implements IncrementalDecoder<SseMessage> {
  private started = false;
  private done = false;
  /** Wire index -> core index; Anthropic numbers blocks 0, 1, 2... but Parley does not rely on it. */
  private readonly indexes = new Map<number, number>();
  private openIndex: number | undefined;
  private nextIndex = 0;
  private usage: Partial<Usage> = {};
  private stopReason: string | null = null;
  private stopSequence: string | null | undefined;
  private readonly finishExtra: NonNullable<FinishEvent["extra"]> = {};

  push(message: SseMessage): StreamEvent[] {
    if (this.done) return NONE;
    let payload: unknown;
    try {
      payload = JSON.parse(message.data);
    } catch {
      return this.fail("api_error", `upstream sent an event that is not JSON: ${message.data.slice(0, 200)}`);
    }
    if (typeof payload !== "object" || payload === null) return NONE;
    const event = payload as Payload;
    switch (event.type) {
      case "message_start":
        return this.messageStart(event.message as AnthropicMessageResponse | undefined);
      case "content_block_start":
        return this.blockStart(event.index, event.content_block as AnthropicContentBlock | undefined);
      case "content_block_delta":
        return this.delta(event.index, event.delta as Payload | undefined);
      case "content_block_stop":
        return this.blockStop(event.index);
      case "message_delta":
        return this.messageDelta(event.delta as Payload | undefined, event.usage as AnthropicUsage | undefined);
      case "message_stop":
        return this.finishEvents();
      case "error": {
        const error = (event.error ?? {}) as Payload;
        return this.fail(
          typeof error.type === "string" ? error.type : "api_error",
          typeof error.message === "string" ? error.message : "upstream error",
        );
      }
      default:
        // ping, and event types newer than this code
        return NONE;
    }
  }

  /** The upstream closed the stream: a message that never reached `message_stop` ends in an error. */
  finish(): StreamEvent[] {
    if (this.done || !this.started) return NONE;
    return this.fail("api_error", "upstream stream ended before message_stop");
  }

  private messageStart(message: AnthropicMessageResponse | undefined): StreamEvent[] {
    if (this.started || !message) return NONE;
    this.started = true;
    const { rest } = anthropicUsageToCore(message.usage);
    this.usage = partialAnthropicUsageToCore(message.usage);
    const event: StreamEvent = {
      type: "message-start",
      id: typeof message.id === "string" ? message.id : "",
      model: typeof message.model === "string" ? message.model : "",
      usage: { ...this.usage },
    };
    const extra: Record<string, unknown> = {};
    for (const key in message) {
      if (!MESSAGE_KEYS.has(key)) extra[key] = message[key];
    }
    if (Object.keys(rest).length > 0) extra.usage = rest;
    if (Object.keys(extra).length > 0) event.extra = { anthropic: extra };
    return [event];
  }

  private blockStart(wireIndex: unknown, block: AnthropicContentBlock | undefined): StreamEvent[] {
    if (typeof wireIndex !== "number" || typeof block !== "object" || block === null) return NONE;
    const events = this.ensureStarted();
    // Anthropic never overlaps blocks; if a server does, close the open one so the core rules hold
    if (this.openIndex !== undefined) events.push({ type: "block-end", index: this.openIndex });
    const index = this.nextIndex++;
    this.indexes.set(wireIndex, index);
    this.openIndex = index;
    const part: Part = anthropicBlockToCore(block);
    // the signature arrives later as signature_delta; the block is Anthropic's unless that says otherwise
    if (part.type === "thinking" && part.origin === undefined) part.origin = { format: "anthropic" };
    events.push({ type: "block-start", index, part });
    return events;
  }

  private delta(wireIndex: unknown, delta: Payload | undefined): StreamEvent[] {
    if (typeof wireIndex !== "number" || typeof delta !== "object" || delta === null) return NONE;
    // a delta for a block never opened keeps its wire index, so the accumulator reports it
    const index = this.indexes.get(wireIndex) ?? wireIndex;
    switch (delta.type) {
      case "text_delta":
        if (typeof delta.text === "string") return [{ type: "text-delta", index, text: delta.text }];
        break;
      case "thinking_delta":
        if (typeof delta.thinking === "string") return [{ type: "thinking-delta", index, thinking: delta.thinking }];
        break;
      case "signature_delta":
        if (typeof delta.signature === "string") return [{ type: "signature", index, signature: delta.signature }];
        break;
      case "input_json_delta":
        if (typeof delta.partial_json === "string")
          return [{ type: "tool-input-delta", index, partialJson: delta.partial_json }];
        break;
      default:
        break;
    }
    return [{ type: "opaque-delta", index, delta }];
  }

  private blockStop(wireIndex: unknown): StreamEvent[] {
    if (typeof wireIndex !== "number") return NONE;
    const index = this.indexes.get(wireIndex) ?? wireIndex;
    if (this.openIndex === index) this.openIndex = undefined;
    return [{ type: "block-end", index }];
  }

  private messageDelta(delta: Payload | undefined, usage: AnthropicUsage | undefined): StreamEvent[] {
    if (delta) {
      const { stop_reason, stop_sequence, ...rest } = delta;
      if (typeof stop_reason === "string") this.stopReason = stop_reason;
      if ("stop_sequence" in delta && (typeof stop_sequence === "string" || stop_sequence === null))
        this.stopSequence = stop_sequence;
      if (Object.keys(rest).length > 0) this.finishExtra.delta = { ...this.finishExtra.delta, ...rest };
    }
    // cumulative: the latest value of each count wins, input tokens included when restated
    if (usage) {
      Object.assign(this.usage, partialAnthropicUsageToCore(usage));
      const { rest } = anthropicUsageToCore(usage);
      if (Object.keys(rest).length > 0) this.finishExtra.usage = { ...this.finishExtra.usage, ...rest };
    }
    return NONE;
  }

  private finishEvents(): StreamEvent[] {
    const events = this.ensureStarted();
    if (this.openIndex !== undefined) {
      events.push({ type: "block-end", index: this.openIndex });
      this.openIndex = undefined;
    }
    const usage: Usage = { inputTokens: 0, outputTokens: 0, ...this.usage };
    const finish: FinishEvent = { type: "finish", stopReason: mapAnthropicStopReason(this.stopReason), usage };
    if (this.stopSequence !== undefined) finish.stopSequence = this.stopSequence;
    if (this.finishExtra.delta !== undefined || this.finishExtra.usage !== undefined) finish.extra = this.finishExtra;
    events.push(finish);
    this.done = true;
    return events;
  }

  private fail(type: string, message: string): StreamEvent[] {
    this.done = true;
    const status = isErrorType(type) ? statusForErrorType(type) : undefined;
    return [{ type: "error", error: status === undefined ? { type, message } : { type, message, status } }];
  }

  /** A server that skips `message_start` still yields a well-formed core stream. */
  private ensureStarted(): StreamEvent[] {
    if (this.started) return [];
    this.started = true;
    return [{ type: "message-start", id: "", model: "" }];
  }
}
