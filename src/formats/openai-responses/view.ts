import type { Part } from "../../core/index.js";
import type { BodyView, ViewedBody, ViewedMessage } from "../adapter.js";
import { itemsToCore } from "./items-to-core.js";
import { isObject, parseResponsesRequest } from "./validate-request.js";
import type { ResponsesItem } from "./wire-types.js";

/**
 * OpenAI Responses bodies for a person. An item is not a canonical message (reasoning, calls and assistant messages
 * gather into one assistant message, a run of call outputs and a user message right after it into one user message,
 * as the encoder writes a user message holding both), so each item is shown with the
 * parts it gave: a message's content parts at `input[3].content[0]` (`input[3].content` for a string), any other
 * item at its own path (`input[4]`, which the reader's reports below it start with), each with its place in the
 * history the request reads as. `instructions` is the system prompt. Sealed reasoning stays sealed: a reasoning
 * item shows its readable text, and an item carried as is shows its `encrypted_content` by length only.
 */
export const responsesView: BodyView = {
  request(body) {
    if (!isObject(body)) return undefined;
    let items: ResponsesItem[];
    try {
      const request = parseResponsesRequest(body);
      const input = request.input ?? [];
      items = typeof input === "string" ? [{ role: "user", content: input }] : input;
    } catch {
      return undefined;
    }
    const messages = itemsView(items, "input", true);
    if (messages === undefined) return undefined;
    if (typeof body.input === "string") {
      messages[0]!.path = "input";
      messages[0]!.parts[0]!.path = "input";
    }
    if (typeof body.instructions === "string") {
      const part: Part = { type: "text", text: body.instructions };
      messages.unshift({ role: "system", path: "instructions", parts: [{ part, path: "instructions" }] });
    }
    const view: ViewedBody = { messages, model: String(body.model) };
    if (Array.isArray(body.tools)) view.tools = body.tools.map(toolName);
    return view;
  },
  response(body) {
    if (!isObject(body) || !Array.isArray(body.output) || !body.output.every(isObject)) return undefined;
    const messages = itemsView(body.output as ResponsesItem[], "output", false);
    if (messages === undefined) return undefined;
    const view: ViewedBody = { messages };
    if (typeof body.model === "string") view.model = body.model;
    return view;
  },
};

/** Items as one viewed message each, every part at its item (or content part) and, for a request, its place. */
function itemsView(items: readonly ResponsesItem[], root: string, placed: boolean): ViewedMessage[] | undefined {
  let read: ReturnType<typeof itemsToCore>;
  try {
    read = itemsToCore(items, root);
  } catch {
    return undefined;
  }
  const messages: ViewedMessage[] = items.map((item, index) => ({
    role: typeof item.role === "string" ? item.role : typeof item.type === "string" ? item.type : "?",
    path: `${root}[${index}]`,
    parts: [],
  }));
  read.messages.forEach((message, core) => {
    const source = read.sources[core];
    message.parts.forEach((part, partIndex) => {
      const from = source?.parts[partIndex] ?? source?.message ?? 0;
      const item = messages[from];
      if (item === undefined) return;
      item.parts.push({
        part: shown(part),
        path: partPath(items[from]!, item.path, item.parts.length),
        ...(placed ? { at: [core, partIndex] as const } : {}),
      });
    });
  });
  return messages;
}

/** A message's content part by its place in the content array (the string, or an empty array, as a whole). */
function partPath(item: ResponsesItem, path: string, index: number): string {
  if (item.type !== undefined && item.type !== "message") return path;
  return Array.isArray(item.content) && item.content.length > 0 ? `${path}.content[${index}]` : `${path}.content`;
}

/** A part carried as is, with whatever sealed content it holds replaced by its length. */
function shown(part: Part): Part {
  if (part.type !== "opaque" || !holdsSealed(part.block)) return part;
  return { ...part, block: withoutSealed(part.block) };
}

function holdsSealed(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsSealed);
  if (!isObject(value)) return false;
  return Object.entries(value).some(([key, inner]) => (key === "encrypted_content" ? true : holdsSealed(inner)));
}

function withoutSealed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSealed);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] =
      key === "encrypted_content" && typeof inner === "string"
        ? `[sealed, ${inner.length} characters]`
        : withoutSealed(inner);
  }
  return out;
}

/** A tool by its name, a hosted tool (`web_search`) by its type. */
function toolName(tool: unknown): string {
  if (!isObject(tool)) return "?";
  if (typeof tool.name === "string") return tool.name;
  return typeof tool.type === "string" ? tool.type : "?";
}
