import type { Message } from "../core/index.js";
import { alternateRoles } from "./alternate-roles.js";
import { closeOrphanedToolCalls } from "./close-orphaned-tool-calls.js";
import { dropEmpty } from "./drop-empty.js";
import { foreignThinkingToText } from "./foreign-thinking-to-text.js";
import type { Pass, RepairEntry, RepairTarget, Violation } from "./history.js";
import { toSlots } from "./history.js";
import { mergeConsecutiveRoles } from "./merge-consecutive-roles.js";
import { misplacedPartsToText } from "./misplaced-parts-to-text.js";
import { moveToolResultsFirst } from "./move-tool-results-first.js";
import { orphanToolResultsToText } from "./orphan-tool-results-to-text.js";
import { otherBindingReasoningToText } from "./other-binding-reasoning-to-text.js";
import { reasoningOnToolTurns } from "./reasoning-on-tool-turns.js";
import { reasoningToText } from "./reasoning-to-text.js";
import { renameToolIds } from "./rename-tool-ids.js";
import { trimFinalAssistantWhitespace } from "./trim-final-assistant-whitespace.js";
import { validateAnthropic } from "./validate-anthropic.js";
import { validateOpenAI } from "./validate-openai.js";

export type { RepairEntry, RepairTarget, Violation } from "./history.js";

/**
 * The passes the target's rules call for, in order. The order matters: thinking and misplaced parts become
 * text first (so what is empty is known), empty content goes before merging (so its neighbours can meet),
 * results are sorted out against merged messages, and the last passes add only what the API still misses.
 */
function passesFor(target: RepairTarget): Pass[] {
  const zone = target.toolResultZone;
  const passes: Pass[] = [];
  if (target.reasoningAsText === true) passes.push(reasoningToText);
  else if (target.provider !== undefined && target.binding !== undefined)
    passes.push(otherBindingReasoningToText(target.provider, target.binding));
  if (target.thinkingSignedBy !== undefined) passes.push(foreignThinkingToText(target.thinkingSignedBy, target));
  passes.push(misplacedPartsToText, dropEmpty(target.emptiness));
  if (target.alternatingRoles) passes.push(mergeConsecutiveRoles);
  if (target.toolIdPattern !== undefined) passes.push(renameToolIds(target.toolIdPattern, zone));
  passes.push(orphanToolResultsToText(zone), closeOrphanedToolCalls(zone));
  if (target.toolResultsFirst) {
    passes.push(moveToolResultsFirst(zone));
    // Results gathered from several messages can leave one with nothing in it (its other content was empty).
    if (zone === "until-next-assistant") passes.push(dropEmpty(target.emptiness));
  }
  if (target.alternatingRoles) passes.push(alternateRoles);
  if (target.noTrailingWhitespaceAtEnd) passes.push(trimFinalAssistantWhitespace);
  if (target.reasoningOnToolCallTurns) passes.push(reasoningOnToolTurns);
  return passes;
}

/**
 * Makes a history acceptable to the target API. Pure: the input is not modified, unchanged messages and
 * parts come back as the same objects (so a valid history comes back identical, with an empty report), and
 * every change is one report entry naming the input message it touched. Nothing is dropped but empty
 * content; the thinking and redacted thinking Anthropic signed are never altered.
 */
export function repair(messages: Message[], target: RepairTarget): { messages: Message[]; report: RepairEntry[] } {
  const report: RepairEntry[] = [];
  let slots = toSlots(messages);
  for (const pass of passesFor(target)) slots = pass(slots, report);
  if (report.length === 0) return { messages, report };
  // Passes report in pass order; a reader wants history order (stable: within a message, pass order).
  report.sort((a, b) => a.messageIndex - b.messageIndex);
  return { messages: slots.map((slot) => slot.message), report };
}

/**
 * Every rule of the target API the history breaks; empty when `repair` would change nothing. The zone rule
 * says how calls and results are checked (message by message, or zone by zone), and in whose words.
 */
export function validateFor(messages: readonly Message[], target: RepairTarget): Violation[] {
  return target.toolResultZone === "next-message"
    ? validateAnthropic(messages, target)
    : validateOpenAI(messages, target);
}
