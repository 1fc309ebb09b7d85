import {
  assertNever,
  decodeCompaction,
  formatPath,
  type LossyEntry,
  type Message,
  type Part,
  type ToolCallPart,
  type ToolResultPart,
} from "../../core/index.js";
import { parseToolInput } from "../../stream/accumulate.js";
import type { MessageSource } from "../adapter.js";
import { contentPartToCore } from "./content.js";
import { keep } from "./extra.js";
import { reasoningItemToCore } from "./reasoning.js";
import { NAMESPACE_SEPARATOR } from "./tools.js";
import type {
  ResponsesCallOutput,
  ResponsesContentPart,
  ResponsesCustomToolCall,
  ResponsesFunctionCall,
  ResponsesItem,
  ResponsesMessageItem,
  ResponsesReasoningItem,
} from "./wire-types.js";

/**
 * Input items -> core messages, in order. What the model produced (assistant messages, reasoning, calls, hosted
 * tools' items) gathers into one assistant message until something else comes; a run of call outputs is one user
 * message of tool results, with the user message right after it (as `itemsFromCore` writes a user message holding
 * both, so a written request reads back with the places it was written from); other user, system and developer
 * messages are their own. Each item's fields the core does
 * not name are kept, so `itemsFromCore` writes the same items back.
 */
export function itemsToCore(
  items: readonly ResponsesItem[],
  root = "input",
): { messages: Message[]; lossy: LossyEntry[]; sources: MessageSource[]; compact: boolean } {
  let compact = false;
  const messages: Message[] = [];
  const sources: MessageSource[] = [];
  const lossy: LossyEntry[] = [];
  let run: { kind: "assistant" | "outputs"; message: Message } | undefined;
  const open = (kind: "assistant" | "outputs", index: number): Message => {
    if (run?.kind === kind) return run.message;
    const message: Message = { role: kind === "assistant" ? "assistant" : "user", parts: [] };
    messages.push(message);
    sources.push({ message: index, parts: [] });
    run = { kind, message };
    return message;
  };
  const add = (message: Message, index: number, parts: Part[]) => {
    const source = sources[messages.indexOf(message)]!;
    for (const part of parts) {
      message.parts.push(part);
      source.parts.push(index);
    }
  };
  items.forEach((item, index) => {
    const kind = itemKind(item);
    switch (kind) {
      case "compaction_trigger":
        // Not a message: the request asks for the conversation compacted.
        compact = true;
        break;
      case "compaction": {
        const compacted = decodeCompaction(typeof item.encrypted_content === "string" ? item.encrypted_content : "");
        if (compacted === undefined) {
          // A provider's own (sealed by it): only that provider can read it.
          add(open("assistant", index), index, [{ type: "opaque", format: "responses", block: item }]);
          break;
        }
        // Parley's: the summary is the context that replaces the turns it compacted, for whichever provider.
        const message = keep<Message>(
          { role: "user", parts: [{ type: "text", text: `${COMPACTED_PREFIX}${compacted.summary}` }] },
          { compaction: item },
        );
        messages.push(message);
        sources.push({ message: index, parts: [index] });
        run = undefined;
        break;
      }
      case "message": {
        const message = item as ResponsesMessageItem;
        if (message.role === "assistant") {
          add(open("assistant", index), index, assistantMessageParts(message));
          break;
        }
        const read = inputMessage(message);
        // A user message right after call outputs joins them: one message written out as both reads back as one.
        if (run?.kind === "outputs" && read.role === "user" && read.parts.length > 0) {
          add(run.message, index, read.parts);
          if (read.textShorthand) run.message.textShorthand = true;
          if (read.extra) run.message.extra = read.extra;
        } else {
          messages.push(read);
          sources.push({ message: index, parts: read.parts.map(() => index) });
        }
        run = undefined;
        break;
      }
      case "reasoning":
        add(open("assistant", index), index, [reasoningItemToCore(item as ResponsesReasoningItem)]);
        break;
      case "function_call":
      case "custom_tool_call": {
        const part = callToCore(item as ResponsesFunctionCall | ResponsesCustomToolCall);
        if (part.rawInput !== undefined && item.type === "function_call" && !isJson(part.rawInput)) {
          lossy.push({
            code: "tool-arguments-repaired",
            message: "function call arguments were not valid JSON; the input was repaired and the text kept",
            path: formatPath([root, index, "arguments"]),
          });
        }
        add(open("assistant", index), index, [part]);
        break;
      }
      case "output":
        add(open("outputs", index), index, [outputToCore(item as ResponsesCallOutput)]);
        break;
      case "other-output":
        add(open("outputs", index), index, [{ type: "opaque", format: "responses", block: item }]);
        break;
      case "other":
        add(open("assistant", index), index, [{ type: "opaque", format: "responses", block: item }]);
        break;
      default:
        assertNever(kind, "item kind");
    }
  });
  return { messages, lossy, sources, compact };
}

