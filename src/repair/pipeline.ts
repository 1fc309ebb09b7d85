import type { Message } from "../core/index.js";
import { alternateRoles } from "./alternate-roles.js";
import { anthropicToolIds } from "./anthropic-tool-ids.js";
import { closeOrphanedToolCalls } from "./close-orphaned-tool-calls.js";
import { dropEmpty } from "./drop-empty.js";
import { foreignThinkingToText } from "./foreign-thinking-to-text.js";
import type { Pass, RepairEntry, RepairTarget, Violation } from "./history.js";
import { toSlots } from "./history.js";
import { mergeConsecutiveRoles } from "./merge-consecutive-roles.js";
import { misplacedPartsToText } from "./misplaced-parts-to-text.js";
import { moveToolResultsFirst } from "./move-tool-results-first.js";
import { orphanToolResultsToText } from "./orphan-tool-results-to-text.js";
import { reasoningOnToolTurns } from "./reasoning-on-tool-turns.js";
import { trimFinalAssistantWhitespace } from "./trim-final-assistant-whitespace.js";
import { validateAnthropic } from "./validate-anthropic.js";
import { validateOpenAI } from "./validate-openai.js";

export type { OpenAIRepairCompat, RepairEntry, RepairTarget, Violation } from "./history.js";

/**
 * The passes per target, in order. The order matters: thinking and misplaced parts become text first (so
 * what is empty is known), empty content goes before merging (so its neighbours can meet), results are
 * sorted out against merged messages, and the last passes add only what the API still misses.
 */
function passesFor(target: RepairTarget): Pass[] {
  if (target.api === "anthropic") {
    return [
      foreignThinkingToText,
      misplacedPartsToText,
      dropEmpty("anthropic"),
      mergeConsecutiveRoles,
      anthropicToolIds,
      orphanToolResultsToText("next-message"),
      closeOrphanedToolCalls("next-message"),
      moveToolResultsFirst("next-message"),
      alternateRoles,
      trimFinalAssistantWhitespace,
    ];
  }
  const passes: Pass[] = [
    misplacedPartsToText,
    dropEmpty("openai"),
    orphanToolResultsToText("until-next-assistant"),
    closeOrphanedToolCalls("until-next-assistant"),
  ];
  // Moving results out can leave a message with nothing in it (its only other content was empty text).
  if (target.compat?.strictToolMessageOrder)
    passes.push(moveToolResultsFirst("until-next-assistant"), dropEmpty("openai"));
  if (target.compat?.requiresReasoningOnToolCallTurns) passes.push(reasoningOnToolTurns);
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

/** Every rule of the target API the history breaks; empty when `repair` would change nothing. */
export function validateFor(messages: readonly Message[], target: RepairTarget): Violation[] {
  return target.api === "anthropic"
    ? validateAnthropic(messages)
    : validateOpenAI(messages, target.compat, target.provider);
}
