import {
  assertNever,
  type Extra,
  fieldsFor,
  formatPath,
  type LossyCode,
  type LossyEntry,
  type Message,
  type Part,
  type RedactedThinkingPart,
  type ThinkingPart,
  type ToolCallPart,
  type ToolDefinition,
  type ToolResultPart,
} from "../../core/index.js";
import type { ReasoningMode } from "../adapter.js";
import { contentPartFromCore } from "./content.js";
import { kept } from "./extra.js";
import { newItemId } from "./ids.js";
import { clientReasoningItem, originOf, providerReasoningItem } from "./reasoning.js";
import { answerItemId } from "./response-object.js";
import { type CallForm, callForm } from "./tools.js";
import type { ResponsesContentPart, ResponsesItem } from "./wire-types.js";

/**
 * Core messages -> Responses items, in order. For a client (its answers, its history) items come back as they
 * came, reasoning sealed in Parley's envelope; for a provider, only what that provider can take: its own
 * reasoning items as it made them, any other thinking as text (or left out), no item ids but reasoning's.
 */
export type ItemTarget =
  /** `responseId` for an answer: its items get ids (from the response's own and their place) and a status. */
  { kind: "client"; responseId?: string } | { kind: "provider"; provider?: string; reasoning: ReasoningMode };

const NOTHING_CARRIED: ReadonlySet<string> = new Set();

/** Other APIs' part fields the Responses form carries (see content.ts): a document's title, an image's detail. */
const CARRIED_FIELDS: Partial<Record<Part["type"], ReadonlySet<string>>> = {
  document: new Set(["title"]),
  image: new Set(["image_url"]),
};

export class ItemWriter {
  readonly lossy: LossyEntry[] = [];
  /** Call id -> whether the call was a custom tool's, for the output that answers it. */
  private readonly customCalls = new Set<string>();

  constructor(
    private readonly target: ItemTarget,
    private readonly tools: readonly ToolDefinition[] | undefined,
  ) {}

  messages(messages: readonly Message[], root = "messages"): ResponsesItem[] {
    const items: ResponsesItem[] = [];
    messages.forEach((message, index) => {
      const path = [root, index];
      this.noteForeignFields(message.extra, path);
      message.parts.forEach((part, partIndex) => {
        if (part.type !== "opaque")
          this.noteForeignFields(part.extra, [...path, "content", partIndex], CARRIED_FIELDS[part.type]);
      });
      switch (message.role) {
        case "assistant":
          items.push(...this.assistant(message.parts, path));
          break;
        case "user":
          items.push(...this.user(message, path));
          break;
        case "system":
          items.push(this.inputMessage(message, message.parts, "system", path));
          break;
        default:
          assertNever(message.role, "role");
      }
    });
    return items;
  }

  /** An assistant message's parts (or an answer's) as items: text runs as message items, the rest one item each. */
  assistant(parts: readonly Part[], path: ReadonlyArray<string | number>): ResponsesItem[] {
    const items: ResponsesItem[] = [];
    let message: (ResponsesItem & { content: ResponsesContentPart[] }) | undefined;
    const openMessage = (marker: Record<string, unknown> | undefined) => {
      if (message !== undefined && marker === undefined) return message;
      const { shorthand: _shorthand, empty: _empty, ...fields } = marker ?? {};
      message = this.newMessage(fields, items.length);
      items.push(message);
      return message;
    };
    parts.forEach((part, partIndex) => {
      const partPath = formatPath([...path, "content", partIndex]);
      switch (part.type) {
        case "text": {
          // An empty text (a Chat client's `content: ""` beside its calls) carries nothing a provider needs.
          if (part.text === "" && this.target.kind === "provider") return;
          const marker = kept(part).item as Record<string, unknown> | undefined;
          const into = openMessage(marker);
          if (marker?.empty === true && part.text === "") return;
          const content = this.providerPart(contentPartFromCore(part, "assistant", partPath, this.lossy));
          if (content !== undefined) into.content.push(content);
          const text = content?.text;
          if (marker?.shorthand === true && into.content.length === 1 && typeof text === "string") {
            // A message given as a string holds that string only: what follows starts an item of its own.
            (into as { content: unknown }).content = text;
            message = undefined;
          }
          return;
        }
        case "thinking":
        case "redacted_thinking": {
          const reasoning = this.reasoning(part, partPath, items.length);
          if (reasoning === undefined) return;
          if (reasoning.kind === "text") {
            openMessage(undefined).content.push({ type: "output_text", text: reasoning.text, annotations: [] });
            return;
          }
          message = undefined;
          items.push(reasoning.item);
          return;
        }
        case "tool_call": {
          message = undefined;
          const form = callForm(part, this.tools);
          const own = kept(part);
          const fields = this.itemFields(own, ["type", "namespace"]);
          if (form.kind === "custom") this.customCalls.add(part.id);
          const answer = this.answerFields(form.kind === "custom" ? "ctc" : "fc", items.length);
          items.push(callItem(part, form, { ...answer, ...callStatus(part, form, answer.status), ...fields }));
          return;
        }
        case "opaque":
          if (part.format === "responses") {
            message = undefined;
            items.push(part.block as ResponsesItem);
          } else {
            this.lossy.push({
              code: "opaque-block-dropped",
              message: `a ${part.format} block has no Responses form`,
              path: partPath,
            });
          }
          return;
        case "image":
        case "document":
        case "tool_result":
          this.lossy.push({
            code: "part-dropped",
            message: `a ${part.type} part cannot be in an assistant turn of the Responses API`,
            path: partPath,
          });
          return;
        default:
          assertNever(part, "part");
      }
    });
    return items;
  }

