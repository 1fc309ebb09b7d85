import {
  decodeOriginSignature,
  encodeOriginSignature,
  isOriginSignature,
  type ReasoningOrigin,
  type RedactedThinkingPart,
  type ThinkingPart,
} from "../../core/index.js";
import { keep, kept } from "./extra.js";
import type { ResponsesReasoningItem } from "./wire-types.js";

/**
 * Reasoning items and core thinking. Reasoning is origin-bound: what a Responses provider made (its item id and
 * `encrypted_content`) goes back to that provider only, unmodified. A Responses client gets every reasoning
 * Parley carries as a reasoning item whose `encrypted_content` is Parley's origin envelope (the provider's own
 * content sealed inside, an Anthropic signature or redacted block included, or the envelope another Anthropic-format
 * provider's signature already travels in), so that the item it echoes next turn tells where the reasoning may go.
 */

/** The readable text of an item: its raw reasoning (`reasoning_text`) when it has some, else its summary. */
export function reasoningText(item: ResponsesReasoningItem): { text: string; field: "summary" | "reasoning_text" } {
  const content = (item.content ?? []).filter((part) => part.type === "reasoning_text");
  if (content.length > 0) return { text: content.map((part) => part.text).join(""), field: "reasoning_text" };
  return { text: (item.summary ?? []).map((part) => part.text).join("\n\n"), field: "summary" };
}

/** A reasoning item a client sent (or a stored one) as core thinking; the item itself is kept for a Responses target. */
export function reasoningItemToCore(item: ResponsesReasoningItem): ThinkingPart | RedactedThinkingPart {
  const { text, field } = reasoningText(item);
  const encrypted = typeof item.encrypted_content === "string" ? item.encrypted_content : undefined;
  const envelope = decodeOriginSignature(encrypted);
  let part: ThinkingPart | RedactedThinkingPart;
  if (envelope?.format === "anthropic" && envelope.signature !== undefined) {
    // A signature only its provider can check, wrapped for it: the envelope goes on as the block's signature.
    part = { type: "thinking", thinking: text, signature: encrypted!, origin: envelope };
  } else if (envelope?.format === "anthropic") {
    const origin: ReasoningOrigin = { format: "anthropic" };
    if (envelope.provider !== undefined) origin.provider = envelope.provider;
    if (envelope.binding !== undefined) origin.binding = envelope.binding;
    if (envelope.field === "redacted_thinking" && envelope.sealed !== undefined) {
      part = { type: "redacted_thinking", data: envelope.sealed };
    } else {
      // Anthropic's own block, exactly: its text, its signature.
      part = { type: "thinking", thinking: text, origin };
      if (envelope.sealed !== undefined) part.signature = envelope.sealed;
    }
  } else if (envelope !== undefined) {
    part = { type: "thinking", thinking: text, signature: encrypted!, origin: envelope };
  } else {
    // Reasoning Parley did not hand out: no provider is known to have made it, so it goes back to none.
    const origin: ReasoningOrigin = { format: "responses", field };
    if (typeof item.id === "string") origin.id = item.id;
    if (encrypted !== undefined) origin.sealed = encrypted;
    part = { type: "thinking", thinking: text, origin };
  }
  return keep(part, { item });
}

/** The origin a thinking part carries: its own, or the one its envelope signature records. */
export function originOf(part: ThinkingPart): ReasoningOrigin | undefined {
  return part.origin ?? decodeOriginSignature(part.signature);
}

/**
 * The envelope a Responses client gets in `encrypted_content`: the part's own envelope signature as it is, an
 * Anthropic signature sealed in one, or one made from the part's origin.
 */
export function clientEnvelope(part: ThinkingPart | RedactedThinkingPart): string {
  if (part.type === "redacted_thinking")
    return encodeOriginSignature({ format: "anthropic", field: "redacted_thinking", sealed: part.data });
  if (part.signature !== undefined && isOriginSignature(part.signature)) return part.signature;
  if (part.signature !== undefined && part.signature !== "") {
    const origin: ReasoningOrigin = { format: "anthropic", field: "thinking", sealed: part.signature };
    if (part.origin?.provider !== undefined) origin.provider = part.origin.provider;
    if (part.origin?.binding !== undefined) origin.binding = part.origin.binding;
    return encodeOriginSignature(origin);
  }
  return encodeOriginSignature(part.origin ?? { format: "openai" });
}

/**
 * A thinking part as the reasoning item a Responses client gets: the item it came in when that item still reads
 * the same, else one carrying the text as its summary and the envelope as its `encrypted_content`.
 */
export function clientReasoningItem(
  part: ThinkingPart | RedactedThinkingPart,
  id: string,
  asMade = false,
): ResponsesReasoningItem {
  if (asMade && part.type === "thinking") {
    // The envelope is the truth: a streamed part's origin is a copy made before its sealed content arrived.
    const origin = decodeOriginSignature(part.signature) ?? part.origin;
    const own = origin?.sealed === undefined ? undefined : providerReasoningItem({ ...part, origin }, origin.provider);
    if (own !== undefined) return own;
  }
  const original = kept(part).item as ResponsesReasoningItem | undefined;
  if (original !== undefined && (part.type !== "thinking" || reasoningText(original).text === part.thinking))
    return original;
  const text = part.type === "thinking" ? part.thinking : "";
  return {
    id: clientReasoningId(part) ?? id,
    type: "reasoning",
    summary: text === "" ? [] : [{ type: "summary_text", text }],
    encrypted_content: clientEnvelope(part),
  };
}

/** A Responses provider's reasoning keeps its own item id on its way to a client. */
export function clientReasoningId(part: ThinkingPart | RedactedThinkingPart): string | undefined {
  if (part.type !== "thinking") return undefined;
  const origin = originOf(part);
  return origin?.format === "responses" ? origin.id : undefined;
}

/**
 * A thinking part for provider `provider`: the reasoning item that provider made, as it made it (id, sealed
 * content, the text in the field it came in), or undefined when the provider did not make it.
 */
export function providerReasoningItem(
  part: ThinkingPart,
  provider: string | undefined,
): ResponsesReasoningItem | undefined {
  const origin = originOf(part);
  if (origin?.format !== "responses" || origin.provider === undefined || origin.provider !== provider) return undefined;
  const item: ResponsesReasoningItem =
    origin.id === undefined ? { type: "reasoning", summary: [] } : { id: origin.id, type: "reasoning", summary: [] };
  const original = kept(part).item as ResponsesReasoningItem | undefined;
  if (origin.field === "reasoning_text") {
    item.content = [{ type: "reasoning_text", text: part.thinking }];
  } else if (original?.summary !== undefined && reasoningText(original).text === part.thinking) {
    item.summary = original.summary;
  } else if (part.thinking !== "") {
    item.summary = [{ type: "summary_text", text: part.thinking }];
  }
  if (origin.sealed !== undefined) item.encrypted_content = origin.sealed;
  return item;
}
