import { geminiSignature, type Part, ridesOnText } from "../../core/index.js";
import type { BodyView, ViewedBody, ViewedMessage, ViewedPart } from "../adapter.js";
import { isRecord } from "./content-to-core.js";
import { openaiMessagesToCore } from "./messages-to-core.js";
import { openaiResponseToCore } from "./to-core.js";
import type { OpenAIChatResponse, OpenAIMessage } from "./wire-types.js";

/**
 * Chat Completions bodies for a person. A wire message is not a canonical one (tool messages join the user
 * message after them; an assistant's reasoning, content and tool calls are fields, not blocks), so each wire
 * message is shown with the parts it gave, each at the field it came from, and with its place in the history
 * the request reads as.
 */
export const openaiChatView: BodyView = {
  request(body) {
    if (!isRecord(body) || !Array.isArray(body.messages) || !body.messages.every(isRecord)) return undefined;
    const wire = body.messages as OpenAIMessage[];
    let read: ReturnType<typeof openaiMessagesToCore>;
    try {
      read = openaiMessagesToCore(wire);
    } catch {
      return undefined;
    }
    const messages: ViewedMessage[] = wire.map((message, index) => ({
      role: typeof message.role === "string" ? message.role : "?",
      path: `messages[${index}]`,
      parts: [],
    }));
    read.messages.forEach((message, core) => {
      const source = read.sources[core];
      message.parts.forEach((part, partIndex) => {
        const from = source?.parts[partIndex] ?? source?.message ?? 0;
        messages[from]?.parts.push({ part, path: "", at: [core, partIndex] });
      });
    });
    messages.forEach((message, index) => {
      placeParts(message.parts, wire[index]!, message.path);
    });
    const view: ViewedBody = { messages };
    if (typeof body.model === "string") view.model = body.model;
    if (Array.isArray(body.tools)) {
      view.tools = body.tools.map((tool) =>
        isRecord(tool) && isRecord(tool.function) ? String(tool.function.name) : "?",
      );
    }
    return view;
  },
  response(body) {
    if (!isRecord(body) || !Array.isArray(body.choices)) return undefined;
    const message = isRecord(body.choices[0]) ? body.choices[0].message : undefined;
    if (!isRecord(message)) return undefined;
    try {
      const answer = openaiResponseToCore(body as unknown as OpenAIChatResponse).value;
      const parts: ViewedPart[] = answer.message.parts.map((part) => ({ part, path: "" }));
      placeParts(parts, message as OpenAIMessage, "choices[0].message");
      const view: ViewedBody = { messages: [{ role: "assistant", path: "choices[0].message", parts }] };
      if (typeof body.model === "string") view.model = body.model;
      return view;
    } catch {
      return undefined;
    }
  },
};

/**
 * Gives each part the path of the field it came from: reasoning by the field its origin names, content by its
 * place in a content array (or the string), tool calls in order; a tool message's result is the message; a thought
 * signature its `extra_content` (its call's, or the message's), shown sealed as the Gemini view shows it.
 */
function placeParts(parts: ViewedPart[], message: OpenAIMessage, path: string): void {
  const content = message.content;
  let contentIndex = 0;
  let callIndex = 0;
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.length : 0;
  for (const viewed of parts) {
    const signature = geminiSignature(viewed.part);
    if (signature === undefined) {
      viewed.path = fieldPath(viewed.part);
      continue;
    }
    const call = ridesOnText(signature) ? -1 : (message.tool_calls ?? []).findIndex((wire) => wire.id === signature.id);
    viewed.path = call === -1 ? `${path}.extra_content` : `${path}.tool_calls[${call}].extra_content`;
    viewed.part = { type: "thinking", thinking: "", signature: `[sealed, ${signature.sealed.length} characters]` };
  }
  function fieldPath(part: Part): string {
    if (message.role === "tool") return `${path}.content`;
    if (part.type === "thinking" && part.origin?.format === "openai") {
      const field = part.origin.field;
      if (field === "reasoning_content" || field === "reasoning" || field === "reasoning_details") {
        return `${path}.${field}`;
      }
    }
    if (part.type === "tool_call" && callIndex < calls) return `${path}.tool_calls[${callIndex++}]`;
    if (Array.isArray(content)) return `${path}.content[${Math.min(contentIndex++, content.length - 1)}]`;
    return `${path}.content`;
  }
}
