import { decodeOriginSignature, type ReasoningOrigin, type ThinkingPart } from "../core/index.js";
import { entryForPart, isBlank, mapSlots, type Pass, rewriteParts } from "./history.js";
import { thinkingAsText } from "./parts-as-text.js";

/**
 * Reasoning the target's provider sealed or signed under another key or deployment (`ReasoningOrigin.binding`: the
 * key rotated, or another key of the same provider name) would be refused as unverifiable (OpenAI's
 * `invalid_encrypted_content`, an invalid thinking signature), so it becomes its text before it is sent; what holds
 * no text is left out. Reasoning that is only text (a `reasoning_content` field) is any key's to read and goes back
 * as it came; an origin without a binding (an envelope older than bindings) is taken at its provider's word.
 */
export const otherBindingReasoningToText =
  (provider: string, binding: string): Pass =>
  (slots, report) =>
    mapSlots(slots, (slot) => {
      if (slot.message.role !== "assistant") return slot;
      return rewriteParts(slot, (part, partIndex) => {
        if (part.type !== "thinking" || !madeUnderOtherBinding(part, provider, binding)) return undefined;
        const why = `reasoning provider '${provider}' sealed under another key or deployment, which it would refuse`;
        if (isBlank(part.thinking)) {
          report.push(entryForPart(slot, partIndex, "removed-empty-thinking", `${why}, and without text: left out`));
          return [];
        }
        report.push(entryForPart(slot, partIndex, "thinking-to-text", `${why}: sent as text`));
        return [thinkingAsText(part)];
      });
    });

function madeUnderOtherBinding(part: ThinkingPart, provider: string, binding: string): boolean {
  // the envelope is the truth: a part's origin may be a copy made before its signature arrived
  const origin: ReasoningOrigin | undefined = decodeOriginSignature(part.signature) ?? part.origin;
  if (origin?.provider !== provider || origin.binding === undefined || origin.binding === binding) return false;
  return origin.sealed !== undefined || origin.signature !== undefined || origin.details !== undefined;
}
