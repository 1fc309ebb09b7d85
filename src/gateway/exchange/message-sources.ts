import type { AppendOptions } from "../../store/types.js";
import { topLevelArrayElements } from "./json-splice.js";

/**
 * What to store beside the `messages` of an Anthropic body: each message's JSON text as the client sent it, so
 * that the conversation reads back byte for byte (invariant 12). Nothing when the elements cannot be told apart
 * (then the messages are stored without their text, and read back converted).
 */
export function anthropicMessageSources(bodyText: string, count: number): AppendOptions {
  const elements = topLevelArrayElements(bodyText, "messages");
  if (elements === undefined || elements.length !== count) return {};
  return { sources: elements.map((json) => ({ format: "anthropic", json })) };
}
