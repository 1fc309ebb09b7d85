import {
  decodeOriginSignature,
  encodeOriginSignature,
  type IncrementalDecoder,
  isOriginSignature,
  type ReasoningOrigin,
  type StreamEvent,
} from "../../core/index.js";
import type { SseMessage } from "../../stream/sse.js";

/**
 * The signatures of an Anthropic-format provider that is not Anthropic (DeepSeek, Kimi, GLM, MiniMax, OpenRouter,
 * vLLM) are good only with that provider. Its answers reach clients with each thinking signature wrapped in an
 * origin envelope naming the provider, so that a client moving to another provider (Claude Code's `/model`, a
 * route) sends that thinking there as text, not as a signature the other side refuses; and the signature is taken
 * out again, as it came, exactly when the block goes back to the provider that made it.
 */

/** `signature` in an envelope naming `provider`, and the key or deployment behind it when known (`binding`). */
export function wrapSignature(signature: string, provider: string, binding?: string): string {
  return encodeOriginSignature({
    format: "anthropic",
    provider,
    ...(binding === undefined ? {} : { binding }),
    signature,
  });
}

/** The signature `provider` made, from the origin of a block Parley wrapped it in, or undefined. */
export function wrappedBy(origin: ReasoningOrigin | undefined, provider: string): string | undefined {
  return origin?.format === "anthropic" && origin.provider === provider ? origin.signature : undefined;
}

/** The origin a thinking part's envelope records: the envelope is the truth, the part's origin its decoded copy. */
export function envelopeOrigin(part: { signature?: string; origin?: ReasoningOrigin }): ReasoningOrigin | undefined {
  if (part.signature === undefined || !isOriginSignature(part.signature)) return undefined;
  return part.origin?.signature !== undefined ? part.origin : decodeOriginSignature(part.signature);
}

/** A provider's answer with its thinking signatures wrapped; the same object when there is none to wrap. */
export function wrapAnswerSignatures(
  body: Record<string, unknown>,
  provider: string,
  binding?: string,
): Record<string, unknown> {
  const content = body.content;
  if (!Array.isArray(content)) return body;
  let wrapped: unknown[] | undefined;
  content.forEach((block, index) => {
    const signature = thinkingSignature(block);
    if (signature === undefined || signature === "") return;
    wrapped ??= [...content];
    wrapped[index] = { ...(block as object), signature: wrapSignature(signature, provider, binding) };
  });
  return wrapped === undefined ? body : { ...body, content: wrapped };
}

/**
 * Wire messages with the signatures `provider` made taken out of their envelopes, as the provider gave them;
 * undefined when there was none (the messages can then go as they came, byte for byte).
 */
export function unwrapMessageSignatures(messages: readonly unknown[], provider: string): unknown[] | undefined {
  let out: unknown[] | undefined;
  messages.forEach((message, index) => {
    const content = (message as { content?: unknown } | null)?.content;
    if (!Array.isArray(content)) return;
    let blocks: unknown[] | undefined;
    content.forEach((block, blockIndex) => {
      const signature = thinkingSignature(block);
      if (signature === undefined || !isOriginSignature(signature)) return;
      const own = wrappedBy(decodeOriginSignature(signature), provider);
      if (own === undefined) return;
      blocks ??= [...content];
      blocks[blockIndex] = { ...(block as object), signature: own };
    });
    if (blocks === undefined) return;
    out ??= [...messages];
    out[index] = { ...(message as object), content: blocks };
  });
  return out;
}

/** A stream decoder whose thinking signatures come out wrapped for `provider`. */
export function wrapStreamSignatures(
  decoder: IncrementalDecoder<SseMessage>,
  provider: string,
): IncrementalDecoder<SseMessage> {
  const wrap = (events: StreamEvent[]): StreamEvent[] => {
    for (const event of events) {
      if (event.type === "signature" && event.signature !== "") {
        event.signature = wrapSignature(event.signature, provider);
      } else if (event.type === "block-start" && event.part.type === "thinking") {
        const { part } = event;
        // A block that arrives whole (its signature in content_block_start) is wrapped as a delta would be.
        if (part.signature !== undefined && part.signature !== "") {
          part.origin = { format: "anthropic", provider, signature: part.signature };
          part.signature = wrapSignature(part.signature, provider);
        }
      }
    }
    return events;
  };
  return { push: (message) => wrap(decoder.push(message)), finish: () => wrap(decoder.finish()) };
}

function thinkingSignature(block: unknown): string | undefined {
  if (block === null || typeof block !== "object") return undefined;
  const { type, signature } = block as { type?: unknown; signature?: unknown };
  return type === "thinking" && typeof signature === "string" ? signature : undefined;
}