  /** A user message: its tool results as call outputs, runs of anything else as user messages, in order. */
  private user(message: Message, path: ReadonlyArray<string | number>): ResponsesItem[] {
    // A conversation Parley compacted goes back to its client as the item it came in; a provider gets its summary.
    const compaction = kept(message).compaction as ResponsesItem | undefined;
    if (compaction !== undefined && this.target.kind === "client") return [compaction];
    // A message with nothing in it still is one.
    if (message.parts.length === 0) return [this.inputMessage(message, [], "user", path)];
    const items: ResponsesItem[] = [];
    let run: Part[] = [];
    const flush = () => {
      if (run.length === 0) return;
      items.push(this.inputMessage(message, run, "user", path));
      run = [];
    };
    message.parts.forEach((part, partIndex) => {
      if (part.type === "tool_result") {
        flush();
        items.push(this.output(part, formatPath([...path, "content", partIndex])));
      } else if (part.type === "opaque" && part.format === "responses") {
        flush();
        items.push(part.block as ResponsesItem);
      } else {
        run.push(part);
      }
    });
    flush();
    return items;
  }

  private inputMessage(
    message: Message,
    parts: readonly Part[],
    role: "user" | "system",
    path: ReadonlyArray<string | number>,
  ): ResponsesItem {
    const own = kept(message);
    const wireRole = role === "system" && own.role === "developer" ? "developer" : role;
    const fields = this.itemFields(own, ["role", "compaction"]);
    const single = parts[0];
    if (message.textShorthand && parts.length === 1 && single?.type === "text" && kept(single).type === undefined)
      return { ...fields, role: wireRole, content: single.text };
    const content: ResponsesContentPart[] = [];
    parts.forEach((part, partIndex) => {
      const encoded = contentPartFromCore(part, "input", formatPath([...path, "content", partIndex]), this.lossy);
      if (encoded !== undefined) content.push(encoded);
    });
    return { ...fields, role: wireRole, content };
  }

  private output(part: ToolResultPart, path: string): ResponsesItem {
    const own = kept(part);
    // As it came from a Responses client; else as the call it answers was written.
    const type =
      typeof own.type === "string"
        ? own.type
        : this.customCalls.has(part.toolCallId)
          ? "custom_tool_call_output"
          : "function_call_output";
    if (part.isError) {
      this.lossy.push({
        code: "tool-error-flag-dropped",
        message: "Responses call outputs have no error flag; the output is sent as is",
        path,
      });
    }
    const output =
      typeof part.content === "string"
        ? part.content
        : part.content.flatMap((item, index) => {
            const encoded = contentPartFromCore(item, "input", `${path}.content[${index}]`, this.lossy);
            return encoded === undefined ? [] : [encoded];
          });
    return { ...this.itemFields(own, ["type"]), type, call_id: part.toolCallId, output };
  }

  /** The item a thinking part becomes, the text it goes as, or undefined when it goes nowhere. */
  private reasoning(
    part: ThinkingPart | RedactedThinkingPart,
    path: string,
    index: number,
  ): { kind: "item"; item: ResponsesItem } | { kind: "text"; text: string } | undefined {
    const target = this.target;
    if (target.kind === "client") {
      const id = target.responseId === undefined ? newItemId("rs") : answerItemId("rs", target.responseId, index);
      return { kind: "item", item: clientReasoningItem(part, id) };
    }
    if (part.type === "redacted_thinking") {
      this.lossy.push({
        code: "redacted-thinking-dropped",
        message: "redacted thinking goes back only to the provider that made it; a Responses provider cannot take it",
        path,
      });
      return undefined;
    }
    const own = providerReasoningItem(part, target.provider);
    if (own !== undefined) return { kind: "item", item: own };
    const origin = originOf(part);
    const whose =
      origin?.provider === undefined ? `a ${origin?.format ?? "unknown"} model` : `provider '${origin.provider}'`;
    if (target.reasoning === "drop" || part.thinking === "") {
      this.lossy.push({
        code: "thinking-dropped",
        message:
          part.thinking === ""
            ? `reasoning of ${whose} with no text: only its producer could read it, and this provider did not make it`
            : "reasoning mode 'drop': thinking not sent",
        path,
      });
      return undefined;
    }
    this.lossy.push({
      code: "thinking-to-text",
      message: `reasoning of ${whose} cannot go to this provider as a reasoning item; sent as <think> text`,
      path,
    });
    return { kind: "text", text: `<think>${part.thinking}</think>` };
  }

