import {
  encodeOriginSignature,
  type IncrementalDecoder,
  type Part,
  type ReasoningOrigin,
  type StreamEvent,
} from "../../core/index.js";
import type { SseMessage } from "../../stream/sse.js";
import { keep } from "./extra.js";
import { reasoningText } from "./reasoning.js";
import { stopReasonFromResponse, streamErrorFromResponses, usageFromResponses } from "./status.js";
import { NAMESPACE_SEPARATOR } from "./tools.js";
import type { Json, ResponsesContentPart, ResponsesItem, ResponsesReasoningItem } from "./wire-types.js";

export interface ResponsesDecodeOptions {
  /** The provider recorded in the origin of its reasoning (the gateway's provider name). */
  provider?: string;
}

/** Responses events already parsed from JSON -> core events; whole responses are fed through it too. */
export interface ResponsesEventDecoder {
  push(event: Json): StreamEvent[];
  /** The end of the body: an answer that never reached its last event ends in an error. */
  finish(): StreamEvent[];
}

/** SSE messages of a Responses stream -> core events. */
export function createResponsesStreamDecoder(options: ResponsesDecodeOptions = {}): IncrementalDecoder<SseMessage> {
  const decoder = createResponsesEventDecoder(options);
  return {
    push(message) {
      let event: unknown;
      try {
        event = JSON.parse(message.data);
      } catch {
        return decoder.push({
          type: "error",
          error: {
            code: "server_error",
            message: `upstream sent an event that is not JSON: ${message.data.slice(0, 200)}`,
          },
        });
      }
      return event !== null && typeof event === "object" ? decoder.push(event as Json) : [];
    },
    finish: () => decoder.finish(),
  };
}

export function createResponsesEventDecoder(options: ResponsesDecodeOptions = {}): ResponsesEventDecoder {
  return new EventDecoder(options);
}

/** The item being turned into blocks: its kind, and what of it was already sent. */
interface ActiveItem {
  outputIndex: number;
  item: ResponsesItem;
  /** A message's content parts begun so far (the done item's later ones come whole). */
  parts: number;
  /** Whether the open text block got any text (else its done event's text is its text). */
  gotText: boolean;
  /** Reasoning: which of its texts became the thinking (the first that came). */
  field?: "summary" | "reasoning_text";
  /** A call: whether any of its arguments (or freeform input) went out. */
  argumentsSent: boolean;
}

/**
 * Items are turned into blocks one at a time, in output order: a message's content parts become text blocks, a
 * reasoning item a thinking block (its summary parts joined by a blank line, signed at its end with the origin
 * envelope that seals the provider's `encrypted_content`), a call a tool call, any other item an opaque block.
 * Events of an item that comes while another is open wait for their turn.
 */
class EventDecoder implements ResponsesEventDecoder {
  private started = false;
  private ended = false;
  private model = "";
  private nextBlock = 0;
  private openBlock: number | undefined;
  private active: ActiveItem | undefined;
  private sawCalls = false;
  private readonly waiting = new Map<number, Json[]>();
  private readonly finished = new Set<number>();

  constructor(private readonly options: ResponsesDecodeOptions) {}

  push(event: Json): StreamEvent[] {
    if (this.ended) return [];
    const type = event.type;
    switch (type) {
      case "response.created":
      case "response.in_progress":
      case "response.queued":
        return this.start(event.response as Json | undefined);
      case "response.completed":
      case "response.incomplete":
        return this.end(event.response as Json | undefined);
      case "response.failed": {
        const response = (event.response ?? {}) as Json;
        return this.fail(response.error ?? { message: "the upstream response failed" });
      }
      case "error":
        return this.fail(event.error ?? event);
      default: {
        if (typeof type !== "string" || typeof event.output_index !== "number") return [];
        return [...this.start(undefined), ...this.itemEvent(event.output_index, event)];
      }
    }
  }

  finish(): StreamEvent[] {
    if (this.ended || !this.started) return [];
    return this.fail({ code: "server_error", message: "upstream stream ended before response.completed" });
  }

  private start(response: Json | undefined): StreamEvent[] {
    if (this.started) return [];
    this.started = true;
    this.model = typeof response?.model === "string" ? response.model : "";
    return [{ type: "message-start", id: typeof response?.id === "string" ? response.id : "", model: this.model }];
  }

  private end(response: Json | undefined): StreamEvent[] {
    const out = [...this.start(response)];
    const output = Array.isArray(response?.output) ? (response.output as ResponsesItem[]) : [];
    // Items only the whole response shows (a server that streamed less than it answered) still count.
    output.forEach((item, index) => {
      if (!this.finished.has(index)) out.push(...this.itemEvent(index, { type: "response.output_item.done", item }));
    });
    out.push(...this.closeActive());
    this.ended = true;
    const details = response?.incomplete_details as { reason?: unknown } | null | undefined;
    out.push({
      type: "finish",
      stopReason: stopReasonFromResponse(response?.status ?? "completed", details?.reason, this.sawCalls),
      usage: usageFromResponses(response?.usage as Json | undefined),
    });
    return out;
  }

