import { type ReasoningOrigin, WIRE_FORMATS, type WireFormat } from "./parts.js";
import { base64ToUtf8, utf8ToBase64 } from "./portable.js";

/**
 * Thinking produced by an OpenAI-compatible model has no Anthropic signature, yet Anthropic clients (Claude
 * Code among them) drop thinking blocks that lack one. Parley therefore signs such blocks with an envelope
 * that records their origin. On the way back the envelope says where the reasoning may go: to the same
 * provider in the field it came in, never to Anthropic as a signed block (Anthropic would answer 400
 * "Invalid signature"). A signature that only its provider can check (an Anthropic-format provider other than
 * Anthropic) rides in the envelope too, and is taken out again only for that provider.
 */
const PREFIX = "parley.v1.";

export function encodeOriginSignature(origin: ReasoningOrigin): string {
  return PREFIX + utf8ToBase64(JSON.stringify(originPayload(origin)), true);
}

function originPayload(origin: ReasoningOrigin): Record<string, unknown> {
  const payload: Record<string, unknown> = { f: origin.format };
  if (origin.provider !== undefined) payload.p = origin.provider;
  if (origin.binding !== undefined) payload.b = origin.binding;
  if (origin.field !== undefined) payload.r = origin.field;
  if (origin.model !== undefined) payload.m = origin.model;
  if (origin.details !== undefined) payload.d = origin.details;
  if (origin.signature !== undefined) payload.s = origin.signature;
  if (origin.id !== undefined) payload.i = origin.id;
  if (origin.sealed !== undefined) payload.e = origin.sealed;
  return payload;
}

/** The origin recorded in a Parley envelope, or undefined for any other signature. */
export function decodeOriginSignature(signature: string | undefined): ReasoningOrigin | undefined {
  if (signature === undefined || !signature.startsWith(PREFIX)) return undefined;
  try {
    const payload = JSON.parse(base64ToUtf8(signature.slice(PREFIX.length)));
    if (payload === null || typeof payload !== "object") return undefined;
    // A format Parley does not know (a damaged or forged envelope) reads as OpenAI-compatible: never as signed.
    const format = (WIRE_FORMATS as readonly unknown[]).includes(payload.f) ? (payload.f as WireFormat) : "openai";
    const origin: ReasoningOrigin = { format };
    if (typeof payload.p === "string") origin.provider = payload.p;
    if (typeof payload.b === "string") origin.binding = payload.b;
    if (typeof payload.r === "string") origin.field = payload.r;
    if (typeof payload.m === "string") origin.model = payload.m;
    if (Array.isArray(payload.d)) origin.details = payload.d;
    if (typeof payload.s === "string") origin.signature = payload.s;
    if (typeof payload.i === "string") origin.id = payload.i;
    if (typeof payload.e === "string") origin.sealed = payload.e;
    return origin;
  } catch {
    return undefined;
  }
}

export function isOriginSignature(signature: string | undefined): boolean {
  return signature?.startsWith(PREFIX) ?? false;
}

/** What `field` (`r`) an envelope holds when it is a conversation Parley compacted, not reasoning. */
export const COMPACTION_FIELD = "compaction";

/**
 * A conversation Parley compacted for a client whose provider cannot (Codex's remote compaction on a Chat or
 * Anthropic upstream): the summary the routed model wrote (`t`), and where it was made (`f`, `p`, `m`). Nothing in
 * it is sealed: a later request replays it as the summary's text, to whichever provider it goes.
 */
export interface CompactedConversation {
  summary: string;
  origin: ReasoningOrigin;
}

export function encodeCompaction({ summary, origin }: CompactedConversation): string {
  const { field: _field, ...where } = origin;
  const payload = originPayload(where);
  payload.r = COMPACTION_FIELD;
  payload.t = summary;
  return PREFIX + utf8ToBase64(JSON.stringify(payload), true);
}

/** The compacted conversation an envelope holds, or undefined for anything else (reasoning, another's content). */
export function decodeCompaction(envelope: string | undefined): CompactedConversation | undefined {
  const origin = decodeOriginSignature(envelope);
  if ((origin?.field as string | undefined) !== COMPACTION_FIELD) return undefined;
  const { field: _field, ...where } = origin!;
  try {
    const payload = JSON.parse(base64ToUtf8(envelope!.slice(PREFIX.length))) as { t?: unknown };
    return typeof payload.t === "string" ? { summary: payload.t, origin: where } : undefined;
  } catch {
    return undefined;
  }
}
