// The history face of a format: a conversation's messages in this API.
// `adapter.ts` puts the faces together.
import type { Converted, LossyEntry, Message } from "../core/index.js";
import type { ReasoningMode } from "./reasoning-mode.js";
import type { ProviderSettings } from "./upstream-side.js";

export interface HistoryCodec {
  /**
   * Whether a message carries a mark only this format has (a role, a field, a block type): how `normalize` and
   * `parley repair` tell a history's format. Parley's own format needs none: it is what is left.
   */
  recognizes?(message: Record<string, unknown>): boolean;
  /** An array of this API's messages (paths name `messages[i]`) to core. */
  toCore(messages: unknown): HistoryRead;
  fromCore(messages: readonly Message[], options?: HistoryEncodeOptions): Converted<unknown[]>;
}

export interface HistoryRead {
  messages: Message[];
  lossy: LossyEntry[];
  /** Per core message, the wire messages it came from, where they are not one to one. */
  sources?: MessageSource[];
}

/** The wire message a core message started at, and the wire message each of its parts came from. */
export interface MessageSource {
  message: number;
  parts: number[];
}

export interface HistoryEncodeOptions {
  reasoning?: ReasoningMode;
  /** The provider whose quirks (and reasoning mode, when `reasoning` is absent) the history is written for. */
  provider?: ProviderSettings;
  /** Thinking this API did not sign goes out signed with its origin, for clients that drop unsigned thinking. */
  signOriginThinking?: boolean;
  /** The wire history the messages were read from: blocks carried unchanged go out as the very objects that came in. */
  original?: readonly unknown[];
}
