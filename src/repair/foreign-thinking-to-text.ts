import { decodeOriginSignature, isOriginSignature, type ThinkingPart, type WireFormat } from "../core/index.js";
import { THINKING_SOURCES } from "../core/wire-format.js";
import { entryForPart, isBlank, mapSlots, type Pass, type RepairTarget, rewriteParts } from "./history.js";
import { thinkingAsText } from "./parts-as-text.js";

/**
 * An API with signed thinking (Anthropic) accepts back only thinking it signed itself. Thinking with no
 * signature (a stream cut before `signature_delta`) or from another format (Parley's origin envelope, or
 * another format's origin) would be answered with 400 "Invalid `signature` in `thinking` block", so it becomes
 * text: the model still reads it, nothing is dropped. Unsigned thinking with no text carries nothing and is
 * removed. Thinking the API signed and redacted thinking are never touched, in the last assistant message or
 * anywhere.
 *
 * A provider of that API whose signatures only it can check (`owner`: DeepSeek's, vLLM's) takes back only the
 * thinking in an envelope naming it, which carries its own signature; Anthropic's signatures, and every other
 * provider's, are foreign to it.
 */
export function isForeignThinking(part: ThinkingPart, signer: WireFormat, owner?: string): boolean {
  if (owner === undefined)
    return (
      !part.signature ||
      isOriginSignature(part.signature) ||
      (part.origin !== undefined && part.origin.format !== signer)
    );
  if (!part.signature || !isOriginSignature(part.signature)) return true;
  // the envelope is the truth: a part's origin may be a copy made before its signature arrived
  const origin = part.origin?.signature !== undefined ? part.origin : decodeOriginSignature(part.signature);
  return origin?.format !== signer || origin.provider !== owner || origin.signature === undefined;
}

function whyForeign(part: ThinkingPart, owner: string | undefined): string {
  const origin = part.origin ?? decodeOriginSignature(part.signature);
  const source = origin === undefined ? undefined : THINKING_SOURCES[origin.format];
  if (!part.signature && source?.unsigned !== true)
    return "thinking without a signature (a stream cut before it was signed)";
  if (owner !== undefined && part.signature !== undefined && !isOriginSignature(part.signature))
    return "thinking signed by Anthropic";
  const provider = origin?.provider;
  const model = source?.model ?? THINKING_SOURCES.openai.model;
  return `thinking produced by ${provider ? `provider '${provider}'` : model}`;
}

export const foreignThinkingToText =
  (signer: WireFormat, target: Pick<RepairTarget, "signatureOwner" | "provider">): Pass =>
  (slots, report) =>
    mapSlots(slots, (slot) => {
      if (slot.message.role !== "assistant") return slot;
      const owner = target.signatureOwner;
      const where = owner === undefined ? "Anthropic" : `provider '${target.provider ?? owner}'`;
      return rewriteParts(slot, (part, partIndex) => {
        if (part.type !== "thinking" || !isForeignThinking(part, signer, owner)) return undefined;
        if (isBlank(part.thinking)) {
          const reason = `${whyForeign(part, owner)} and without text: ${where} cannot take it and it holds nothing to keep`;
          report.push(entryForPart(slot, partIndex, "removed-empty-thinking", reason));
          return [];
        }
        const reason = `${whyForeign(part, owner)} cannot go to ${where} as a thinking block; kept as text`;
        report.push(entryForPart(slot, partIndex, "thinking-to-text", reason));
        return [thinkingAsText(part)];
      });
    });
