import type { Message, Part, ToolResultPart } from "../core/index.js";
import type { RepairTarget } from "../formats/adapter.js";
import { entryForPart, isBlank, type Pass, type RepairEntry, rewriteParts, type Slot } from "./history.js";

type Emptiness = RepairTarget["emptiness"];

/**
 * `blank-text` (Anthropic) answers 400 to an empty message ("all messages must have non-empty content except
 * for the optional final assistant message") and to a text block with nothing but whitespace ("text content
 * blocks must contain non-whitespace text"). Only those are removed: a thinking-only or redacted-thinking-only
 * assistant message is an answer, not an empty message, and stays. `no-content` APIs (OpenAI-compatible) take
 * blank text, so for them only messages with no content at all go.
 */
export function isEmptyMessage(message: Message, emptiness: Emptiness): boolean {
  if (emptiness === "no-content") {
    // Redacted thinking cannot go to an OpenAI-compatible API: a message of nothing else would go out empty.
    return message.parts.every(
      (part) => (part.type === "text" && part.text === "") || part.type === "redacted_thinking",
    );
  }
  return message.parts.every((part) => part.type === "text" && isBlank(part.text));
}

export function dropEmpty(emptiness: Emptiness): Pass {
  return (slots, report) => {
    let out: Slot[] | undefined;
    for (let index = 0; index < slots.length; index++) {
      const slot = slots[index]!;
      let kept: Slot | undefined = slot;
      if (isEmptyMessage(slot.message, emptiness)) {
        const onlyRedacted = slot.message.parts.some((part) => part.type === "redacted_thinking");
        report.push({
          action: "removed-empty-message",
          reason: onlyRedacted
            ? `a ${slot.message.role} message of redacted thinking only would reach an OpenAI-compatible API empty`
            : `a ${slot.message.role} message with no content is rejected by the API`,
          messageIndex: slot.source,
        });
        kept = undefined;
      } else if (emptiness === "blank-text") {
        kept = rewriteParts(slot, (part, partIndex) => {
          if (part.type === "tool_result") return withoutBlankResultText(part, slot, partIndex, report);
          if (part.type !== "text" || !isBlank(part.text)) return undefined;
          report.push(
            entryForPart(
              slot,
              partIndex,
              "removed-empty-block",
              "Anthropic rejects text blocks without non-whitespace text",
            ),
          );
          return [];
        });
      }
      if (kept !== slot && out === undefined) out = slots.slice(0, index);
      if (kept) out?.push(kept);
    }
    return out ?? slots;
  };
}

/** The same rule inside a tool result's content: a blank text block there is refused too. */
function withoutBlankResultText(
  part: ToolResultPart,
  slot: Slot,
  partIndex: number,
  report: RepairEntry[],
): Part[] | undefined {
  if (typeof part.content === "string") return undefined;
  const content = part.content.filter((inner) => inner.type !== "text" || !isBlank(inner.text));
  if (content.length === part.content.length) return undefined;
  const reason = "Anthropic rejects text blocks without non-whitespace text, inside a tool result too";
  report.push(entryForPart(slot, partIndex, "removed-empty-block", reason));
  return [{ ...part, content }];
}
