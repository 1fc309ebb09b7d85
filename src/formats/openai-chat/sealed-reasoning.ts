import {
  decodeOriginSignature,
  encodeOriginSignature,
  isOriginSignature,
  type ThinkingPart,
} from "../../core/index.js";
import type { OpenAIReasoningDetail } from "./wire-types.js";

/**
 * Reasoning another API sealed (a Responses provider's `encrypted_content`) has no field of its own in Chat
 * Completions. A Chat client gets it as a `reasoning_details` item (OpenRouter's convention, which clients keep
 * and send back) whose signature is Parley's origin envelope; when it comes back, the envelope says where the
 * reasoning may go, and its own provider gets it back unmodified.
 */
export const SEALED_DETAIL_FORMAT = "parley.v1";

/** The detail a client gets for a thinking part another API sealed, or undefined for any other thinking. */
export function sealedDetail(part: ThinkingPart, index: number): OpenAIReasoningDetail | undefined {
  const origin = part.origin ?? decodeOriginSignature(part.signature);
  if (origin?.format !== "responses") return undefined;
  const signature =
    part.signature !== undefined && isOriginSignature(part.signature) ? part.signature : encodeOriginSignature(origin);
  return { type: "reasoning.text", text: part.thinking, signature, format: SEALED_DETAIL_FORMAT, index };
}

/** The thinking parts a client's `reasoning_details` hold when they are all sealed details Parley gave it. */
export function sealedThinking(details: readonly unknown[]): ThinkingPart[] | undefined {
  if (details.length === 0) return undefined;
  const parts: ThinkingPart[] = [];
  for (const item of details) {
    const detail = item as OpenAIReasoningDetail | null;
    if (detail?.format !== SEALED_DETAIL_FORMAT || typeof detail.text !== "string") return undefined;
    const origin = typeof detail.signature === "string" ? decodeOriginSignature(detail.signature) : undefined;
    if (origin === undefined) return undefined;
    parts.push({ type: "thinking", thinking: detail.text, signature: detail.signature!, origin });
  }
  return parts;
}
