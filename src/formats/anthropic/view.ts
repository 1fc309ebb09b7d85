import type { Message } from "../../core/index.js";
import { isObject } from "../../core/json.js";
import type { BodyView, ViewedBody, ViewedMessage } from "../adapter.js";
import { anthropicRequestToCore, anthropicResponseToCore } from "./to-core.js";
import { parseAnthropicRequest } from "./validate-request.js";
import type { AnthropicMessageResponse } from "./wire-types.js";

/**
 * Anthropic bodies for a person: a block is a part, one to one, so a part's path is its block's
 * (`messages[3].content[1]`, `system[0]`; `messages[0].content` for a string) and its place in the history is
 * the message's and the block's own.
 */
export const anthropicView: BodyView = {
  request(body) {
    if (!isObject(body) || !Array.isArray(body.messages)) return undefined;
    let read: ReturnType<typeof anthropicRequestToCore>["value"];
    try {
      read = anthropicRequestToCore(parseAnthropicRequest(body)).value;
    } catch {
      return undefined;
    }
    const messages: ViewedMessage[] = [];
    if (read.system !== undefined) messages.push(viewed(read.system, "system", typeof body.system === "string"));
    read.messages.forEach((message, index) => {
      const wire = body.messages as Array<{ content?: unknown }>;
      messages.push(viewed(message, `messages[${index}]`, typeof wire[index]?.content === "string", index));
    });
    const view: ViewedBody = { messages, model: read.model };
    if (read.tools !== undefined) view.tools = read.tools.map((tool) => tool.name);
    return view;
  },
  response(body) {
    if (!isObject(body) || !Array.isArray(body.content)) return undefined;
    try {
      const answer = anthropicResponseToCore(body as unknown as AnthropicMessageResponse);
      return { model: answer.model, messages: [viewed(answer.message, "", false)] };
    } catch {
      return undefined;
    }
  },
};

function viewed(message: Message, path: string, shorthand: boolean, index?: number): ViewedMessage {
  const blocks = path === "system" ? "system" : path === "" ? "content" : `${path}.content`;
  return {
    role: message.role,
    path,
    parts: message.parts.map((part, partIndex) => ({
      part,
      path: shorthand ? blocks : `${blocks}[${partIndex}]`,
      ...(index === undefined ? {} : { at: [index, partIndex] as const }),
    })),
  };
}
