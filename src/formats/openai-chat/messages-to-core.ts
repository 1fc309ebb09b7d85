import {
  clientSignaturePart,
  formatPath,
  type LossyEntry,
  type Message,
  type Part,
  type ReasoningField,
  type ReasoningOrigin,
  type ThinkingPart,
  type ToolCallPart,
  type ToolResultPart,
} from "../../core/index.js";
import { parseToolInput } from "../../stream/accumulate.js";
import { mergeThinkSegments, splitThinkTags, type ThinkSegment } from "../../text/think-tags.js";
import type { MessageSource } from "../adapter.js";
import { contentPartToCore, isRecord, toolContentPartToCore, withExtra } from "./content-to-core.js";
import { reasoningDetailsText } from "./reasoning-details.js";
import { sealedThinking } from "./sealed-reasoning.js";
import { readExtraContent } from "./thought-signatures.js";
import type { OpenAIContentPart, OpenAIMessage, OpenAIToolCall } from "./wire-types.js";

export type { MessageSource } from "../adapter.js";

/**
 * OpenAI chat messages -> core messages, shaped so that `coreToOpenAIMessages` gives the same JSON back:
 * - `tool` messages become tool-result parts of a user message; a run of them and the user message right
 *   after share one message, in wire order (so `[tool R1, tool R2, user U]` is `[R1, R2, U]`);
 * - `developer` is a system message with `extra.role = "developer"`;
 * - assistant reasoning fields become thinking parts (reasoning first, as the wire has no order for them),
 *   then the content (inline `<think>` split into thinking parts when that reads back to the same string),
 *   then the tool calls; arguments that are not byte-equal to their parse are kept in `rawInput`;
 * - a thought signature in `extra_content` (Google's endpoints, and what Parley gives Chat clients) becomes the
 *   signature part it stands for, right before its call, or before the content for the message's own;
 * - every field not mapped (`name`, `content: null`, `refusal`...) stays in the message's `extra`.
 */

export function openaiMessagesToCore(messages: readonly OpenAIMessage[]): {
  messages: Message[];
  lossy: LossyEntry[];
  /** For each core message, the wire message that started it and the one each of its parts came from. */
  sources: MessageSource[];
} {
  const out: Message[] = [];
  const lossy: LossyEntry[] = [];
  const sources: MessageSource[] = [];
  /** The user message that tool messages are being gathered into, until a non-tool message. */
  let toolRun: Message | undefined;
  messages.forEach((message, index) => {
    const { role, content, ...rest } = message;
    const countBefore = out.length;
    const partsBefore = out.at(-1)?.parts.length ?? 0;
    convert();
    // Each wire message adds to the last core message, or starts a new one.
    const last = out.length - 1;
    if (last < 0) return;
    const started = out.length > countBefore;
    const source = started ? { message: index, parts: [] } : (sources[last] ?? { message: index, parts: [] });
    for (let part = started ? 0 : partsBefore; part < out[last]!.parts.length; part++) source.parts[part] = index;
    sources[last] = source;

    function convert(): void {
      switch (role) {
        case "system":
        case "developer": {
          toolRun = undefined;
          const core = contentMessage("system", content, rest);
          if (role === "developer") withExtra(core, { ...core.extra?.openai, role: "developer" });
          out.push(core);
          break;
        }
        case "user": {
          const core = contentMessage("user", content, rest);
          if (toolRun !== undefined && core.parts.length > 0) {
            toolRun.parts.push(...core.parts);
            if (core.textShorthand) toolRun.textShorthand = true;
            if (core.extra) toolRun.extra = core.extra;
          } else {
            out.push(core);
          }
          toolRun = undefined;
          break;
        }
        case "tool": {
          const part = toolMessageToPart(content, rest);
          if (toolRun === undefined) {
            toolRun = { role: "user", parts: [] };
            out.push(toolRun);
          }
          toolRun.parts.push(part);
          break;
        }
        case "assistant":
          toolRun = undefined;
          out.push(assistantToCore(message, index, lossy));
          break;
        default:
          // Validation rejects unknown roles; a message that skipped it is kept as opaque user content.
          toolRun = undefined;
          out.push({ role: "user", parts: [{ type: "opaque", format: "openai", block: message }] });
          lossy.push({
            code: "unknown-role",
            message: `role '${String(role)}' kept as an opaque block`,
            path: formatPath(["messages", index]),
          });
      }
    }
  });
  return { messages: out, lossy, sources };
}

