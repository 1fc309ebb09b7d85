import type { Role } from "../core/index.js";
import type { ToolResultZone } from "../formats/adapter.js";

/**
 * Where tool results may answer tool calls: only the next message (system messages in place are skipped: the
 * gateway maps them; Anthropic's rule), or any user message (tool messages included) before the next
 * assistant message (OpenAI's).
 */
export type ZoneRule = ToolResultZone;

/**
 * For each message, the index of the assistant message whose tool calls it may answer, or -1: the user
 * messages with owner `i` form the "answer zone" of assistant message `i`.
 */
export function answerOwners(roles: readonly Role[], rule: ZoneRule): Int32Array {
  const owners = new Int32Array(roles.length).fill(-1);
  let lastNonSystem = -1;
  let openAssistant = -1;
  for (let index = 0; index < roles.length; index++) {
    const role = roles[index];
    if (role === "system") continue;
    if (role === "assistant") openAssistant = index;
    else if (rule === "until-next-assistant") owners[index] = openAssistant;
    else if (lastNonSystem >= 0 && roles[lastNonSystem] === "assistant") owners[index] = lastNonSystem;
    lastNonSystem = index;
  }
  return owners;
}

/** The answer zone of each assistant message that has one: assistant index -> user message indexes, in order. */
export function answerZones(owners: Int32Array): Map<number, number[]> {
  const zones = new Map<number, number[]>();
  for (let index = 0; index < owners.length; index++) {
    const owner = owners[index]!;
    if (owner < 0) continue;
    const zone = zones.get(owner);
    if (zone) zone.push(index);
    else zones.set(owner, [index]);
  }
  return zones;
}
