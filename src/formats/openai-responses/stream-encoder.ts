import { assertNever, type Part, type StreamError, type StreamEvent, type ToolCallPart } from "../../core/index.js";
import { parseToolInput } from "../../stream/accumulate.js";
import { formatSse } from "../../stream/sse.js";
import type { ClientStreamOptions } from "../adapter.js";
import { contentPartFromCore } from "./content.js";
import { kept } from "./extra.js";
import { newItemId } from "./ids.js";
import { callItem, callStatus, messageItem } from "./items-from-core.js";
import { clientReasoningId, clientReasoningItem } from "./reasoning.js";
import { answerItemId, failedResponse, finishedResponse, responseShell } from "./response-object.js";
import { errorCodeFor } from "./status.js";
import { callForm } from "./tools.js";
import type { Json, ResponsesContentPart, ResponsesItem, ResponsesObject } from "./wire-types.js";

/**
 * Core stream events -> a Responses event stream: `response.created` and `response.in_progress`, then per output
 * item `output_item.added`, its parts and deltas, `output_item.done`, and last `response.completed` (or
 * `response.incomplete` when the answer was cut, or `error` then `response.failed`). Every event has its `type` and
 * the next `sequence_number`. Items are built as the whole-answer encoder builds them, so the stream assembles to
 * the same response.
 */
export interface ResponsesStreamEncoder {
  encode(event: StreamEvent): string;
  error(error: StreamError): string;
}

export function createResponsesStreamEncoder(options: ClientStreamOptions): ResponsesStreamEncoder {
  return new Encoder(options);
}

/** The output item being streamed, and the block that feeds it. */
interface OpenItem {
  index: number;
  id: string;
  item: ResponsesItem;
  kind: "message" | "reasoning" | "call" | "whole";
}

interface OpenBlock {
  part: Part;
  kind: "text" | "thinking" | "redacted" | "call" | "whole" | "skip";
  text: string;
  signature?: string;
  contentIndex: number;
  summaryStarted: boolean;
  /** The block's delta events up to the delta itself, and what follows it (see `deltaHead`). */
  deltaHead?: string;
  deltaTail?: string;
}

class Encoder implements ResponsesStreamEncoder {
  private sequence = 0;
  private shell: ResponsesObject | undefined;
  private ended = false;
  private readonly output: ResponsesItem[] = [];
  private item: OpenItem | undefined;
  private block: OpenBlock | undefined;
  /** The last block's part: a text part continues the message item after a text part. */
  private previous: Part | undefined;

  constructor(private readonly options: ClientStreamOptions) {}

  encode(event: StreamEvent): string {
    if (this.ended) return "";
    switch (event.type) {
      case "message-start":
        return this.start(event.model);
      case "block-start":
        return this.start() + this.blockStart(event.part);
      case "text-delta":
        return this.textDelta(event.text);
      case "thinking-delta":
        return this.thinkingDelta(event.thinking);
      case "signature":
        if (this.block?.kind === "thinking") this.block.signature = event.signature;
        return "";
      case "tool-input-delta":
        if (this.block?.kind === "call") this.block.text += event.partialJson;
        return "";
      case "opaque-delta":
        return "";
      case "block-end":
        return this.blockEnd();
      case "finish": {
        const out = this.start() + this.blockEnd() + this.closeItem();
        this.ended = true;
        const response = finishedResponse(this.shell!, this.output, event.usage, event.stopReason);
        const type = response.status === "incomplete" ? "response.incomplete" : "response.completed";
        return out + this.event({ type, response });
      }
      case "error":
        return this.error(event.error);
      default:
        return assertNever(event, "stream event");
    }
  }

  /** A failure after the stream began: OpenAI's `error` event, then the response as failed. */
  error(error: StreamError): string {
    if (this.ended) return "";
    const out = this.start();
    this.ended = true;
    const code = errorCodeFor(error.type);
    const failed = failedResponse(this.shell!, this.output, { code, message: error.message });
    return (
      out +
      this.event({ type: "error", error: { type: error.type, code, message: error.message, param: null } }) +
      this.event({ type: "response.failed", response: failed })
    );
  }