function contentMessage(
  role: "system" | "user",
  content: OpenAIMessage["content"],
  rest: Record<string, unknown>,
): Message {
  const extra: Record<string, unknown> = { ...rest };
  const core: Message = { role, parts: [] };
  if (typeof content === "string") {
    core.parts.push({ type: "text", text: content });
    core.textShorthand = true;
  } else if (Array.isArray(content)) {
    core.parts = content.map(contentPartToCore);
  } else if (content !== undefined) {
    extra.content = content;
  }
  return withExtra(core, extra);
}

function toolMessageToPart(content: OpenAIMessage["content"], rest: Record<string, unknown>): ToolResultPart {
  const { tool_call_id, ...extra } = rest;
  const part: ToolResultPart = {
    type: "tool_result",
    toolCallId: typeof tool_call_id === "string" ? tool_call_id : "",
    content: typeof content === "string" ? content : Array.isArray(content) ? content.map(toolContentPartToCore) : "",
  };
  if (content === null || (content !== undefined && typeof content !== "string" && !Array.isArray(content))) {
    extra.content = content;
  }
  return withExtra(part, extra);
}

function assistantToCore(message: OpenAIMessage, index: number, lossy: LossyEntry[]): Message {
  const { role: _role, content, tool_calls, reasoning_content, reasoning, reasoning_details, ...extra } = message;
  const own = signatureOf(extra);
  const parts: Part[] = [];
  const details = Array.isArray(reasoning_details) ? reasoning_details : undefined;
  // Reasoning Parley gave this client sealed comes back as the parts it was, each with its origin.
  const sealed = details === undefined ? undefined : sealedThinking(details);
  if (sealed !== undefined) return assistantWithSealed(message, sealed, index, lossy);
  let detailsTaken = false;
  if (typeof reasoning_content === "string") {
    parts.push(thinking(reasoning_content, "reasoning_content", details));
    detailsTaken = details !== undefined;
  } else if (reasoning_content !== undefined) extra.reasoning_content = reasoning_content;
  if (typeof reasoning === "string" && !(typeof reasoning_content === "string" && reasoning === reasoning_content)) {
    parts.push(thinking(reasoning, "reasoning", detailsTaken ? undefined : details));
    detailsTaken ||= details !== undefined;
  } else if (reasoning !== undefined) extra.reasoning = reasoning;
  if (details !== undefined && !detailsTaken)
    parts.push(thinking(reasoningDetailsText(details), "reasoning_details", details));

  if (own !== undefined) {
    const carrier = typeof content === "string" && content !== "" ? "next-text" : "own-part";
    const part = clientSignaturePart(own, carrier);
    if (part !== undefined) parts.push(part);
  }
  let textShorthand = false;
  if (typeof content === "string") {
    parts.push(...assistantText(content));
    textShorthand = true;
  } else if (Array.isArray(content)) {
    parts.push(...content.map(assistantContentPart));
  } else if (content !== undefined) extra.content = content;

  if (Array.isArray(tool_calls)) {
    tool_calls.forEach((call, callIndex) => {
      const fields: Record<string, unknown> | undefined = call.extra_content === undefined ? undefined : { ...call };
      const signature = fields === undefined ? undefined : signatureOf(fields);
      const part = toolCallToCore(signature === undefined ? call : (fields as OpenAIToolCall));
      const signed = signature === undefined ? undefined : clientSignaturePart(signature, { call: part.id });
      if (signed !== undefined) parts.push(signed);
      if (part.rawInput !== undefined && !isJson(part.rawInput)) {
        lossy.push({
          code: "tool-arguments-repaired",
          message: "tool call arguments were not valid JSON; the input was repaired and the text kept",
          path: formatPath(["messages", index, "tool_calls", callIndex, "function", "arguments"]),
        });
      }
      parts.push(part);
    });
  } else if (tool_calls !== undefined) extra.tool_calls = tool_calls;

  const core: Message = { role: "assistant", parts };
  if (textShorthand) core.textShorthand = true;
  return withExtra(core, extra);
}

