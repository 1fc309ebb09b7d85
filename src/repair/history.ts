import type { Message, Part, Role, ToolResultPart } from "../core/index.js";

/**
 * Every change a repair pass makes, each listed with its meaning in docs/repair-and-normalize.md ("Repair
 * actions"), which a test holds to this list.
 */
export const REPAIR_ACTIONS = [
  "added-interrupted-tool-result",
  "added-placeholder-reasoning",
  "inserted-user-turn",
  "merged-consecutive-messages",
  "moved-tool-result-first",
  "removed-empty-block",
  "removed-empty-message",
  "removed-empty-thinking",
  "renamed-tool-call-id",
  "renamed-tool-result-id",
  "thinking-to-text",
  "tool-call-to-text",
  "tool-result-to-text",
  "trimmed-final-whitespace",
] as const;

export type RepairAction = (typeof REPAIR_ACTIONS)[number];

/** One change `repair` made. `messageIndex` and `partIndex` point into the history that was given to it. */
export interface RepairEntry {
  /** A stable, kebab-case name of the change, e.g. `added-interrupted-tool-result`. */
  action: RepairAction;
  /** Why, for a person. */
  reason: string;
  messageIndex: number;
  partIndex?: number;
}

/** What a history must be for the target API: the rules, as data, that its format's adapter gives. */
export type { RepairTarget } from "../formats/adapter.js";

/** A rule of the target API the history breaks, in the API's own words where they are known. */
export interface Violation {
  /** e.g. `messages[5].content[3]`, indexes into the history that was checked. */
  path: string;
  message: string;
}

/** Where a part of the working history came from in the input. */
export interface PartSource {
  messageIndex: number;
  partIndex: number;
}

/**
 * A message on its way through the passes, with what it stands for in the input, so that every report entry
 * names an input index however many messages were merged, inserted or removed before it.
 */
export interface Slot {
  message: Message;
  /** The input message it is (for an inserted message, the one it was inserted for). */
  source: number;
  /** Per part, its input position (undefined for a part Parley made); absent while the parts are the input's own. */
  partSources?: Array<PartSource | undefined>;
}

/** A pass returns the very array it was given when it changes nothing. */
export type Pass = (slots: Slot[], report: RepairEntry[]) => Slot[];

export function sourceOfPart(slot: Slot, partIndex: number): { messageIndex: number; partIndex?: number } {
  if (slot.partSources === undefined) return { messageIndex: slot.source, partIndex };
  return slot.partSources[partIndex] ?? { messageIndex: slot.source };
}

export function partSourcesOf(slot: Slot): Array<PartSource | undefined> {
  return slot.partSources ?? slot.message.parts.map((_, partIndex) => ({ messageIndex: slot.source, partIndex }));
}

/** A report entry for a part of a slot, pointing at the input. */
export function entryForPart(slot: Slot, partIndex: number, action: RepairAction, reason: string): RepairEntry {
  const source = sourceOfPart(slot, partIndex);
  return source.partIndex === undefined
    ? { action, reason, messageIndex: source.messageIndex }
    : { action, reason, messageIndex: source.messageIndex, partIndex: source.partIndex };
}

/** A copy of the slot with new parts; the message keeps its other fields (the string shorthand only while it still fits). */
export function withParts(slot: Slot, parts: Part[], partSources: Array<PartSource | undefined>): Slot {
  const message: Message = { ...slot.message, parts };
  if (message.textShorthand && !(parts.length === 1 && parts[0]?.type === "text")) delete message.textShorthand;
  return { message, source: slot.source, partSources };
}

/** A message Parley adds (an interrupted-call result, a user turn between two assistant turns). */
export function syntheticSlot(role: Role, parts: Part[], source: number): Slot {
  return { message: { role, parts }, source, partSources: parts.map(() => undefined) };
}

export function toSlots(messages: readonly Message[]): Slot[] {
  return messages.map((message, source) => ({ message, source }));
}

export function hasToolCalls(message: Message): boolean {
  return message.parts.some((part) => part.type === "tool_call");
}

export function startsWithThinking(message: Message): boolean {
  const first = message.parts[0];
  return first?.type === "thinking" || first?.type === "redacted_thinking";
}

export function isBlank(text: string): boolean {
  return text.trim() === "";
}

/** What a tool result said, as text (its non-text content stays beside it as parts). */
export function toolResultText(part: ToolResultPart): string {
  if (typeof part.content === "string") return part.content;
  return part.content
    .filter((item) => item.type === "text")
    .map((item) => item.text)
    .join("\n");
}

/**
 * Rewrites some parts of a slot: `rewrite` returns undefined to keep a part as it is, or what replaces it
 * (nothing, to remove it). Replacements count as coming from the part they replace. Unchanged slots come
 * back as themselves.
 */
export function rewriteParts(slot: Slot, rewrite: (part: Part, partIndex: number) => Part[] | undefined): Slot {
  const { parts } = slot.message;
  let newParts: Part[] | undefined;
  let newSources: Array<PartSource | undefined> | undefined;
  for (let partIndex = 0; partIndex < parts.length; partIndex++) {
    const part = parts[partIndex]!;
    const replacement = rewrite(part, partIndex);
    if (replacement === undefined && newParts === undefined) continue;
    if (newParts === undefined || newSources === undefined) {
      newParts = parts.slice(0, partIndex);
      newSources = partSourcesOf(slot).slice(0, partIndex);
    }
    const source = slot.partSources ? slot.partSources[partIndex] : { messageIndex: slot.source, partIndex };
    for (const item of replacement ?? [part]) {
      newParts.push(item);
      newSources.push(source);
    }
  }
  return newParts && newSources ? withParts(slot, newParts, newSources) : slot;
}

/** Maps each slot; the same array comes back when every slot came back as itself. */
export function mapSlots(slots: Slot[], map: (slot: Slot, index: number) => Slot): Slot[] {
  let out: Slot[] | undefined;
  for (let index = 0; index < slots.length; index++) {
    const slot = slots[index]!;
    const mapped = map(slot, index);
    if (mapped !== slot && out === undefined) out = slots.slice(0, index);
    out?.push(mapped);
  }
  return out ?? slots;
}
