import type { Part } from "../core/index.js";
import { entryForPart, type PartSource, type Pass, partSourcesOf, type Slot, withParts } from "./history.js";
import { answerOwners, answerZones, type ZoneRule } from "./tool-zones.js";

/**
 * Anthropic: "In the user message containing tool results, the tool_result blocks must come FIRST in the
 * content array" (else "Did not find N tool_result block(s) at the beginning of this message"). OpenAI's
 * strict rule is the same seen from the wire: the tool messages come right after the assistant message with
 * `tool_calls`, before any user text. Results move to the front, in their order; the rest keeps its order.
 * With the OpenAI rule a zone may span several user messages: results move into the first one, and a message
 * left with nothing is removed (its content moved, nothing is lost).
 */
export function moveToolResultsFirst(rule: ZoneRule): Pass {
  return (slots, report) => {
    const zones = answerZones(
      answerOwners(
        slots.map((slot) => slot.message.role),
        rule,
      ),
    );
    const replaced = new Map<number, Slot | undefined>();
    for (const zone of zones.values()) {
      if (resultsLead(zone.map((index) => slots[index]!))) continue;
      const results: Part[] = [];
      const resultSources: Array<PartSource | undefined> = [];
      let seenOther = false;
      for (const index of zone) {
        const slot = slots[index]!;
        const sources = partSourcesOf(slot);
        slot.message.parts.forEach((part, partIndex) => {
          if (part.type !== "tool_result") {
            seenOther = true;
            return;
          }
          results.push(part);
          resultSources.push(sources[partIndex]);
          if (seenOther) {
            const reason =
              "tool results must come first, right after the assistant's tool calls; moved before the other content";
            report.push(entryForPart(slot, partIndex, "moved-tool-result-first", reason));
          }
        });
      }
      zone.forEach((index, position) => {
        const slot = slots[index]!;
        const sources = partSourcesOf(slot);
        const otherParts: Part[] = position === 0 ? [...results] : [];
        const otherSources = position === 0 ? [...resultSources] : [];
        slot.message.parts.forEach((part, partIndex) => {
          if (part.type === "tool_result") return;
          otherParts.push(part);
          otherSources.push(sources[partIndex]);
        });
        replaced.set(index, otherParts.length === 0 ? undefined : withParts(slot, otherParts, otherSources));
      });
    }
    if (replaced.size === 0) return slots;
    const out: Slot[] = [];
    slots.forEach((slot, index) => {
      if (!replaced.has(index)) out.push(slot);
      else {
        const kept = replaced.get(index);
        if (kept) out.push(kept);
      }
    });
    return out;
  };
}

/** True when, across the zone's messages in order, no tool result follows other content. */
function resultsLead(zone: Slot[]): boolean {
  let seenOther = false;
  for (const slot of zone) {
    for (const part of slot.message.parts) {
      if (part.type !== "tool_result") seenOther = true;
      else if (seenOther) return false;
    }
  }
  return true;
}
