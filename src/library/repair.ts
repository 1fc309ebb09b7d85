/** `parley/repair`: a history made acceptable to an API, checked against its rules, or read from mixed shapes. */
import { checkMessages } from "../core/check.js";
import { InvalidRequestError, type Message } from "../core/index.js";
import type { RepairTarget } from "../formats/adapter.js";
import type { RepairEntry, Violation } from "../repair/history.js";
import { type NormalizeEntry, normalize as normalizeEntries } from "../repair/normalize/index.js";
import { repair as repairHistory, validateFor } from "../repair/pipeline.js";

export type { RepairTarget } from "../formats/adapter.js";
export type { RepairEntry, Violation } from "../repair/history.js";
export type { EntryShape, NormalizeEntry } from "../repair/normalize/index.js";

const ZONES: ReadonlySet<unknown> = new Set(["next-message", "until-next-assistant"]);

function checkTarget(target: unknown): RepairTarget {
  const zone = (target as { toolResultZone?: unknown } | null)?.toolResultZone;
  if (target === null || typeof target !== "object" || !ZONES.has(zone)) {
    throw new InvalidRequestError(
      "must be a repair target: a format's repair target, e.g. anthropicRepairTarget() or openaiRepairTarget({ preset: 'deepseek' })",
      "target",
    );
  }
  return target as RepairTarget;
}

/**
 * Makes a history of canonical messages acceptable to the target API (`anthropicRepairTarget()`, or a preset's:
 * `openaiRepairTarget({ preset: "kimi" })`): the input is not modified, a valid history comes back as it was with
 * an empty report, and every change is one report entry naming the message it touched. Messages are checked first:
 * wire messages (with `content`) are an `InvalidRequestError` naming the field, never a `TypeError`.
 */
export function repair(
  messages: readonly Message[],
  target: RepairTarget,
): { messages: Message[]; report: RepairEntry[] } {
  return repairHistory(checkMessages(messages), checkTarget(target));
}

/** Every rule of the target API the history breaks; empty when `repair` would change nothing. */
export function validate(messages: readonly Message[], target: RepairTarget): Violation[] {
  return validateFor(checkMessages(messages), checkTarget(target));
}

/**
 * A history whose entries come in mixed shapes (Anthropic and OpenAI messages, plain `{role, content, timestamp}`,
 * orchestrator `{input, context, output}`, Claude Code session records) as canonical messages, with one report entry
 * per input entry saying which shape it had. An entry that cannot be read is an `InvalidRequestError` naming
 * `entries[i]`.
 */
export function normalize(entries: readonly unknown[]): { messages: Message[]; report: NormalizeEntry[] } {
  if (!Array.isArray(entries))
    throw new InvalidRequestError(
      `must be an array of history entries, got ${entries === null ? "null" : typeof entries}`,
      "entries",
    );
  return normalizeEntries(entries);
}
