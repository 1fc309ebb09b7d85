import type { ToolCallPart } from "../core/index.js";
import { entryForPart, mapSlots, type Pass, rewriteParts } from "./history.js";
import { answerOwners } from "./tool-zones.js";

/** Anthropic's pattern for `tool_use.id`; its 400 names it ("String should match pattern"). */
export const ANTHROPIC_TOOL_ID = /^[a-zA-Z0-9_-]+$/;

/**
 * Anthropic refuses a tool id outside `^[a-zA-Z0-9_-]+$` (Kimi's `functions.get_weather:0`, after a switch
 * of provider mid-session) and a `tool_use` id used twice ("`tool_use` ids must be unique"). Such a call gets
 * a new id (its characters outside the pattern become `_`, then a `_2`, `_3`... suffix until it is unused),
 * and the results in the message that answers it follow, in order: the first result for a repeated id
 * answers the first call that had it. Nothing else changes; every rename is reported.
 */
export const anthropicToolIds: Pass = (slots, report) => {
  // Valid ids anywhere in the history keep their claim: no rename may take one.
  const reserved = new Set<string>();
  for (const slot of slots) {
    for (const part of slot.message.parts)
      if (part.type === "tool_call" && ANTHROPIC_TOOL_ID.test(part.id)) reserved.add(part.id);
  }
  const owners = answerOwners(
    slots.map((slot) => slot.message.role),
    "next-message",
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
        const id = newIdFor(part, seen, reserved);
        seen.add(id);
        const list = calls.get(part.id);
        if (list) list.push(id);
        else calls.set(part.id, [id]);
        if (id === part.id) return undefined;
        const why = ANTHROPIC_TOOL_ID.test(part.id) ? "is used by an earlier call" : "has characters Anthropic refuses";
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

function newIdFor(part: ToolCallPart, seen: ReadonlySet<string>, reserved: ReadonlySet<string>): string {
  const valid = ANTHROPIC_TOOL_ID.test(part.id);
  if (valid && !seen.has(part.id)) return part.id;
  const base = valid ? part.id : part.id.replace(/[^a-zA-Z0-9_-]/g, "_") || "toolu";
  // Taken: by a call already seen, or by a valid id a later call still holds.
  const taken = (id: string) => seen.has(id) || (reserved.has(id) && id !== part.id);
  let candidate = base;
  for (let suffix = 2; taken(candidate); suffix++) candidate = `${base}_${suffix}`;
  return candidate;
}
