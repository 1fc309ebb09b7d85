import { InvalidRequestError, type Message, type Role } from "../core/index.js";
import { upgradeLegacyExtras } from "./legacy-extra.js";

/**
 * How a message is stored: its parts one row each, as the exact text `JSON.stringify` gives, and the rest
 * of the message (role, `textShorthand`, `extra`, in their key order) as an envelope whose `parts` is
 * empty. Loading parses the envelope and puts the parts back in the same key, so a loaded message is
 * byte-equal to the appended one under `JSON.stringify`, whatever its keys.
 */
export interface EncodedMessage {
  role: Role;
  envelope: string;
  parts: string[];
}

const roles: ReadonlySet<string> = new Set<Role>(["system", "user", "assistant"]);

export function encodeMessage(message: Message, index: number): EncodedMessage {
  // The gateway validates wire input; this guards the store's own invariants against library callers.
  if (message === null || typeof message !== "object")
    throw new InvalidRequestError("must be a message", `messages[${index}]`);
  if (!roles.has(message.role)) {
    throw new InvalidRequestError(
      `role must be system, user or assistant, got ${JSON.stringify(message.role)}`,
      `messages[${index}].role`,
    );
  }
  if (!Array.isArray(message.parts))
    throw new InvalidRequestError("must be an array of parts", `messages[${index}].parts`);
  const parts = message.parts.map((part, position) => {
    if (part === null || typeof part !== "object" || typeof part.type !== "string") {
      throw new InvalidRequestError("must be a part with a string type", `messages[${index}].parts[${position}]`);
    }
    return JSON.stringify(part);
  });
  return { role: message.role, envelope: JSON.stringify({ ...message, parts: [] }), parts };
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
