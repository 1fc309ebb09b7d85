import type { ToolCallPart } from "../core/index.js";
import { entryForPart, mapSlots, type Pass, rewriteParts } from "./history.js";
import { answerOwners, type ZoneRule } from "./tool-zones.js";

/**
 * An API with a pattern for tool ids refuses an id outside it (Anthropic's `^[a-zA-Z0-9_-]+$` and Kimi's
 * `functions.get_weather:0`, after a switch of provider mid-session) and an id used twice ("`tool_use` ids
 * must be unique"). Such a call gets a new id (its characters outside `[a-zA-Z0-9_-]` become `_`, then a `_2`,
 * `_3`... suffix until it is unused), and the results that answer it follow, in order: the first result for a
 * repeated id answers the first call that had it. Nothing else changes; every rename is reported.
 */
export const renameToolIds =
  (pattern: RegExp, rule: ZoneRule): Pass =>
  (slots, report) => {
    // Valid ids anywhere in the history keep their claim: no rename may take one.
    const reserved = new Set<string>();
    for (const slot of slots) {
      for (const part of slot.message.parts)
        if (part.type === "tool_call" && pattern.test(part.id)) reserved.add(part.id);
    }
    const owners = answerOwners(
      slots.map((slot) => slot.message.role),
      rule,
    );
    const seen = new Set<string>();
    /** Per assistant message: each original id -> the ids its calls now have, in call order. */
    const callsByOwner = new Map<number, Map<string, string[]>>();
    return mapSlots(slots, (slot, index) => {
      if (slot.message.role === "assistant") {
        const calls = new Map<string, string[]>();
        callsByOwner.set(index, calls);
        return rewriteParts(slot, (part, partIndex) => {
          if (part.type !== "tool_call") return undefined;
          const id = newIdFor(part, pattern, seen, reserved);
          seen.add(id);
          const list = calls.get(part.id);
          if (list) list.push(id);
          else calls.set(part.id, [id]);
          if (id === part.id) return undefined;
          const why = pattern.test(part.id) ? "is used by an earlier call" : "has characters the API refuses";
          report.push(
            entryForPart(slot, partIndex, "renamed-tool-call-id", `tool call id '${part.id}' ${why}; now '${id}'`),
          );
          return [{ ...part, id }];
        });
      }
      const calls = callsByOwner.get(owners[index]!);
      if (slot.message.role !== "user" || calls === undefined) return slot;
      return rewriteParts(slot, (part, partIndex) => {
        if (part.type !== "tool_result") return undefined;
        const id = calls.get(part.toolCallId)?.shift();
        if (id === undefined || id === part.toolCallId) return undefined;
        const reason = `follows its tool call, renamed from '${part.toolCallId}' to '${id}'`;
        report.push(entryForPart(slot, partIndex, "renamed-tool-result-id", reason));
        return [{ ...part, toolCallId: id }];
      });
    });
  };

function newIdFor(
  part: ToolCallPart,
  pattern: RegExp,
  seen: ReadonlySet<string>,
  reserved: ReadonlySet<string>,
): string {
  const valid = pattern.test(part.id);
  if (valid && !seen.has(part.id)) return part.id;
  const base = valid ? part.id : part.id.replace(/[^a-zA-Z0-9_-]/g, "_") || "toolu";
  // Taken: by a call already seen, or by a valid id a later call still holds.
  const taken = (id: string) => seen.has(id) || (reserved.has(id) && id !== part.id);
  let candidate = base;
  for (let suffix = 2; taken(candidate); suffix++) candidate = `${base}_${suffix}`;
  return candidate;
}
