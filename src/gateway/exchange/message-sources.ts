import type { WireFormat } from "../../core/index.js";
import type { AppendOptions } from "../../store/conversations/conversation-store.js";
import { topLevelArrayElements } from "../../text/json-splice.js";

/**
 * What to store beside the `messages` of a client's body: each message's JSON text as the client sent it, so
 * that the conversation reads back byte for byte (invariant 12). Nothing when the elements cannot be told apart
 * (then the messages are stored without their text, and read back converted).
 */
export function messageSources(format: WireFormat, bodyText: string, count: number): AppendOptions {
  const elements = topLevelArrayElements(bodyText, "messages");
  if (elements === undefined || elements.length !== count) return {};
  return { sources: elements.map((json) => ({ format, json })) };
}
