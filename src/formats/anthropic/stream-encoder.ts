import { isObject } from "../../core/json.js";
import { assertNever, type Part } from "../../core/parts.js";
import { randomHex } from "../../core/portable.js";
import { encodeOriginSignature } from "../../core/reasoning-origin.js";
import type { StreamError, StreamEvent } from "../../core/stream-events.js";
import type { Usage } from "../../core/usage.js";
import { parseToolInput } from "../../stream/accumulate.js";
import { formatSse } from "../../stream/sse.js";
import { anthropicStopReasonFromCore } from "./map-stop-reason.js";
import { coreUsageToAnthropic } from "./usage.js";

/**
 * Core stream events -> Anthropic SSE text, always a valid Anthropic event sequence: message_start, then per
 * block content_block_start / deltas / content_block_stop with consecutive indexes, then message_delta and
 * message_stop. Runs once per upstream frame, so it only stringifies small objects.
 */
export interface AnthropicStreamEncoder {
  /** SSE text for one event: possibly empty, possibly several Anthropic events. */
  encode(event: StreamEvent): string;
  ping(): string;
  /** An `error` event that ends the stream (an upstream failure after the 200 was sent). */
  error(error: StreamError): string;
}

export interface AnthropicStreamEncoderOptions {
  /** The model name shown to the client, instead of the upstream's. */
  model?: string;
  id?: string;
}

export function createAnthropicStreamEncoder(options: AnthropicStreamEncoderOptions = {}): AnthropicStreamEncoder {
  return new Encoder(options);
}

const PING = formatSse("ping", '{"type":"ping"}');
const MESSAGE_STOP = formatSse("message_stop", '{"type":"message_stop"}');

/**
 * What the open block is on the wire; `skip` for a part Anthropic cannot show (an OpenAI opaque part); `held` for an
 * empty thinking block right after a text block, not sent yet (see `held`).
 */
type OpenBlock = "text" | "thinking" | "tool" | "whole" | "skip" | "held";

class Encoder implements AnthropicStreamEncoder {
  private started = false;
  private ended = false;
  private nextIndex = 0;
  /** Wire index of the open block. */
  private wireIndex = -1;
  private openBlock: OpenBlock | undefined;
  private openPart: Part | undefined;
  private signatureSent = false;
  /** What the last block closed on the wire was. */
  private lastSent: OpenBlock | undefined;
  /**
   * An empty thinking block (a signature only) right after a text block: sent when another block follows; left out
   * when the answer ends there (a provider that signs its text last, Gemini, gives the signature only once the text
   * is out). Clients read an answer's last block as its answer (Claude Code's `-p` result), so it must be the text;
   * `streamedAnswerLossy` reports it.
   */
  private held: { part: Part; signature?: string } | undefined;
  /** The open tool block's input, sent whole at its end (see `toolInput`). */
  private toolJson: string[] = [];
  private knownUsage: Partial<Usage> = {};

  constructor(private readonly options: AnthropicStreamEncoderOptions) {}

  encode(event: StreamEvent): string {
    if (this.ended) return "";
    switch (event.type) {
      case "message-start": {
        if (this.started) return "";
        this.started = true;
        if (event.usage) this.knownUsage = { ...event.usage };
        // Anthropic's own fields of the source's message; another API's have no place here
        const { usage: usageRest, ...rest } = event.extra?.anthropic ?? {};
        const usage = coreUsageToAnthropic(
          { inputTokens: 0, ...event.usage, outputTokens: event.usage?.outputTokens ?? 1 },
          isObject(usageRest) ? usageRest : undefined,
        );
        const message = {
          // clients key on the id; a source that had none still gets one
          id: this.options.id ?? (event.id === "" ? `msg_${randomHex(12)}` : event.id),
          type: "message",
          role: "assistant",
          model: this.options.model ?? event.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage,
          ...rest,
        };
        return formatSse("message_start", JSON.stringify({ type: "message_start", message }));
      }
      case "block-start":
        return this.start() + this.closeOpen() + this.sendHeld() + this.blockStart(event.part);
      case "text-delta":
        if (this.openBlock !== "text" || event.text === "") return "";
        return this.delta(JSON.stringify({ type: "text_delta", text: event.text }));
      case "thinking-delta": {
        const held = this.openBlock === "held" && event.thinking !== "" ? this.openHeld() : "";
        if (this.openBlock !== "thinking") return "";
        return held + this.delta(JSON.stringify({ type: "thinking_delta", thinking: event.thinking }));
      }
      case "signature":
        if (this.openBlock === "held" && this.held !== undefined) {
          this.held.signature = event.signature;
          return "";
        }
        if (this.openBlock !== "thinking") return "";
        this.signatureSent = true;
        return this.delta(JSON.stringify({ type: "signature_delta", signature: event.signature }));
      case "tool-input-delta":
        if (this.openBlock === "tool" && event.partialJson !== "") this.toolJson.push(event.partialJson);
        return "";
      case "opaque-delta":
        if (this.openBlock === undefined || this.openBlock === "skip" || !isObject(event.delta)) return "";
        if (typeof event.delta.type !== "string") return "";
        return this.delta(JSON.stringify(event.delta));
      case "block-end":
        return this.closeOpen();
      case "finish": {
        const out = this.start() + this.closeOpen();
        this.ended = true;
        this.held = undefined;
        // cumulative, as Anthropic sends it: counts known from message_start are restated unless updated
        const known = this.knownUsage;
        const usage = coreUsageToAnthropic(
          { ...known, ...event.usage, outputTokens: event.usage.outputTokens },
          event.extra?.usage,
        );
        const delta = {
          type: "message_delta",
          delta: {
            stop_reason: anthropicStopReasonFromCore(event.stopReason),
            stop_sequence: event.stopSequence ?? null,
            ...event.extra?.delta,
          },
          usage,
        };
        return `${out}${formatSse("message_delta", JSON.stringify(delta))}${MESSAGE_STOP}`;
      }
      case "error":
        return this.error(event.error);
      default:
        return assertNever(event, "stream event");
    }
  }

