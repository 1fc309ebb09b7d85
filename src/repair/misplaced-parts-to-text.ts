import { assertNever, type Part, type Role } from "../core/index.js";
import { entryForPart, isBlank, mapSlots, type Pass, rewriteParts } from "./history.js";
import { thinkingAsText, toolCallAsText, toolResultAsParts } from "./parts-as-text.js";

/**
 * Both APIs take thinking and tool calls only from the assistant, and tool results only from the user (as
 * `tool` messages on OpenAI). A part in the wrong role, which mixed-up orchestrators produce, becomes text in
 * place so that what it said stays in the conversation.
 */
export const misplacedPartsToText: Pass = (slots, report) =>
  mapSlots(slots, (slot) => {
    const { role } = slot.message;
    return rewriteParts(slot, (part, partIndex) => {
      if (!isMisplaced(part, role)) return undefined;
      const reason = `a ${part.type} block cannot be in a ${role} message; kept as text`;
      if (part.type === "thinking" && isBlank(part.thinking)) {
        report.push(entryForPart(slot, partIndex, "removed-empty-thinking", `${reason}, but it holds no text`));
        return [];
      }
      const action =
        part.type === "tool_call"
          ? "tool-call-to-text"
          : part.type === "tool_result"
            ? "tool-result-to-text"
            : "thinking-to-text";
      report.push(entryForPart(slot, partIndex, action, reason));
      if (part.type === "thinking") return [thinkingAsText(part)];
      if (part.type === "tool_call") return [toolCallAsText(part)];
      if (part.type === "tool_result") return toolResultAsParts(part);
      return undefined;
    });
  });

function isMisplaced(part: Part, role: Role): boolean {
  switch (part.type) {
    case "thinking":
    case "tool_call":
      return role !== "assistant";
    case "tool_result":
      return role !== "user";
    case "text":
    case "redacted_thinking":
    case "image":
    case "document":
    case "opaque":
      return false;
    default:
      return assertNever(part, "part");
  }
}
