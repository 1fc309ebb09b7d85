import type { Message } from "../../core/index.js";
import type { HistoryCodec } from "../adapter.js";
import { coreToAnthropicMessages } from "./from-core.js";
import { anthropicMessagesToCore } from "./to-core.js";
import { parseAnthropicMessages } from "./validate-request.js";

/** A history of Anthropic messages. */
export const anthropicHistory: HistoryCodec = {
  recognizes(message) {
    const content = message.content;
    if (!Array.isArray(content)) return false;
    return content.some((block) => {
      const type = (block as { type?: unknown } | null)?.type;
      if (typeof type === "string" && ANTHROPIC_BLOCK_TYPES.has(type)) return true;
      // Anthropic's image block has a `source`; OpenAI's is `image_url`.
      return type === "image" && block !== null && typeof block === "object" && "source" in block;
    });
  },
  toCore: (messages) => ({
    messages: anthropicMessagesToCore(parseAnthropicMessages(messages, "messages")),
    lossy: [],
  }),
  fromCore(messages, options = {}) {
    const out = coreToAnthropicMessages(
      messages as Message[],
      options.signOriginThinking === undefined ? {} : { signOriginThinking: options.signOriginThinking },
    );
    return options.original === undefined
      ? out
      : { ...out, value: withInputThinkingBlocks(out.value, options.original) };
  },
};

/** Block types only Anthropic messages have. */
const ANTHROPIC_BLOCK_TYPES = new Set([
  "tool_use",
  "tool_result",
  "thinking",
  "redacted_thinking",
  "document",
  "server_tool_use",
  "web_search_tool_result",
  "search_result",
]);

/**
 * Thinking blocks carried unchanged go out as the very objects that came in, so that they are byte-identical
 * when serialised again, key order included (invariant 10), not only equal.
 */
function withInputThinkingBlocks(messages: unknown[], wire: readonly unknown[]): unknown[] {
  const inputBlocks = new Map<string, unknown>();
  for (const message of wire) {
    const content = (message as { content?: unknown } | null)?.content;
    if (!Array.isArray(content)) continue;
    for (const block of content) if (isThinkingBlock(block)) inputBlocks.set(canonicalJson(block), block);
  }
  if (inputBlocks.size === 0) return messages;
  return messages.map((message) => {
    const content = (message as { content?: unknown }).content;
    if (!Array.isArray(content) || !content.some(isThinkingBlock)) return message;
    return {
      ...(message as object),
      content: content.map((block) =>
        isThinkingBlock(block) ? (inputBlocks.get(canonicalJson(block)) ?? block) : block,
      ),
    };
  });
}

function isThinkingBlock(block: unknown): boolean {
  const type = (block as { type?: unknown } | null)?.type;
  return type === "thinking" || type === "redacted_thinking";
}

/** JSON with every object's keys sorted: equal values give equal text whatever their key order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}
