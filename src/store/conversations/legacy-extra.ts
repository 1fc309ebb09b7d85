import { type Extra, type Message, type Part, WIRE_FORMATS } from "../../core/index.js";

const FORMATS: ReadonlySet<string> = new Set(WIRE_FORMATS);

/**
 * Stores written before extras were keyed by the format they came from hold them flat (`{cache_control: ...}`).
 * Everything stored then came through Anthropic's codec (Parley's own routes speak Anthropic, and answers of other
 * APIs carried no extras), so a flat extra reads back as Anthropic's. A keyed one comes back as the same object.
 */
export function upgradeLegacyExtras(message: Message): Message {
  if (message.extra !== undefined) message.extra = keyed(message.extra);
  for (const part of message.parts) upgradePart(part);
  return message;
}

function upgradePart(part: Part): void {
  if (part === null || typeof part !== "object") return;
  if (part.type !== "opaque" && part.extra !== undefined) part.extra = keyed(part.extra);
  if (part.type === "tool_result" && Array.isArray(part.content)) for (const inner of part.content) upgradePart(inner);
}

function keyed(extra: Extra): Extra {
  for (const key in extra) {
    const value = (extra as Record<string, unknown>)[key];
    if (!FORMATS.has(key) || value === null || typeof value !== "object" || Array.isArray(value))
      return { anthropic: extra as Record<string, unknown> };
  }
  return extra;
}
