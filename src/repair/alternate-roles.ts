import type { Pass, Slot } from "./history.js";
import { syntheticSlot } from "./history.js";

/** The text of a user turn Parley adds where the API needs one and the history has none. */
export const CONTINUE_TEXT = "Continue.";

/**
 * Anthropic: "first message must use the \"user\" role", and turns alternate. After merging, two assistant
 * messages can still meet when the second starts with thinking (a separate answer, see
 * merge-consecutive-roles): a short user turn goes between them, so both answers, and the thinking of the
 * last one, stay exactly as they were. A system message in place ends a run: the gateway maps it.
 */
export const alternateRoles: Pass = (slots, report) => {
  let out: Slot[] | undefined;
  let previousRole: string | undefined;
  let seenNonSystem = false;
  slots.forEach((slot, index) => {
    const { role } = slot.message;
    let reason: string | undefined;
    if (role !== "system" && !seenNonSystem && role === "assistant")
      reason = "the history must start with a user message";
    else if (role === "assistant" && previousRole === "assistant") {
      reason =
        "an assistant message that starts with thinking follows another assistant message; merging them would put other content before its thinking";
    }
    if (reason !== undefined) {
      out ??= slots.slice(0, index);
      out.push(syntheticSlot("user", [{ type: "text", text: CONTINUE_TEXT }], slot.source));
      report.push({ action: "inserted-user-turn", reason, messageIndex: slot.source });
    }
    out?.push(slot);
    if (role !== "system") seenNonSystem = true;
    previousRole = role === "system" ? undefined : role;
  });
  return out ?? slots;
};