  private start(model?: string): string {
    if (this.shell !== undefined) return "";
    const { request, state, answerId } = this.options;
    this.shell = responseShell({
      id: answerId ?? newItemId("resp"),
      model: this.options.model ?? model ?? "",
      createdAt: this.options.createdAt ?? Math.floor(Date.now() / 1000),
      ...(request === undefined ? {} : { request }),
      ...(state === undefined ? {} : { state }),
    });
    return (
      this.event({ type: "response.created", response: this.shell }) +
      this.event({ type: "response.in_progress", response: this.shell })
    );
  }

  private blockStart(part: Part): string {
    let out = this.blockEnd();
    const continues = part.type === "text" && this.previous?.type === "text" && kept(part).item === undefined;
    this.previous = part;
    const block: OpenBlock = { part, kind: "skip", text: "", contentIndex: 0, summaryStarted: false };
    this.block = block;
    switch (part.type) {
      case "text": {
        block.kind = "text";
        if (!continues || this.item?.kind !== "message") {
          out += this.closeItem();
          const {
            shorthand: _shorthand,
            empty: _empty,
            ...fields
          } = (kept(part).item ?? {}) as Record<string, unknown>;
          const id = typeof fields.id === "string" ? fields.id : this.itemId("msg");
          out += this.openItem("message", id, messageItem(id, "in_progress", fields));
        }
        const message = this.item!;
        block.contentIndex = (message.item.content as unknown[]).length;
        const empty = contentPartFromCore({ ...part, text: "" }, "assistant", "", []);
        (message.item.content as unknown[]).push(empty);
        out += this.event({
          type: "response.content_part.added",
          ...this.at(),
          content_index: block.contentIndex,
          part: empty,
        });
        return out + this.textDelta(part.text);
      }
      case "thinking":
      case "redacted_thinking": {
        block.kind = part.type === "thinking" ? "thinking" : "redacted";
        out += this.closeItem();
        const id = clientReasoningId(part) ?? this.itemId("rs");
        out += this.openItem("reasoning", id, { id, type: "reasoning", summary: [] });
        return part.type === "thinking" ? out + this.thinkingDelta(part.thinking) : out;
      }
      case "tool_call": {
        block.kind = "call";
        out += this.closeItem();
        const form = callForm(part, this.options.request?.tools);
        const own = kept(part);
        const id = typeof own.id === "string" ? own.id : this.itemId(form.kind === "custom" ? "ctc" : "fc");
        const fields = { id, status: "in_progress" };
        const item =
          form.kind === "custom"
            ? callItem(part, { ...form, input: "" }, fields)
            : callItem({ ...part, input: {}, rawInput: "" }, form, fields);
        if (part.input !== undefined && !isEmptyObject(part.input)) block.text = JSON.stringify(part.input);
        return out + this.openItem("call", id, item);
      }
      case "opaque":
        if (part.format !== "responses") return out;
        block.kind = "whole";
        out += this.closeItem();
        return out + this.openItem("whole", String((part.block as Json).id ?? ""), part.block as ResponsesItem);
      case "image":
      case "document":
      case "tool_result":
        // No part of an answer here; streamedAnswerLossy says so.
        return out;
      default:
        return assertNever(part, "part");
    }
  }

  private textDelta(text: string): string {
    const block = this.block;
    if (block?.kind !== "text" || text === "") return "";
    block.text += text;
    if (block.deltaHead === undefined) {
      const refusal = kept(block.part).type === "refusal";
      block.deltaHead = this.deltaHead(
        refusal ? "response.refusal.delta" : "response.output_text.delta",
        `,"content_index":${block.contentIndex}`,
      );
      block.deltaTail = refusal ? "" : ',"logprobs":[]';
    }
    return this.delta(block, text);
  }

  private thinkingDelta(text: string): string {
    const block = this.block;
    if (block?.kind !== "thinking" || text === "") return "";
    block.text += text;
    let out = "";
    if (!block.summaryStarted) {
      block.summaryStarted = true;
      out += this.event({
        type: "response.reasoning_summary_part.added",
        ...this.at(),
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      });
    }
    block.deltaHead ??= this.deltaHead("response.reasoning_summary_text.delta", ',"summary_index":0');
    return out + this.delta(block, text);
  }

  /**
   * The constant start of a block's delta events, written once per block: a delta is then one string built around
   * the delta's JSON, not an object spread and serialised again (deltas are most of a stream's events).
   */
  private deltaHead(type: string, fields: string): string {
    const { item_id, output_index } = this.at();
    return `event: ${type}\ndata: {"type":"${type}","item_id":${JSON.stringify(item_id)},"output_index":${output_index}${fields},"delta":`;
  }

