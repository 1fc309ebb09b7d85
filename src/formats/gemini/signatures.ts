import {
  clientSignaturePart,
  decodeOriginSignature,
  encodeOriginSignature,
  geminiSignature,
  type Part,
  type RedactedThinkingPart,
  type SignatureCarrier,
  type ThinkingPart,
} from "../../core/index.js";

/**
 * Gemini's thought signatures on the Gemini API's own side (how the core holds them: `src/core/thought-signatures.ts`).
 * Going to a Gemini client, everything a maker must get back (another provider's signed or sealed reasoning, a
 * reasoning field a model needs on its tool turns, Gemini's own signatures) rides in the `thoughtSignature` of a part
 * the client keeps: Gemini CLI drops every `thought: true` part from the history it sends back. One rider goes as
 * its own envelope; several on one part go as a bundle, an envelope whose `d` lists them with the place each had
 * (`k`: how many kept parts came before it).
 */

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
  const origin = decodeOriginSignature(signature);
  if (origin?.format === "gemini" && origin.details !== undefined)
    return { kind: "bundle", riders: origin.details.flatMap(readRider) };
  const part = clientSignaturePart(signature, carrier);
  return part === undefined ? { kind: "skip" } : { kind: "signature", part };
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
