import type { Message } from "../../core/index.js";
import type { HistoryCodec, ProviderSettings } from "../adapter.js";
import { type OpenAICompat, resolveCompat } from "./compat.js";
import { coreToOpenAIMessages, type OpenAIEncodeOptions } from "./from-core.js";
import { openaiMessagesToCore } from "./messages-to-core.js";
import { compatOf } from "./upstream.js";
import { parseOpenAIRequest } from "./validate-request.js";

/** A history of OpenAI chat messages: `tool` messages gather into the user message they answer for, and back. */
export const openaiChatHistory: HistoryCodec = {
  recognizes(message) {
    // A chat message has no item type: `{"type": "message", "role": "developer"}` is a Responses item.
    if (typeof message.type === "string") return false;
    if (typeof message.role === "string" && OPENAI_ONLY_ROLES.has(message.role)) return true;
    if (OPENAI_ONLY_FIELDS.some((field) => field in message)) return true;
    const content = message.content;
    if (content === null) return true;
    return Array.isArray(content) && content.some((part) => OPENAI_PART_TYPES.has(typeOf(part)));
  },
  // System messages stay in place, so the converted messages line up with `sources`.
  toCore: (messages) => openaiMessagesToCore(parseOpenAIRequest({ model: "history", messages }).messages),
  fromCore(messages, options = {}) {
    const encode: OpenAIEncodeOptions = { reasoning: options.reasoning ?? "think-tags" };
    if (options.provider !== undefined) {
      const compat = lenientCompat(options.provider);
      encode.reasoning = options.reasoning ?? options.provider.reasoning ?? compat.reasoningMode;
      encode.compat = compat;
      encode.provider = options.provider.name;
    }
    return coreToOpenAIMessages(messages as Message[], encode);
  },
};

const OPENAI_ONLY_ROLES = new Set(["tool", "developer", "function"]);
const OPENAI_ONLY_FIELDS = [
  "tool_calls",
  "tool_call_id",
  "reasoning_content",
  "reasoning",
  "reasoning_details",
  "function_call",
  "refusal",
];
const OPENAI_PART_TYPES = new Set(["image_url", "input_audio", "file", "refusal"]);

function typeOf(part: unknown): string {
  const type = part !== null && typeof part === "object" ? (part as { type?: unknown }).type : undefined;
  return typeof type === "string" ? type : "";
}

/** A provider of another API may carry settings meant for OpenAI-compatible ones; none of them fails here. */
function lenientCompat(provider: ProviderSettings): OpenAICompat {
  try {
    return compatOf(provider);
  } catch {
    return resolveCompat(undefined, provider.baseUrl);
  }
}