/** What a compacted conversation's summary is introduced with when it is replayed as a user message. */
export const COMPACTED_PREFIX = "Earlier turns of this conversation were compacted; this is their summary:\n\n";

type ItemKind =
  | "message"
  | "reasoning"
  | "function_call"
  | "custom_tool_call"
  | "output"
  | "other-output"
  | "other"
  | "compaction"
  | "compaction_trigger";

function itemKind(item: ResponsesItem): ItemKind {
  const type = item.type;
  if (type === undefined || type === "message") return "message";
  switch (type) {
    case "reasoning":
    case "function_call":
    case "custom_tool_call":
    case "compaction":
    case "compaction_trigger":
      return type;
    case "compaction_summary":
      return "compaction";
    case "function_call_output":
    case "custom_tool_call_output":
      return "output";
    default:
      // What answers the model (a computer call's output, an MCP approval) sits where tool results do.
      return type.endsWith("_output") || type === "mcp_approval_response" ? "other-output" : "other";
  }
}

/** A user, system or developer message: developer is a system message that remembers its role. */
function inputMessage(item: ResponsesMessageItem): Message {
  const { role, content, ...rest } = item;
  const message: Message = { role: role === "user" ? "user" : "system", parts: [] };
  if (typeof content === "string") {
    message.parts.push({ type: "text", text: content });
    message.textShorthand = true;
  } else {
    message.parts = content.map(contentPartToCore);
  }
  return keep(message, { ...rest, role: role === "developer" ? role : undefined });
}

/** An assistant message's parts; the first carries the item's own fields, which start a new item on the way back. */
function assistantMessageParts(item: ResponsesMessageItem): Part[] {
  const { role: _role, content, ...rest } = item;
  const marker: Record<string, unknown> = { ...rest };
  let parts: Part[];
  if (typeof content === "string") {
    parts = [{ type: "text", text: content }];
    marker.shorthand = true;
  } else {
    parts = content.map((part: ResponsesContentPart) => contentPartToCore(part));
    // An empty message still is one: an empty text keeps its place.
    if (parts.length === 0) {
      parts = [{ type: "text", text: "" }];
      marker.empty = true;
    }
  }
  keep(parts[0]!, { item: marker });
  return parts;
}

function callToCore(item: ResponsesFunctionCall | ResponsesCustomToolCall): ToolCallPart {
  if (item.type === "custom_tool_call") {
    const { type, call_id, name, input, ...rest } = item;
    return keep<ToolCallPart>({ type: "tool_call", id: call_id, name, input: { input } }, { type, ...rest });
  }
  const { type: _type, call_id, name, arguments: argumentsText, namespace, ...rest } = item;
  const parsed = parseToolInput(argumentsText);
  const part: ToolCallPart = {
    type: "tool_call",
    id: call_id,
    name: typeof namespace === "string" ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name,
    input: parsed.input,
  };
  // Arguments go back byte for byte: the text is kept whenever writing the parse again would change it.
  if (parsed.rawInput !== undefined || JSON.stringify(parsed.input) !== argumentsText) part.rawInput = argumentsText;
  return keep(part, { ...rest, namespace });
}

function outputToCore(item: ResponsesCallOutput): ToolResultPart {
  const { type, call_id, output, ...rest } = item;
  const part: ToolResultPart = {
    type: "tool_result",
    toolCallId: call_id,
    content: typeof output === "string" ? output : output.map(contentPartToCore),
  };
  return keep(part, { ...rest, type });
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
