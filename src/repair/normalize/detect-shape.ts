import { FORMATS, type FormatId, PARLEY_FORMAT } from "../../formats/registry.js";

/** The history entry shapes `normalize` reads: a format's messages, or one of the shapes around them. */
export type EntryShape = FormatId | "plain" | "orchestrator" | "claude-code";

/** Keys every Claude Code session record carries one of (`summary` lines have only `leafUuid`). */
const claudeCodeKeys = ["uuid", "parentUuid", "leafUuid", "sessionId", "messageId"];

/** The formats whose marks are looked for, other formats before Parley's own (which is what is left). */
const BY_MARKS = [
  ...FORMATS.filter((format) => format.id !== PARLEY_FORMAT),
  ...FORMATS.filter((format) => format.id === PARLEY_FORMAT),
];

export type Detected = { shape: EntryShape } | { error: string };

/**
 * Which shape an entry has, from its keys alone, so that one array may mix them. A message is in the format
 * whose marks it carries (OpenAI's `tool_calls` or `tool` role, Anthropic's `tool_use` block...); a
 * `{role, content}` entry without any fits every API and means the same in each: it is read as Anthropic, or
 * as plain when it carries a `timestamp`.
 */
export function detectShape(entry: unknown): Detected {
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
    return {
      error: `expected an object, got ${entry === null ? "null" : Array.isArray(entry) ? "an array" : typeof entry}`,
    };
  }
  const record = entry as Record<string, unknown>;
  if (typeof record.type === "string" && !("role" in record) && claudeCodeKeys.some((key) => key in record))
    return { shape: "claude-code" };
  // A format's own marks first: some of its entries have no role (a Responses call or its output).
  const marked = BY_MARKS.find((format) => format.history.recognizes?.(record));
  if (marked !== undefined) return { shape: marked.id };
  if ("input" in record && !("role" in record)) return { shape: "orchestrator" };
  if (!("role" in record)) {
    return {
      error:
        "no `role` (a message), item `type` (a Responses item), `input` (an orchestrator entry) or `type`+`uuid` (a Claude Code record)",
    };
  }
  if (typeof record.role !== "string") return { error: "`role` must be a string" };
  if (typeof record.content === "string" || Array.isArray(record.content))
    return { shape: "timestamp" in record ? "plain" : PARLEY_FORMAT };
  return { error: "`content` must be a string or an array of blocks" };
}
