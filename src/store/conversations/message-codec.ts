import { checkMessage } from "../../core/check.js";
import { InvalidRequestError, type Message, type Role, type WireFormat } from "../../core/index.js";
import type { MessageSource, StoredMessage } from "./conversation-store.js";
import { upgradeLegacyExtras } from "./legacy-extra.js";

/**
 * How a message is stored: its parts one row each, as the exact text `JSON.stringify` gives, and the rest
 * of the message (role, `textShorthand`, `extra`, in their key order) as an envelope whose `parts` is
 * empty. Loading parses the envelope and puts the parts back in the same key, so a loaded message is
 * byte-equal to the appended one under `JSON.stringify`, whatever its keys. Beside them, the message as the
 * client sent it (`source`: its wire format and its own JSON text), kept as given, for the client's view.
 */
export interface EncodedMessage {
  role: Role;
  envelope: string;
  parts: string[];
  sourceFormat: WireFormat | null;
  source: string | null;
}

const wireFormats: ReadonlySet<string> = new Set<WireFormat>(["anthropic", "openai"]);

/** `encodeMessage` for each message, with its source (`sources[i]`) when there is one. */
export function encodeMessages(
  messages: readonly Message[],
  sources: ReadonlyArray<MessageSource | undefined> | undefined,
): EncodedMessage[] {
  if (sources !== undefined && sources.length !== messages.length) {
    throw new InvalidRequestError(
      `${sources.length} sources for ${messages.length} messages; give one per message (undefined where none)`,
      "sources",
    );
  }
  return messages.map((message, index) => encodeMessage(message, index, sources?.[index]));
}

export function encodeMessage(message: Message, index: number, source?: MessageSource): EncodedMessage {
  // The gateway validates wire input; this guards the store's own invariants against library callers.
  checkMessage(message, ["messages", index]);
  const parts = message.parts.map((part) => JSON.stringify(part));
  if (source !== undefined && (!wireFormats.has(source.format) || typeof source.json !== "string")) {
    throw new InvalidRequestError(
      "must be {format: anthropic or openai, json: the message's JSON text}",
      `sources[${index}]`,
    );
  }
  return {
    role: message.role,
    envelope: JSON.stringify({ ...message, parts: [] }),
    parts,
    sourceFormat: source?.format ?? null,
    source: source?.json ?? null,
  };
}

/** A stored row as the store gives it back; the source only when the message had one. */
export function storedMessage(
  seq: number,
  message: Message,
  complete: boolean,
  createdAt: string,
  sourceFormat: string | null,
  source: string | null,
): StoredMessage {
  const stored: StoredMessage = { seq, message, complete, createdAt };
  if (sourceFormat !== null && source !== null) stored.source = { format: sourceFormat as WireFormat, json: source };
  return stored;
}

export function emptyEnvelope(role: Role): string {
  return JSON.stringify({ role, parts: [] });
}

export function decodeMessage(envelope: string, parts: readonly string[]): Message {
  const message = JSON.parse(envelope) as Message;
  message.parts = parts.map((part) => JSON.parse(part));
  return upgradeLegacyExtras(message);
}

/** Like `decodeMessage`, with the parts given as one JSON array text (`[part,part,...]`). */
export function decodeMessageWithParts(envelope: string, partsArray: string): Message {
  const message = JSON.parse(envelope) as Message;
  message.parts = JSON.parse(partsArray);
  return upgradeLegacyExtras(message);
}
