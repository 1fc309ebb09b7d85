import type { Message } from "../core/index.js";
import { hasToolCalls, isBlank, mapSlots, type Pass, partSourcesOf, withParts } from "./history.js";

/** What stands in for reasoning that was never recorded. Kimi rejects an empty string, so it is not empty. */
export const MISSING_REASONING_TEXT = "(reasoning not recorded)";

export function hasReasoning(message: Message): boolean {
  return message.parts.some((part) => part.type === "thinking" && !isBlank(part.thinking));
}

/**
 * Kimi ("thinking is enabled but reasoning_content is missing in assistant tool call message at index N") and
 * DeepSeek ("The `reasoning_content` in the thinking mode must be passed back to the API") answer 400 when an
 * earlier assistant message with tool calls comes back without its reasoning: a history written by another
 * model, or by a client that dropped it. Such a message gets a short placeholder thinking part at its start,
 * which the codec sends in the provider's reasoning field.
 */
export const reasoningOnToolTurns: Pass = (slots, report) =>
  mapSlots(slots, (slot) => {
    const { message } = slot;
    if (message.role !== "assistant" || !hasToolCalls(message) || hasReasoning(message)) return slot;
    report.push({
      action: "added-placeholder-reasoning",
      reason: "this provider needs the reasoning of every assistant message with tool calls, and this one has none",
      messageIndex: slot.source,
    });
    return withParts(
      slot,
      [{ type: "thinking", thinking: MISSING_REASONING_TEXT }, ...message.parts],
      [undefined, ...partSourcesOf(slot)],
    );
  });