/**
 * An assistant message whose reasoning is all sealed details: the details are its thinking, and a reasoning field
 * that only repeats their text (as Parley writes it) adds nothing.
 */
function assistantWithSealed(
  message: OpenAIMessage,
  sealed: ThinkingPart[],
  index: number,
  lossy: LossyEntry[],
): Message {
  const joined = sealed.map((part) => part.thinking).join("\n\n");
  const { reasoning_details: _details, reasoning_content, reasoning, ...rest } = message;
  const repeated = (value: unknown) => value === undefined || value === joined;
  const core = assistantToCore(
    {
      ...rest,
      ...(repeated(reasoning_content) ? {} : { reasoning_content }),
      ...(repeated(reasoning) ? {} : { reasoning }),
    } as OpenAIMessage,
    index,
    lossy,
  );
  return { ...core, parts: [...sealed, ...core.parts] };
}

function thinking(text: string, field: ReasoningField, details: unknown[] | undefined): ThinkingPart {
  const origin: ReasoningOrigin = { format: "openai", field };
  if (details !== undefined) origin.details = details;
  return { type: "thinking", thinking: text, origin };
}

/** Inline `<think>` blocks become thinking parts only when writing them back gives the same string. */
function assistantText(content: string): Part[] {
  if (!content.includes("<think>")) return [{ type: "text", text: content }];
  const segments = mergeThinkSegments(splitThinkTags(content));
  const parts: Part[] = [];
  let rebuilt = "";
  let open: ThinkingPart | undefined;
  for (const segment of segments as ThinkSegment[]) {
    if (segment.type === "text") {
      parts.push({ type: "text", text: segment.text });
      rebuilt += segment.text;
    } else if (segment.type === "thinking-start") {
      open = { type: "thinking", thinking: "", origin: { format: "openai", field: "think-tags" } };
      parts.push(open);
    } else if (segment.type === "thinking" && open) {
      open.thinking += segment.text;
    } else if (segment.type === "thinking-end" && open) {
      rebuilt += `<think>${open.thinking}</think>`;
      open = undefined;
    }
  }
  return rebuilt === content ? parts : [{ type: "text", text: content }];
}

function assistantContentPart(part: OpenAIContentPart): Part {
  if (part.type === "thinking" && Array.isArray(part.thinking) && Object.keys(part).length === 2) {
    const items = part.thinking as unknown[];
    if (
      items.length === 1 &&
      isRecord(items[0]) &&
      items[0].type === "text" &&
      typeof items[0].text === "string" &&
      Object.keys(items[0]).length === 2
    ) {
      return { type: "thinking", thinking: items[0].text, origin: { format: "openai", field: "content-parts" } };
    }
  }
  return contentPartToCore(part);
}

function toolCallToCore(call: OpenAIToolCall): ToolCallPart {
  const { id, type, function: fn, ...extra } = call;
  if (type !== "function") extra.type = type;
  const argumentsText = typeof fn?.arguments === "string" ? fn.arguments : "";
  const parsed = parseToolInput(argumentsText);
  const part: ToolCallPart = { type: "tool_call", id, name: fn?.name ?? "", input: parsed.input };
  // Arguments go back byte-for-byte: keep the text whenever re-serialising the parse would change it.
  if (parsed.rawInput !== undefined || JSON.stringify(parsed.input) !== argumentsText) part.rawInput = argumentsText;
  return withExtra(part, extra);
}

/** Takes the thought signature out of an object's `extra_content` (what else it held stays), and gives it. */
function signatureOf(fields: Record<string, unknown>): string | undefined {
  if (fields.extra_content === undefined) return undefined;
  const { signature, rest } = readExtraContent(fields.extra_content);
  if (signature === undefined) return undefined;
  if (rest === undefined) delete fields.extra_content;
  else fields.extra_content = rest;
  return signature;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
