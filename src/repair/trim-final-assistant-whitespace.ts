import type { Pass } from "./history.js";
import { entryForPart, rewriteParts } from "./history.js";

/**
 * Anthropic answers a history that ends with an assistant message (a prefill) whose last text ends in
 * whitespace with 400 "final assistant content cannot end with trailing whitespace". That trailing
 * whitespace is trimmed, and reported. Only the final message's last block is touched, never a thinking
 * block; a text of whitespace only never gets here (empty blocks are removed first).
 */
export const trimFinalAssistantWhitespace: Pass = (slots, report) => {
  const last = slots.at(-1);
  const lastPart = last?.message.parts.at(-1);
  if (last === undefined || last.message.role !== "assistant" || lastPart?.type !== "text") return slots;
  const trimmed = lastPart.text.trimEnd();
  if (trimmed === lastPart.text) return slots;
  const lastIndex = last.message.parts.length - 1;
  const slot = rewriteParts(last, (part, partIndex) => {
    if (partIndex !== lastIndex || part.type !== "text") return undefined;
    const reason = "Anthropic refuses a final assistant message that ends in whitespace";
    report.push(entryForPart(last, partIndex, "trimmed-final-whitespace", reason));
    return [{ ...part, text: trimmed }];
  });
  return [...slots.slice(0, -1), slot];
};
