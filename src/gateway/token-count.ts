import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { assertNever, type ConversationRequest, type Part, type ToolResultContentPart } from "../core/index.js";

/** Special-token markers in user text are counted as text, never rejected. */
const TEXT_ONLY = { disallowedSpecial: new Set<string>() };
/** Role and framing tokens per message, as chat templates add them. */
const PER_MESSAGE = 3;
/** Images are billed by size; a flat estimate of a typical screenshot keeps the meter moving. */
const PER_IMAGE = 1_000;

/**
 * An estimate of a request's input tokens: o200k_base over the system prompt, messages and tool definitions.
 * Used for `count_tokens` and for `message_start` when the upstream reports no input count before content.
 */
export function estimateInputTokens(request: Pick<ConversationRequest, "system" | "messages" | "tools">): number {
  const texts: string[] = [];
  let extra = 0;
  const visit = (part: Part | ToolResultContentPart) => {
    switch (part.type) {
      case "text":
        texts.push(part.text);
        return;
      case "thinking":
        texts.push(part.thinking);
        return;
      case "redacted_thinking":
        return;
      case "tool_call":
        texts.push(part.name, part.rawInput ?? JSON.stringify(part.input ?? {}));
        return;
      case "tool_result":
        if (typeof part.content === "string") texts.push(part.content);
        else part.content.forEach(visit);
        return;
      case "image":
      case "document":
        if (part.source.type === "text") texts.push(part.source.data);
        else extra += PER_IMAGE;
        return;
      case "opaque":
        texts.push(JSON.stringify(part.block));
        return;
      default:
        assertNever(part, "part");
    }
  };
  if (request.system) request.system.parts.forEach(visit);
  for (const message of request.messages) {
    extra += PER_MESSAGE;
    message.parts.forEach(visit);
  }
  for (const tool of request.tools ?? []) {
    texts.push(tool.name, tool.description ?? "", JSON.stringify(tool.inputSchema ?? {}));
  }
  return countTokens(texts.join("\n"), TEXT_ONLY) + extra;
}
