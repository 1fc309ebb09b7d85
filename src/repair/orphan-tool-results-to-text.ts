import { entryForPart, mapSlots, type Pass, rewriteParts, type Slot } from "./history.js";
import { toolResultAsParts } from "./parts-as-text.js";
import { answerOwners, type ZoneRule } from "./tool-zones.js";

/**
 * A tool result whose call is not in the assistant message it answers (a result that outlived a compacted
 * or edited history, or a second result for the same call) is answered with 400 by both APIs ("unexpected
 * `tool_use_id` found in `tool_result` blocks", "messages with role 'tool' must be a response to a preceeding
 * message with 'tool_calls'"). It becomes text in place, never dropped: what the tool returned stays readable.
 */
export function orphanToolResultsToText(rule: ZoneRule): Pass {
  return (slots, report) => {
    const owners = answerOwners(
      slots.map((slot) => slot.message.role),
      rule,
    );
    let currentOwner = -2;
    let callIds = new Set<string>();
    let answered = new Set<string>();
    return mapSlots(slots, (slot, index) => {
      if (slot.message.role !== "user") return slot;
      const owner = owners[index]!;
      if (owner !== currentOwner) {
        currentOwner = owner;
        callIds = owner < 0 ? new Set() : callIdsOf(slots[owner]!);
        answered = new Set();
      }
      return rewriteParts(slot, (part, partIndex) => {
        if (part.type !== "tool_result") return undefined;
        if (callIds.has(part.toolCallId) && !answered.has(part.toolCallId)) {
          answered.add(part.toolCallId);
          return undefined;
        }
        const reason = answered.has(part.toolCallId)
          ? `a second result for tool call ${part.toolCallId}; kept as text`
          : `no tool call ${part.toolCallId} in the assistant message it answers; kept as text`;
        report.push(entryForPart(slot, partIndex, "tool-result-to-text", reason));
        return toolResultAsParts(part);
      });
    });
  };
}

function callIdsOf(slot: Slot): Set<string> {
  const ids = new Set<string>();
  for (const part of slot.message.parts) if (part.type === "tool_call") ids.add(part.id);
  return ids;
}