  private fail(error: unknown): StreamEvent[] {
    const out = [...this.start(undefined), ...this.closeBlock()];
    this.ended = true;
    out.push({ type: "error", error: streamErrorFromResponses(error) });
    return out;
  }

  /** One event of output item `index`: handled now when that item is (or may become) the active one. */
  private itemEvent(index: number, event: Json): StreamEvent[] {
    if (this.finished.has(index)) return [];
    if (this.active !== undefined && this.active.outputIndex !== index) {
      const queue = this.waiting.get(index) ?? [];
      queue.push(event);
      this.waiting.set(index, queue);
      return [];
    }
    const out = this.handle(index, event);
    // An item done: the next one's held events, if it already began.
    while (this.active === undefined && this.waiting.size > 0) {
      const next = Math.min(...this.waiting.keys());
      const queue = this.waiting.get(next)!;
      this.waiting.delete(next);
      for (const held of queue) out.push(...this.itemEvent(next, held));
    }
    return out;
  }

  private handle(index: number, event: Json): StreamEvent[] {
    const type = event.type as string;
    if (type === "response.output_item.added") {
      this.active = {
        outputIndex: index,
        item: (event.item ?? {}) as ResponsesItem,
        parts: 0,
        gotText: false,
        argumentsSent: false,
      };
      return this.itemStart();
    }
    if (type === "response.output_item.done") {
      const item = (event.item ?? {}) as ResponsesItem;
      const out: StreamEvent[] = [];
      if (this.active === undefined) {
        this.active = { outputIndex: index, item, parts: 0, gotText: false, argumentsSent: false };
        out.push(...this.itemStart());
      }
      out.push(...this.itemDone(item));
      this.finished.add(index);
      this.active = undefined;
      return out;
    }
    const active = this.active;
    if (active === undefined) return [];
    switch (type) {
      case "response.content_part.added":
        return this.contentStart((event.part ?? {}) as ResponsesContentPart);
      case "response.output_text.delta":
      case "response.refusal.delta":
        return this.text(event.delta);
      case "response.output_text.done":
        return active.gotText ? [] : this.text(event.text);
      case "response.refusal.done":
        return active.gotText ? [] : this.text(event.refusal);
      case "response.content_part.done":
        return this.closeBlock();
      case "response.reasoning_summary_part.added":
        return this.reasoning(
          "summary",
          typeof event.summary_index === "number" && event.summary_index > 0 ? "\n\n" : "",
        );
      case "response.reasoning_summary_text.delta":
        return this.reasoning("summary", event.delta);
      case "response.reasoning_text.delta":
        return this.reasoning("reasoning_text", event.delta);
      case "response.function_call_arguments.delta":
        return this.argumentsText(event.delta);
      case "response.function_call_arguments.done":
        return active.argumentsSent ? [] : this.argumentsText(event.arguments);
      case "response.custom_tool_call_input.delta":
        return this.customInput(event.delta);
      case "response.custom_tool_call_input.done":
        return active.argumentsSent ? [] : this.customInput(event.input);
      default:
        // Annotations, hosted tools' progress, text done events that add nothing: nothing to carry.
        return [];
    }
  }

  /** What an item opens when it begins: a thinking or tool block; a message opens blocks per content part. */
  private itemStart(): StreamEvent[] {
    const { item } = this.active!;
    switch (item.type) {
      case "reasoning": {
        const origin: ReasoningOrigin = { format: "responses", field: "summary" };
        if (this.options.provider !== undefined) origin.provider = this.options.provider;
        if (this.model !== "") origin.model = this.model;
        if (typeof item.id === "string") origin.id = item.id;
        return this.open({ type: "thinking", thinking: "", origin });
      }
      case "function_call": {
        this.sawCalls = true;
        const namespace = typeof item.namespace === "string" ? item.namespace : undefined;
        const name = typeof item.name === "string" ? item.name : "";
        return this.open(
          keep(
            {
              type: "tool_call",
              id: typeof item.call_id === "string" ? item.call_id : "",
              name: namespace === undefined ? name : `${namespace}${NAMESPACE_SEPARATOR}${name}`,
              input: {},
            },
            { id: item.id, namespace },
          ),
        );
      }
      case "custom_tool_call":
        this.sawCalls = true;
        return this.open(
          keep(
            {
              type: "tool_call",
              id: typeof item.call_id === "string" ? item.call_id : "",
              name: typeof item.name === "string" ? item.name : "",
              input: {},
            },
            { type: "custom_tool_call", id: item.id },
          ),
        );
      default:
        return [];
    }
  }

