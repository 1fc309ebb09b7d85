import { mergeExtra, type Part } from "../core/index.js";
import { type PartSource, type Pass, partSourcesOf, type Slot, startsWithThinking, withParts } from "./history.js";

/**
 * Anthropic wants user and assistant turns to alternate, so same-role neighbours are merged, parts in order.
 * One exception: an assistant message that starts with thinking is a separate answer. Merging it after
 * another assistant message would put other content before its thinking and break "the latest assistant
 * message's thinking cannot be modified" (and "a final assistant message must start with a thinking block");
 * such a pair is left apart here and separated by later passes (a tool result, or a user turn).
 * System messages in place are not merged and not moved.
 */
export const mergeConsecutiveRoles: Pass = (slots, report) => {
  let out: Slot[] | undefined;
  let runStart = 0;
  for (let index = 1; index <= slots.length; index++) {
    const slot = slots[index];
    const previous = slots[index - 1]!;
    if (slot && canMerge(previous, slot)) continue;
    if (index - runStart > 1) {
      out ??= slots.slice(0, runStart);
      out.push(mergeRun(slots.slice(runStart, index), report));
    } else {
      out?.push(previous);
    }
    runStart = index;
  }
  return out ?? slots;
};

function canMerge(previous: Slot, next: Slot): boolean {
  const role = next.message.role;
  if (role === "system" || previous.message.role !== role) return false;
  return !(role === "assistant" && startsWithThinking(next.message));
}

function mergeRun(run: Slot[], report: Parameters<Pass>[1]): Slot {
  const first = run[0]!;
  const parts: Part[] = [];
  const sources: Array<PartSource | undefined> = [];
  let extra = first.message.extra;
  for (const slot of run) {
    parts.push(...slot.message.parts);
    sources.push(...partSourcesOf(slot));
    if (slot === first) continue;
    extra = mergeExtra(extra, slot.message.extra);
    report.push({
      action: "merged-consecutive-messages",
      reason: `a ${slot.message.role} message follows another ${slot.message.role} message; merged into it, parts in order`,
      messageIndex: slot.source,
    });
  }
  const merged = withParts(first, parts, sources);
  if (extra) merged.message.extra = extra;
  return merged;
}
