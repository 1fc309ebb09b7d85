import { decodeOriginSignature, isOriginSignature, type ThinkingPart, type WireFormat } from "../core/index.js";
import { entryForPart, isBlank, mapSlots, type Pass, rewriteParts } from "./history.js";
import { thinkingAsText } from "./parts-as-text.js";

/**
 * An API with signed thinking (Anthropic) accepts back only thinking it signed itself. Thinking with no
 * signature (a stream cut before `signature_delta`) or from another format (Parley's origin envelope, or
 * another format's origin) would be answered with 400 "Invalid `signature` in `thinking` block", so it becomes
 * text: the model still reads it, nothing is dropped. Unsigned thinking with no text carries nothing and is
 * removed. Thinking the API signed and redacted thinking are never touched, in the last assistant message or
 * anywhere.
 */
export function isForeignThinking(part: ThinkingPart, signer: WireFormat): boolean {
  return (
    !part.signature || isOriginSignature(part.signature) || (part.origin !== undefined && part.origin.format !== signer)
  );
}

function whyForeign(part: ThinkingPart): string {
  if (!part.signature) return "thinking without a signature (a stream cut before it was signed)";
  const provider = (part.origin ?? decodeOriginSignature(part.signature))?.provider;
  return `thinking produced by ${provider ? `provider '${provider}'` : "an OpenAI-compatible model"}`;
}

export const foreignThinkingToText =
  (signer: WireFormat): Pass =>
  (slots, report) =>
    mapSlots(slots, (slot) => {
      if (slot.message.role !== "assistant") return slot;
      return rewriteParts(slot, (part, partIndex) => {
        if (part.type !== "thinking" || !isForeignThinking(part, signer)) return undefined;
        if (isBlank(part.thinking)) {
          const reason = `${whyForeign(part)} and without text: Anthropic cannot take it and it holds nothing to keep`;
          report.push(entryForPart(slot, partIndex, "removed-empty-thinking", reason));
          return [];
        }
        const reason = `${whyForeign(part)} cannot go to Anthropic as a thinking block; kept as text`;
        report.push(entryForPart(slot, partIndex, "thinking-to-text", reason));
        return [thinkingAsText(part)];
      });
    });
