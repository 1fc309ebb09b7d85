import type { Part, TextPart, ThinkingPart, ToolCallPart, ToolResultPart } from "../core/index.js";
import { toolResultText } from "./history.js";

/**
 * How a part that cannot stay what it is becomes text, so that its content still reaches the model.
 * The markers are short and plain so that a model reading them sees what they were.
 */

export function thinkingAsText(part: ThinkingPart): TextPart {
  return { type: "text", text: part.thinking };
}

export function toolCallAsText(part: ToolCallPart): TextPart {
  const input = part.rawInput ?? JSON.stringify(part.input ?? {});
  return { type: "text", text: `[tool call ${part.id}: ${part.name} ${input}]` };
}

/** A tool result as a text part, followed by its images, documents and opaque blocks unchanged. */
export function toolResultAsParts(part: ToolResultPart): Part[] {
  const header = `[tool result for ${part.toolCallId}${part.isError ? " (error)" : ""}]`;
  const text = toolResultText(part);
  const parts: Part[] = [{ type: "text", text: text === "" ? header : `${header}\n${text}` }];
  if (typeof part.content !== "string") for (const item of part.content) if (item.type !== "text") parts.push(item);
  return parts;
}
