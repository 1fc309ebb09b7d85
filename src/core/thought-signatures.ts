import type { Part, ReasoningOrigin, ThinkingPart } from "./parts.js";
import { decodeOriginSignature, encodeOriginSignature } from "./reasoning-origin.js";

/**
 * Gemini's thought signatures in the core, whichever API carried them: Google's `generateContent` (a part's
 * `thoughtSignature`) or its OpenAI-compatible endpoints (`extra_content.google.thought_signature` on a tool call or
 * on the message; Vertex AI's under `vertex`). A signature sits on a part of the model's answer (a function call, a
 * text, an empty part of its own at the end of a stream) and must go back on exactly that part: Gemini answers 400
 * for a function call of the current turn that lost its signature.
 *
 * In the core each signature is a thinking part of its own, empty, whose origin says what it is (`format: "gemini"`,
 * Gemini's signature, whichever API brought it), who made it (`p`, the provider: Gemini API and Vertex AI are distinct
 * makers, and so is each configured provider), the signature itself (`e`, sealed: only its maker gets it back) and the
 * part it rode on (`i`): a call's id, `""` for an empty part of its own, absent for a text. The thinking part stands
 * right before its call. A text's stands right before its text where the signature is known when the text begins,
 * marked `r: "next-text"`, so that an answer still ends with its text (Claude Code's `-p` result is its last block);
 * where a stream gives it later it stands right after its text, unmarked. Either way it goes back on the same part.
 */

/** The value Google documents for a function call whose signature is unknown (a history from elsewhere). */
export const SKIP_SIGNATURE = "skip_thought_signature_validator";

/** Where a signature rode: a call (its id), an empty part of its own, the text part before it, or the one after. */
export type SignatureCarrier = { call: string } | "own-part" | "text" | "next-text";

/** The `field` (`r`) of a text part's signature that stands before its text. */
export const NEXT_TEXT = "next-text";

/** A signature Gemini put on a part, as the core thinking part that carries it. */
export function signaturePart(
  signature: string,
  provider: string | undefined,
  carrier: SignatureCarrier,
): ThinkingPart {
  const origin: ReasoningOrigin = { format: "gemini" };
  if (provider !== undefined) origin.provider = provider;
  origin.sealed = signature;
  if (carrier === "own-part") origin.id = "";
  else if (carrier === "next-text") origin.field = NEXT_TEXT;
  else if (carrier !== "text") origin.id = carrier.call;
  return { type: "thinking", thinking: "", signature: encodeOriginSignature(origin), origin: { ...origin } };
}

/** The origin a thinking part records: its envelope's when it has one, else its own. */
export function recordedOrigin(part: ThinkingPart): ReasoningOrigin | undefined {
  return decodeOriginSignature(part.signature) ?? part.origin;
}

/** A thought signature part (see above): its origin, or undefined for any other part. */
export function geminiSignature(part: Part): (ReasoningOrigin & { sealed: string }) | undefined {
  if (part.type !== "thinking" || part.thinking !== "") return undefined;
  const origin = recordedOrigin(part);
  if (origin?.format !== "gemini" || origin.sealed === undefined || origin.details !== undefined) return undefined;
  return origin as ReasoningOrigin & { sealed: string };
}

/** Whether a thought signature part rode on a text (before or after it) or on a part of its own, not on a call. */
export function ridesOnText(signature: ReasoningOrigin): boolean {
  return signature.id === undefined || signature.id === "";
}

/**
 * Whether `provider` takes this signature back: one it made, or one whose maker is unknown (a client's own, taken at
 * its word). Another provider's, Vertex AI's for the Gemini API or the reverse included, is foreign.
 */
export function takesSignature(origin: ReasoningOrigin, provider: string | undefined): boolean {
  return origin.provider === undefined || origin.provider === provider;
}

/**
 * A signature a client sent back on a part (the carrier): nothing for Google's skip value, the part Parley gave it
 * for one of its envelopes (which says where it came from and where it goes), else a signature of unknown maker.
 */
export function clientSignaturePart(signature: string, carrier: SignatureCarrier): ThinkingPart | undefined {
  if (signature === SKIP_SIGNATURE) return undefined;
  const origin = decodeOriginSignature(signature);
  if (origin === undefined) return signaturePart(signature, undefined, carrier);
  return { type: "thinking", thinking: "", signature, origin };
}
