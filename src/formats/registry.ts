import type { WireFormat } from "../core/index.js";
import type { FormatAdapter } from "./adapter.js";
import { anthropicAdapter } from "./anthropic/adapter.js";
import { geminiAdapter } from "./gemini/adapter.js";
import { openaiChatAdapter } from "./openai-chat/adapter.js";
import { responsesAdapter } from "./openai-responses/adapter.js";

/**
 * Every API format Parley speaks, by id: a format is one line here. The ids are those of the CLI, the
 * stored data and `WireFormat`, which this list must match key for key (a mismatch does not compile).
 */
const ADAPTERS: { readonly [Id in WireFormat]: FormatAdapter<Id> } = {
  anthropic: anthropicAdapter,
  openai: openaiChatAdapter,
  responses: responsesAdapter,
  gemini: geminiAdapter,
};

export type FormatId = WireFormat;

/** The format of Parley's own routes (conversations, health, a path no route has): Anthropic's. */
export const PARLEY_FORMAT: FormatId = "anthropic";

/** The formats in registration order. */
export const FORMATS: readonly FormatAdapter[] = Object.values(ADAPTERS);

export const FORMAT_IDS: readonly FormatId[] = FORMATS.map((adapter) => adapter.id);

/** The provider `type`s the configuration takes. */
export const UPSTREAM_TYPES: readonly string[] = FORMATS.map((adapter) => adapter.upstream.type);

export function formatAdapter(id: FormatId): FormatAdapter {
  return ADAPTERS[id];
}

/** The format of an id given as text (a flag, a query parameter), or undefined. */
export function findFormat(id: string): FormatAdapter | undefined {
  return Object.hasOwn(ADAPTERS, id) ? ADAPTERS[id as FormatId] : undefined;
}

/** The format whose providers have this configuration `type`, or undefined. */
export function findUpstreamType(type: string): FormatAdapter | undefined {
  return FORMATS.find((adapter) => adapter.upstream.type === type);
}

/** `a, b or c`, for messages that list the choices. */
export function orList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}
