import {
  decodeOriginSignature,
  encodeOriginSignature,
  type Part,
  type ReasoningOrigin,
  type RedactedThinkingPart,
  type ThinkingPart,
} from "../../core/index.js";

/**
 * Gemini's thought signatures and the core. A signature sits on a part of the model's answer (a function call, a
 * text part, an empty part of its own at the end of a stream), and must go back on exactly that part: Gemini
 * answers 400 for a function call of the current turn that lost its signature. In the core each signature is a
 * thinking part of its own, empty, whose origin records the provider (`p`), the signature (`e`, sealed: only that
 * provider gets it back) and the part it rode on (`i`): a call's id, `""` for an empty part of its own, absent for a
 * text part. The thinking part stands right before its call. A text part's stands right before its text where the
 * signature is known when the text begins (a whole answer; a stream whose event opening the text carries it), marked
 * `r: "next-text"`, so that an answer still ends with its text (Claude Code's `-p` result is its last block); where a
 * stream gives it later (on a later piece of the text), it stands right after its text, unmarked. Either way it goes
 * back on the same part.
 *
 * Going to a Gemini client, everything a maker must get back (another provider's signed or sealed reasoning, a
 * reasoning field a model needs on its tool turns, Gemini's own signatures) rides in the `thoughtSignature` of a part
 * the client keeps: Gemini CLI drops every `thought: true` part from the history it sends back. One rider goes as
 * its own envelope; several on one part go as a bundle, an envelope whose `d` lists them with the place each had
 * (`k`: how many kept parts came before it).
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
export function originOf(part: ThinkingPart): ReasoningOrigin | undefined {
  return decodeOriginSignature(part.signature) ?? part.origin;
}

/** A Gemini signature part (see above): its origin, or undefined for any other part. */
export function geminiSignature(part: Part): (ReasoningOrigin & { sealed: string }) | undefined {
  if (part.type !== "thinking" || part.thinking !== "") return undefined;
  const origin = originOf(part);
  if (origin?.format !== "gemini" || origin.sealed === undefined || origin.details !== undefined) return undefined;
  return origin as ReasoningOrigin & { sealed: string };
}

/**
 * Whether `provider` takes this signature back: one it made, or one whose maker is unknown (a Gemini client's own,
 * taken at its word). Another provider's, Vertex AI's for the Gemini API or the reverse included, is foreign.
 */
export function takesSignature(origin: ReasoningOrigin, provider: string | undefined): boolean {
  return origin.provider === undefined || origin.provider === provider;
}

/** A thought summary a Gemini model showed (no signature): its maker does not need it back. */
export function isThoughtSummary(part: Part): boolean {
  if (part.type !== "thinking" || part.signature !== undefined) return false;
  return part.origin?.format === "gemini" && part.origin.sealed === undefined;
}

/** A part that rides in a kept part's signature to a Gemini client, and the place it had. */
export interface Rider {
  /** How many kept parts (text, calls, media) of its message came before it. */
  k: number;
  part: ThinkingPart | RedactedThinkingPart;
}

/** The `thoughtSignature` a Gemini client gets for the riders of one kept part. */
export function riderSignature(riders: readonly Rider[]): string {
  const only = riders.length === 1 ? riders[0]!.part : undefined;
  if (only !== undefined && geminiSignature(only) !== undefined && only.type === "thinking" && only.signature)
    return only.signature;
  return encodeOriginSignature({
    format: "gemini",
    details: riders.map((rider) => ({ k: rider.k, part: rider.part })),
  });
}

/** What a signature a Gemini client sent stands for. */
export type ClientSignature =
  /** Google's skip value (Gemini CLI puts it on unsigned calls): it carries nothing. */
  | { kind: "skip" }
  /** One Gemini signature, Parley's envelope or the client's own. */
  | { kind: "signature"; part: ThinkingPart }
  /** Parts that rode on the kept part, each with its place. */
  | { kind: "bundle"; riders: Rider[] };

export function readClientSignature(signature: string, carrier: SignatureCarrier): ClientSignature {
  if (signature === SKIP_SIGNATURE) return { kind: "skip" };
  const origin = decodeOriginSignature(signature);
  if (origin === undefined) return { kind: "signature", part: signaturePart(signature, undefined, carrier) };
  if (origin.format === "gemini" && origin.details !== undefined)
    return { kind: "bundle", riders: origin.details.flatMap(readRider) };
  // An envelope of Parley's: it says where it came from and where it goes.
  return { kind: "signature", part: { type: "thinking", thinking: "", signature, origin } };
}

/** One entry of a bundle, if it is one (a damaged or forged entry is left out: it can at worst lose reasoning). */
function readRider(entry: unknown): Rider[] {
  if (entry === null || typeof entry !== "object") return [];
  const { k, part } = entry as { k?: unknown; part?: unknown };
  if (typeof k !== "number" || !Number.isInteger(k) || k < 0 || part === null || typeof part !== "object") return [];
  const candidate = part as Record<string, unknown>;
  if (candidate.type === "redacted_thinking" && typeof candidate.data === "string")
    return [{ k, part: candidate as unknown as RedactedThinkingPart }];
  if (candidate.type !== "thinking" || typeof candidate.thinking !== "string") return [];
  if (candidate.signature !== undefined && typeof candidate.signature !== "string") return [];
  const thinking = candidate as unknown as ThinkingPart;
  // Where both are, the envelope is what the maker gets back by: a stream gives a part's origin before the sealed
  // content it ends with, so the origin that rode beside the envelope may lack it.
  const envelope = decodeOriginSignature(thinking.signature);
  if (envelope === undefined || thinking.origin === undefined) return [{ k, part: thinking }];
  return [{ k, part: { ...thinking, origin: { ...thinking.origin, ...envelope } } }];
}
