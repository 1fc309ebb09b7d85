import type { Part, ToolResultPart } from "../core/index.js";
import { entryForPart, type Pass, partSourcesOf, type Slot, syntheticSlot, withParts } from "./history.js";
import { answerOwners, answerZones, type ZoneRule } from "./tool-zones.js";

/** What a synthetic result says, for the model and for a person reading the history. */
export const INTERRUPTED_RESULT_TEXT =
  "The tool call was interrupted: no result was recorded before the conversation went on.";

/**
 * Every tool call needs a result before the next assistant message (Anthropic: in the very next message;
 * OpenAI: "An assistant message with 'tool_calls' must be followed by tool messages responding to each
 * 'tool_call_id'"). A call left without one (the user interrupted it, the client crashed, the stream was cut)
 * gets a synthetic `is_error` result saying it was interrupted, placed where the API expects it: after the
 * results already at the front of the next user message, or in a new user message right after the call.
 */
export function closeOrphanedToolCalls(rule: ZoneRule): Pass {
  return (slots, report) => {
    const owners = answerOwners(
      slots.map((slot) => slot.message.role),
      rule,
    );
    const zones = answerZones(owners);
    const replaced = new Map<number, Slot>();
    const insertedAfter = new Map<number, Slot>();
    slots.forEach((slot, index) => {
      if (slot.message.role !== "assistant") return;
      const zone = zones.get(index) ?? [];
      const answered = new Set<string>();
      for (const userIndex of zone) {
        for (const part of slots[userIndex]!.message.parts)
          if (part.type === "tool_result") answered.add(part.toolCallId);
      }
      const results: ToolResultPart[] = [];
      slot.message.parts.forEach((part, partIndex) => {
        if (part.type !== "tool_call" || answered.has(part.id)) return;
        answered.add(part.id);
        results.push({ type: "tool_result", toolCallId: part.id, content: INTERRUPTED_RESULT_TEXT, isError: true });
        const reason = `tool call ${part.id} (${part.name}) has no result ${whereMissing(slots, index, zone)}; added an error result saying it was interrupted`;
        report.push(entryForPart(slot, partIndex, "added-interrupted-tool-result", reason));
      });
      if (results.length === 0) return;
      const first = zone[0];
      if (first === undefined) insertedAfter.set(index, syntheticSlot("user", results, slot.source));
      else replaced.set(first, insertResults(slots[first]!, results));
    });
    if (replaced.size === 0 && insertedAfter.size === 0) return slots;
    const out: Slot[] = [];
    slots.forEach((slot, index) => {
      out.push(replaced.get(index) ?? slot);
      const inserted = insertedAfter.get(index);
      if (inserted) out.push(inserted);
    });
    return out;
  };
}

function whereMissing(slots: Slot[], assistantIndex: number, zone: number[]): string {
  if (zone.length > 0) return "in the user message that follows it (the user interrupted the tool flow)";
  for (let index = assistantIndex + 1; index < slots.length; index++) {
    if (slots[index]!.message.role !== "system") return "before the next assistant message";
  }
  return "and the history ends after it";
}

/** Puts the results after the tool results already leading the message. */
function insertResults(slot: Slot, results: ToolResultPart[]): Slot {
  const { parts } = slot.message;
  let at = 0;
  while (parts[at]?.type === "tool_result") at++;
  const sources = partSourcesOf(slot);
  const newParts: Part[] = [...parts.slice(0, at), ...results, ...parts.slice(at)];
  return withParts(slot, newParts, [...sources.slice(0, at), ...results.map(() => undefined), ...sources.slice(at)]);
}