  private itemDone(item: ResponsesItem): StreamEvent[] {
    const active = this.active!;
    const out: StreamEvent[] = [];
    switch (item.type) {
      case "message": {
        const content = Array.isArray(item.content) ? (item.content as ResponsesContentPart[]) : [];
        out.push(...this.closeBlock());
        // Content parts the stream never opened come whole.
        for (const part of content.slice(active.parts)) {
          out.push(...this.contentStart(part));
          out.push(...this.text(part.type === "refusal" ? part.refusal : part.text));
          out.push(...this.closeBlock());
        }
        return out;
      }
      case "reasoning": {
        const reasoning = item as ResponsesReasoningItem;
        if (active.field === undefined) {
          const { text, field } = reasoningText(reasoning);
          out.push(...this.reasoning(field, text));
        }
        const origin: ReasoningOrigin = { format: "responses", field: active.field ?? "summary" };
        if (this.options.provider !== undefined) origin.provider = this.options.provider;
        if (this.model !== "") origin.model = this.model;
        const id = typeof item.id === "string" ? item.id : active.item.id;
        if (typeof id === "string") origin.id = id;
        // The final `encrypted_content` is the done item's (the added item's may be a partial one).
        if (typeof reasoning.encrypted_content === "string") origin.sealed = reasoning.encrypted_content;
        out.push({ type: "signature", index: this.openBlock!, signature: encodeOriginSignature(origin) });
        out.push(...this.closeBlock());
        return out;
      }
      case "function_call":
        if (!active.argumentsSent) out.push(...this.argumentsText(item.arguments));
        out.push(...this.closeBlock());
        return out;
      case "custom_tool_call":
        if (!active.argumentsSent) out.push(...this.customInput(item.input));
        if (active.argumentsSent) out.push(...this.toolInput('"}'));
        else out.push(...this.toolInput('{"input":""}'));
        out.push(...this.closeBlock());
        return out;
      default:
        return [...this.open({ type: "opaque", format: "responses", block: item }), ...this.closeBlock()];
    }
  }

  private contentStart(part: ResponsesContentPart): StreamEvent[] {
    const active = this.active!;
    const out = this.closeBlock();
    const text: Part =
      part.type === "refusal" ? keep({ type: "text", text: "" }, { type: "refusal" }) : { type: "text", text: "" };
    if (active.parts === 0) {
      const { id, phase } = active.item;
      keep(text, { item: { ...(typeof id === "string" ? { id } : {}), ...(phase === undefined ? {} : { phase }) } });
    }
    active.parts++;
    active.gotText = false;
    out.push(...this.open(text));
    return out;
  }

  private text(delta: unknown): StreamEvent[] {
    if (typeof delta !== "string" || delta === "" || this.openBlock === undefined) return [];
    this.active!.gotText = true;
    return [{ type: "text-delta", index: this.openBlock, text: delta }];
  }

  private reasoning(field: "summary" | "reasoning_text", delta: unknown): StreamEvent[] {
    const active = this.active!;
    if (typeof delta !== "string" || this.openBlock === undefined) return [];
    // The first kind of text that comes is the thinking; a second kind (rare) has no place beside it.
    if (active.field === undefined && delta !== "" && delta !== "\n\n") active.field = field;
    if (active.field !== field || delta === "") return [];
    return [{ type: "thinking-delta", index: this.openBlock, thinking: delta }];
  }

  private argumentsText(text: unknown): StreamEvent[] {
    if (typeof text !== "string" || text === "") return [];
    this.active!.argumentsSent = true;
    return this.toolInput(text);
  }

  /** Freeform input is a string: it goes as the `input` of `{"input": ...}`, escaped piece by piece. */
  private customInput(text: unknown): StreamEvent[] {
    if (typeof text !== "string" || text === "") return [];
    const escaped = JSON.stringify(text).slice(1, -1);
    const first = !this.active!.argumentsSent;
    this.active!.argumentsSent = true;
    return this.toolInput(first ? `{"input":"${escaped}` : escaped);
  }

  private toolInput(partialJson: string): StreamEvent[] {
    if (this.openBlock === undefined) return [];
    return [{ type: "tool-input-delta", index: this.openBlock, partialJson }];
  }

  private open(part: Part): StreamEvent[] {
    const out = this.closeBlock();
    this.openBlock = this.nextBlock++;
    out.push({ type: "block-start", index: this.openBlock, part });
    return out;
  }

  private closeBlock(): StreamEvent[] {
    if (this.openBlock === undefined) return [];
    const index = this.openBlock;
    this.openBlock = undefined;
    return [{ type: "block-end", index }];
  }

  /** The end of the answer while an item is open: what it holds so far is closed as it is. */
  private closeActive(): StreamEvent[] {
    if (this.active === undefined) return [];
    const item = this.active.item;
    const out = this.itemDone(item);
    this.active = undefined;
    return out;
  }
}
