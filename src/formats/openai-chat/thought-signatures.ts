import {
  encodeOriginSignature,
  formatPath,
  geminiSignature,
  isOriginSignature,
  type Message,
  type ReasoningOrigin,
  ridesOnText,
  SKIP_SIGNATURE,
  type ThinkingPart,
  takesSignature,
} from "../../core/index.js";
import { refusesReasoning } from "../reasoning-refusal.js";
import { isRecord } from "./content-to-core.js";
import type { EncodeContext } from "./encode-context.js";
import { THOUGHT_SIGNATURE_KEYS, type ThoughtSignatureKey } from "./signature-keys.js";

/**
 * Gemini's thought signatures as Google's OpenAI-compatible endpoints carry them (ai.google.dev/gemini-api/docs/
 * thought-signatures, "OpenAI compatibility"): `extra_content.google.thought_signature` on a tool call (the first of
 * parallel calls only), on the message for a text answer, and in a stream on a delta (one holding only
 * `extra_content` when the signature comes last); Vertex AI's endpoint the same under `vertex`. In the core each is a
 * thought signature part (`src/core/thought-signatures.ts`), as the Gemini API's own `thoughtSignature` is.
 */

export interface ExtraContent {
  /** The thought signature it holds (under `google`, else `vertex`), if any. */
  signature?: string;
  /** Everything else it holds, as it came (the value itself when it is no object); undefined when nothing else. */
  rest?: unknown;
}

/** What an `extra_content` value holds: its thought signature, and the rest. */
export function readExtraContent(value: unknown): ExtraContent {
  if (value === undefined) return {};
  if (!isRecord(value)) return { rest: value };
  let signature: string | undefined;
  const rest: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const found = (THOUGHT_SIGNATURE_KEYS as readonly string[]).includes(key) ? signatureIn(inner) : undefined;
    if (found === undefined || signature !== undefined) {
      rest[key] = inner;
      continue;
    }
    signature = found;
    const { thought_signature: _signature, ...others } = inner as Record<string, unknown>;
    if (Object.keys(others).length > 0) rest[key] = others;
  }
  const out: ExtraContent = {};
  if (signature !== undefined) out.signature = signature;
  if (Object.keys(rest).length > 0) out.rest = rest;
  return out;
}

function signatureIn(value: unknown): string | undefined {
  const signature = isRecord(value) ? value.thought_signature : undefined;
  return typeof signature === "string" && signature !== "" ? signature : undefined;
}

/** `extra_content` with `signature` under `key`, beside what it held. */
export function withThoughtSignature(
  extraContent: unknown,
  key: ThoughtSignatureKey,
  signature: string,
): Record<string, unknown> {
  const held = isRecord(extraContent) ? extraContent : {};
  const inner = held[key];
  return { ...held, [key]: { ...(isRecord(inner) ? inner : {}), thought_signature: signature } };
}

/** Where one assistant message's thought signatures go on the wire. */
export interface PlacedSignatures {
  /** The `extra_content` key they go under. */
  key: ThoughtSignatureKey;
  /** By the id of the call each rode on. */
  calls: Map<string, string>;
  /** The message's own: a text's, or one of an empty part of its own. */
  message?: string;
}

/**
 * An assistant message's thought signatures as they go out (each signature part's place: `placeSignatures`), or
 * undefined when it has none. To a provider (`to: "provider"`): the signatures it takes, as made (Gemini's own bytes),
 * under its preset's key; another maker's are left out and reported, and the first call of a message with calls but
 * no signature gets Google's skip value where the preset carries signatures. To a client: every signature as Parley's
 * envelope under `google`, as a client of Google's endpoint keeps and sends it back.
 */
export function placeSignatures(
  message: Message,
  index: number,
  context: EncodeContext,
  to: "provider" | "client",
): PlacedSignatures | undefined {
  const compat = context.compat;
  const declared = compat?.thoughtSignatures ?? "google";
  const placed: PlacedSignatures = {
    key: to === "client" || declared === "none" ? "google" : declared,
    calls: new Map(),
  };
  let found = false;
  message.parts.forEach((part, partIndex) => {
    const signature = geminiSignature(part);
    if (signature === undefined) return;
    found = true;
    const path = formatPath(["messages", index, "content", partIndex]);
    let value: string;
    if (to === "client") value = envelopeOf(part as ThinkingPart, signature);
    else if (!takesSignature(signature, context.provider)) {
      const target = context.provider === undefined ? "this provider" : `provider '${context.provider}'`;
      context.lossy.push({
        code: "thought-signature-dropped",
        message: `a thought signature of provider '${signature.provider}' cannot go to ${target}`,
        path,
      });
      return;
    } else if (declared === "none" && signature.provider !== context.provider) {
      context.lossy.push({
        code: "thought-signature-dropped",
        message: "a thought signature goes only to a provider whose preset carries them (gemini-openai, vertex-openai)",
        path,
      });
      return;
    } else value = signature.sealed;
    if (!ridesOnText(signature)) placed.calls.set(signature.id!, value);
    else if (placed.message === undefined) placed.message = value;
    else
      context.lossy.push({
        code: "thought-signature-dropped",
        message: "a Chat Completions message carries one thought signature of its own: a second was left out",
        path,
      });
  });
  const firstCall = message.parts.find((part) => part.type === "tool_call");
  if (to === "provider" && compat !== undefined && compat.thoughtSignatures !== "none" && firstCall !== undefined) {
    if (!placed.calls.has(firstCall.id)) {
      placed.calls.set(firstCall.id, SKIP_SIGNATURE);
      context.lossy.push({
        code: "thought-signature-skipped",
        message: "a model turn Gemini did not sign: its first tool call carries Google's documented skip value",
        path: formatPath(["messages", index]),
      });
    }
    found = true;
  }
  return found ? placed : undefined;
}

/** What a client gets for a signature part: its envelope, which says who made it and where it rode. */
function envelopeOf(part: ThinkingPart, origin: ReasoningOrigin): string {
  return part.signature !== undefined && isOriginSignature(part.signature)
    ? part.signature
    : encodeOriginSignature(origin);
}

/**
 * Google's OpenAI-compatible endpoints refusing a thought signature, in their own words: a call of the current turn
 * without one (`Function call is missing a thought_signature`), or one they did not issue (`Corrupted thought
 * signature.`). Only a provider whose preset carries signatures says so (`UpstreamConnection.isReasoningRefusal`).
 */
export const refusesThoughtSignature = /* @__PURE__ */ refusesReasoning([
  /missing a `?thought[_ ]?signature/i,
  /corrupted thought[_ ]?signature/i,
  /invalid `?thought[_ ]?signature/i,
]);
