import { entryForPart, isBlank, mapSlots, type Pass, rewriteParts } from "./history.js";
import { thinkingAsText } from "./parts-as-text.js";

/**
 * A provider refused reasoning it could not verify (a signature or sealed content made under another key,
 * organisation or model family): the request goes once more with no reasoning as reasoning. Thinking with text
 * becomes that text, so the model still reads it; what holds nothing readable (redacted thinking, a signature alone)
 * is left out. Every change is reported.
 */
export const reasoningToText: Pass = (slots, report) =>
  mapSlots(slots, (slot) => {
    if (slot.message.role !== "assistant") return slot;
    return rewriteParts(slot, (part, partIndex) => {
      if (part.type === "redacted_thinking") {
        const reason = "redacted thinking refused by the provider as unverifiable, and without text: left out";
        report.push(entryForPart(slot, partIndex, "removed-empty-thinking", reason));
        return [];
      }
      if (part.type !== "thinking") return undefined;
      if (isBlank(part.thinking)) {
        const reason = "signed reasoning without text, refused by the provider as unverifiable: left out";
        report.push(entryForPart(slot, partIndex, "removed-empty-thinking", reason));
        return [];
      }
      const reason = "reasoning the provider refused as unverifiable (its signature or sealed content): sent as text";
      report.push(entryForPart(slot, partIndex, "thinking-to-text", reason));
      return [thinkingAsText(part)];
    });
  });