  private delta(block: OpenBlock, text: string): string {
    return `${block.deltaHead}${JSON.stringify(text)}${block.deltaTail ?? ""},"sequence_number":${this.sequence++}}\n\n`;
  }

  /** A block's end: its final part, written as the whole-answer encoder writes it. */
  private blockEnd(): string {
    const block = this.block;
    if (block === undefined) return "";
    this.block = undefined;
    const item = this.item;
    switch (block.kind) {
      case "text": {
        if (item === undefined) return "";
        const final = contentPartFromCore(
          { ...block.part, text: block.text } as Part,
          "assistant",
          "",
          [],
        ) as ResponsesContentPart;
        (item.item.content as unknown[])[block.contentIndex] = final;
        const refusal = final.type === "refusal";
        return (
          this.event({
            type: refusal ? "response.refusal.done" : "response.output_text.done",
            ...this.at(),
            content_index: block.contentIndex,
            ...(refusal ? { refusal: block.text } : { text: block.text, logprobs: [] }),
          }) +
          this.event({
            type: "response.content_part.done",
            ...this.at(),
            content_index: block.contentIndex,
            part: final,
          })
        );
      }
      case "thinking":
      case "redacted": {
        if (item === undefined) return "";
        let out = "";
        if (block.summaryStarted) {
          const part = { type: "summary_text", text: block.text };
          out += this.event({
            type: "response.reasoning_summary_text.done",
            ...this.at(),
            summary_index: 0,
            text: block.text,
          });
          out += this.event({ type: "response.reasoning_summary_part.done", ...this.at(), summary_index: 0, part });
        }
        const source = block.part;
        const final =
          source.type === "thinking"
            ? {
                ...source,
                thinking: block.text,
                ...(block.signature === undefined ? {} : { signature: block.signature }),
              }
            : source;
        item.item = clientReasoningItem(
          final as Part & { type: "thinking" | "redacted_thinking" },
          item.id,
          this.options.reasoningAsMade === true,
        );
        return out + this.closeItem();
      }
      case "call": {
        if (item === undefined) return "";
        const part = block.part as ToolCallPart;
        const parsed = block.text === "" ? { input: part.input ?? {} } : parseToolInput(block.text);
        const final: ToolCallPart = { ...part, input: parsed.input };
        if ("rawInput" in parsed && parsed.rawInput !== undefined) final.rawInput = parsed.rawInput;
        else delete final.rawInput;
        const form = callForm(final, this.options.request?.tools);
        const done = callItem(final, form, { id: item.id, ...callStatus(final, form, "completed") });
        let out: string;
        if (form.kind === "custom") {
          out =
            this.event({ type: "response.custom_tool_call_input.delta", ...this.at(), delta: form.input }) +
            this.event({ type: "response.custom_tool_call_input.done", ...this.at(), input: form.input });
        } else {
          const args = done.arguments as string;
          out =
            this.event({ type: "response.function_call_arguments.delta", ...this.at(), delta: args }) +
            this.event({ type: "response.function_call_arguments.done", ...this.at(), arguments: args });
        }
        item.item = done;
        return out + this.closeItem();
      }
      case "whole":
        return this.closeItem();
      case "skip":
        return "";
      default:
        return assertNever(block.kind, "block kind");
    }
  }

  private openItem(kind: OpenItem["kind"], id: string, item: ResponsesItem): string {
    const index = this.output.length;
    this.item = { index, id, item, kind };
    // The item as added is a copy: later deltas build the done item, not the event already written.
    return this.event({ type: "response.output_item.added", output_index: index, item: structuredClone(item) });
  }

  /** Ends the open item: `output_item.done` with it whole, and it joins the output. */
  private closeItem(): string {
    const item = this.item;
    if (item === undefined) return "";
    this.item = undefined;
    if (item.kind === "message") item.item.status = "completed";
    this.output.push(item.item);
    return this.event({ type: "response.output_item.done", output_index: item.index, item: item.item });
  }

  private at(): { item_id: string; output_index: number } {
    return { item_id: this.item!.id, output_index: this.item!.index };
  }

  private itemId(prefix: string): string {
    return answerItemId(prefix, this.shell!.id, this.output.length);
  }

  private event(body: Json & { type: string }): string {
    return formatSse(body.type, JSON.stringify({ ...body, sequence_number: this.sequence++ }));
  }
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}