  private newMessage(
    fields: Record<string, unknown>,
    index: number,
  ): ResponsesItem & { content: ResponsesContentPart[] } {
    if (this.target.kind === "provider") {
      const phase = fields.phase === undefined ? {} : { phase: fields.phase };
      return { type: "message", role: "assistant", ...phase, content: [] };
    }
    if (this.target.responseId === undefined) return { ...fields, role: "assistant", content: [] };
    return messageItem(answerItemId("msg", this.target.responseId, index), "completed", fields);
  }

  /**
   * Fields another API gave a message or a part that no Responses item has (an Anthropic text's `citations`, a
   * Chat message's `name`): they go nowhere, each reported once, where it was first met. Anthropic's cache
   * breakpoints are among them (the API caches prompt prefixes by itself), reported as Chat reports them.
   */
  private noteForeignFields(
    extra: Extra | undefined,
    path: ReadonlyArray<string | number>,
    carried: ReadonlySet<string> = NOTHING_CARRIED,
  ): void {
    if (extra === undefined) return;
    for (const { from, key } of fieldsFor(extra, "responses").dropped) {
      if (carried.has(key)) continue;
      const code: LossyCode = key === "cache_control" ? "cache_control-stripped" : `field-dropped-${key}`;
      if (this.reported.has(code)) continue;
      this.reported.add(code);
      this.lossy.push(
        key === "cache_control"
          ? {
              code,
              message:
                "Anthropic 'cache_control' has no Responses equivalent (the API caches prefixes by itself); dropped",
              path: formatPath(path),
            }
          : {
              code,
              message: `${from} field '${key}' has no Responses equivalent and was dropped`,
              path: `${formatPath(path)}.${key}`,
            },
      );
    }
  }

  private readonly reported = new Set<string>();

  /** An item's own fields for this target (a provider gets none of a client's ids and statuses). */
  private itemFields(own: Record<string, unknown>, skip: string[]): Record<string, unknown> {
    const fields: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(own)) {
      if (skip.includes(key)) continue;
      if (this.target.kind === "provider" && (key === "id" || key === "status")) continue;
      if (this.target.kind === "provider" && SDK_ONLY.has(key)) {
        this.sdkFieldsDropped();
        continue;
      }
      fields[key] = value;
    }
    return fields;
  }

  /** A content part for a provider, without what the SDK added to it on the client's side. */
  private providerPart(part: ResponsesContentPart | undefined): ResponsesContentPart | undefined {
    if (part === undefined || this.target.kind !== "provider" || !Object.keys(part).some((key) => SDK_ONLY.has(key)))
      return part;
    this.sdkFieldsDropped();
    return Object.fromEntries(Object.entries(part).filter(([key]) => !SDK_ONLY.has(key))) as ResponsesContentPart;
  }

  private sdkFieldsDropped(): void {
    if (this.lossy.some((entry) => entry.code === "sdk-fields-dropped")) return;
    this.lossy.push({
      code: "sdk-fields-dropped",
      message: "fields the OpenAI SDK adds to the output it gives back (parsed, parsed_arguments) are no API input",
    });
  }

  /** An answer's item gets an id and a status; an item of a history or a provider's request has what it came with. */
  private answerFields(prefix: string, index: number): { id?: string; status?: string } {
    const target = this.target;
    if (target.kind !== "client" || target.responseId === undefined) return {};
    return { id: answerItemId(prefix, target.responseId, index), status: "completed" };
  }
}

/**
 * A function call whose arguments are not JSON (cut by the output limit: `{"loc`) is no finished call: its item is
 * `incomplete`, so that a client does not run it as one. Free-form (custom) calls are finished whatever their text.
 */
export function callStatus(part: ToolCallPart, form: CallForm, status: string | undefined): { status?: string } {
  if (status === undefined) return {};
  return { status: form.kind !== "custom" && part.rawInput !== undefined ? "incomplete" : status };
}

/** What the OpenAI SDK's parse and stream helpers add to output items and parts; a client may echo them back. */
export const SDK_ONLY: ReadonlySet<string> = new Set(["parsed", "parsed_arguments"]);

/** An assistant message item of an answer, as `output_item.added` (in progress) or done shows it. */
export function messageItem(
  id: string,
  status: "in_progress" | "completed",
  fields: Record<string, unknown>,
): ResponsesItem & { content: ResponsesContentPart[] } {
  return { id, type: "message", status, ...fields, role: "assistant", content: [] };
}

/** A tool call as its item: a function call (in its namespace) or a custom tool's call with its raw input. */
export function callItem(part: ToolCallPart, form: CallForm, fields: Record<string, unknown>): ResponsesItem {
  if (form.kind === "custom")
    return { type: "custom_tool_call", ...fields, call_id: part.id, name: form.name, input: form.input };
  const call: ResponsesItem = {
    type: "function_call",
    ...fields,
    call_id: part.id,
    name: form.name,
    arguments: part.rawInput ?? JSON.stringify(part.input === undefined ? {} : part.input),
  };
  if (form.namespace !== undefined) call.namespace = form.namespace;
  return call;
}