  /** A ping before anything else still comes after message_start. */
  ping(): string {
    return this.ended ? "" : this.start() + PING;
  }

  error(error: StreamError): string {
    if (this.ended) return "";
    this.ended = true;
    return formatSse("error", JSON.stringify({ type: "error", error: { type: error.type, message: error.message } }));
  }

  /** A stream must open with message_start even if the source skipped it. */
  private start(): string {
    if (this.started) return "";
    return this.encode({ type: "message-start", id: this.options.id ?? "", model: this.options.model ?? "" });
  }

  private blockStart(part: Part): string {
    let block: Record<string, unknown>;
    let follow = "";
    this.openPart = part;
    this.signatureSent = false;
    switch (part.type) {
      case "text":
        this.openBlock = "text";
        block = { type: "text", text: "", ...part.extra?.anthropic };
        if (part.text !== "") follow = JSON.stringify({ type: "text_delta", text: part.text });
        break;
      case "thinking":
        if (part.thinking === "" && this.lastSent === "text") {
          this.openBlock = "held";
          this.held = { part };
          return "";
        }
        this.openBlock = "thinking";
        block = { type: "thinking", thinking: "", signature: "", ...part.extra?.anthropic };
        if (part.thinking !== "") follow = JSON.stringify({ type: "thinking_delta", thinking: part.thinking });
        break;
      case "tool_call": {
        this.openBlock = "tool";
        block = { type: "tool_use", id: part.id, name: part.name, input: {}, ...part.extra?.anthropic };
        const input = part.input;
        if (isObject(input) && Object.keys(input).length > 0)
          follow = JSON.stringify({ type: "input_json_delta", partial_json: JSON.stringify(input) });
        break;
      }
      case "redacted_thinking":
        this.openBlock = "whole";
        block = { type: "redacted_thinking", data: part.data, ...part.extra?.anthropic };
        break;
      case "opaque":
        if (part.format !== "anthropic" || !isObject(part.block)) {
          this.openBlock = "skip";
          return "";
        }
        // server_tool_use and mcp_tool_use stream their input as input_json_delta, like tool_use
        this.openBlock = "input" in part.block ? "tool" : "whole";
        block = part.block;
        break;
      case "image":
      case "document":
      case "tool_result":
        // not part of an assistant answer on Anthropic's wire
        this.openBlock = "skip";
        return "";
      default:
        return assertNever(part, "part");
    }
    this.wireIndex = this.nextIndex++;
    const out = formatSse(
      "content_block_start",
      JSON.stringify({ type: "content_block_start", index: this.wireIndex, content_block: block }),
    );
    return follow === "" ? out : out + this.delta(follow);
  }

  /** The held block on the wire, open. */
  private openHeld(): string {
    const held = this.held;
    this.held = undefined;
    if (held === undefined || held.part.type !== "thinking") return "";
    this.lastSent = undefined;
    const out = this.blockStart({ ...held.part, thinking: "" });
    if (held.signature === undefined) return out;
    this.signatureSent = true;
    return out + this.delta(JSON.stringify({ type: "signature_delta", signature: held.signature }));
  }

  /** The held block, whole, once another block follows it. */
  private sendHeld(): string {
    if (this.held === undefined) return "";
    return this.openHeld() + this.closeOpen();
  }

  private toolInput(): string {
    const text = this.toolJson.join("");
    this.toolJson = [];
    if (text === "") return "";
    return this.delta(JSON.stringify({ type: "input_json_delta", partial_json: wholeToolInput(text) }));
  }

  private delta(deltaJson: string): string {
    return formatSse(
      "content_block_delta",
      `{"type":"content_block_delta","index":${this.wireIndex},"delta":${deltaJson}}`,
    );
  }

  private closeOpen(): string {
    const open = this.openBlock;
    if (open === undefined) return "";
    this.openBlock = undefined;
    if (open === "skip" || open === "held") return "";
    this.lastSent = open;
    let out = open === "tool" ? this.toolInput() : "";
    const part = this.openPart;
    if (open === "thinking" && !this.signatureSent && part?.type === "thinking") {
      // Claude Code drops unsigned thinking: sign it with its origin, as from-core does
      const signature = part.signature ?? encodeOriginSignature(part.origin ?? { format: "openai" });
      out = this.delta(JSON.stringify({ type: "signature_delta", signature }));
    }
    return `${out}${formatSse("content_block_stop", `{"type":"content_block_stop","index":${this.wireIndex}}`)}`;
  }
}

/**
 * A tool block's input goes out as one `input_json_delta` when the block ends: the arguments an
 * OpenAI-compatible model streamed are then known to be a JSON object, as Anthropic clients parse them (the
 * SDK's `finalMessage()` throws on anything else). Valid input keeps its bytes; invalid JSON is repaired and a
 * value that is not an object is wrapped as `{"value": ...}`, exactly as the whole-answer conversion does.
 */
function wholeToolInput(text: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
    if (isObject(value)) return text;
  } catch {
    value = parseToolInput(text).input;
    if (isObject(value)) return JSON.stringify(value);
  }
  return JSON.stringify({ value });
}
