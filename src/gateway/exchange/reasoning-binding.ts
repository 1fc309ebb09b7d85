import { createHash } from "node:crypto";
import {
  COMPACTION_FIELD,
  type ConversationResponse,
  decodeOriginSignature,
  encodeOriginSignature,
  type IncrementalDecoder,
  isOriginSignature,
  type Part,
  type StreamEvent,
} from "../../core/index.js";
import type { SseMessage } from "../../stream/sse.js";
import type { ProviderConfig } from "../config/types.js";

/**
 * Reasoning a provider seals or signs is bound to more than the provider's name: OpenAI refuses `encrypted_content`
 * sealed under another organisation or key, Anthropic-format providers refuse thinking signed for another key. So
 * every origin envelope of a provider's answer also names the key or deployment behind it (`binding`, envelope key
 * `b`), and repair turns what a provider made under another binding into text (`RepairTarget.binding`) instead of
 * sending it where it would be refused. The binding is not a secret and holds none: a short hash of the base URL and
 * the organisation or project headers when configured (a key rotated inside one organisation keeps its reasoning),
 * else of the key.
 */

/** Headers naming the account reasoning is sealed under, where an API has them (OpenAI's). */
const ACCOUNT_HEADERS: readonly string[] = ["openai-organization", "openai-project"];
/** Headers a key may be configured in instead of `apiKey`. */
const KEY_HEADERS: readonly string[] = ["authorization", "x-api-key", "api-key", "x-goog-api-key"];

/**
 * 16 base64url characters (96 bits) of SHA-256: enough that two keys never meet, too few to stand for the key. An
 * API key is random, so its hash does not lead back to it; a local server's empty key binds to its URL alone.
 */
const BINDING_LENGTH = 16;

export function providerBinding(config: Pick<ProviderConfig, "baseUrl" | "apiKey" | "headers">): string {
  const headers = Object.fromEntries(
    Object.entries(config.headers).map(([name, value]) => [name.toLowerCase(), value]),
  );
  const account = ACCOUNT_HEADERS.filter((name) => headers[name] !== undefined).map(
    (name) => `${name}=${headers[name]}`,
  );
  const identity =
    account.length > 0
      ? account
      : [
          `key=${config.apiKey ?? ""}`,
          ...KEY_HEADERS.filter((name) => headers[name] !== undefined).map((name) => `${name}=${headers[name]}`),
        ];
  return createHash("sha256")
    .update(["parley.binding", config.baseUrl, ...identity].join("\n"))
    .digest("base64url")
    .slice(0, BINDING_LENGTH);
}

/** A provider's stream decoder whose events' origins naming the provider also carry its binding. */
export function bindingDecoder(
  decoder: IncrementalDecoder<SseMessage>,
  provider: string,
  binding: string,
): IncrementalDecoder<SseMessage> {
  const bind = (events: StreamEvent[]): StreamEvent[] => {
    for (let index = 0; index < events.length; index++) {
      const event = events[index]!;
      if (event.type === "block-start" && event.part.type === "thinking") {
        const part = boundPart(event.part, provider, binding);
        if (part !== event.part) events[index] = { ...event, part };
      } else if (event.type === "signature") {
        const signature = boundEnvelope(event.signature, provider, binding);
        if (signature !== event.signature) events[index] = { ...event, signature };
      }
    }
    return events;
  };
  return {
    push: (message) => bind(decoder.push(message)),
    finish: () => bind(decoder.finish()),
  };
}

/** A provider's whole answer whose origins naming the provider also carry its binding. */
export function boundAnswer(answer: ConversationResponse, provider: string, binding: string): ConversationResponse {
  let changed = false;
  const parts = answer.message.parts.map((part) => {
    const bound = boundPart(part, provider, binding);
    if (bound !== part) changed = true;
    return bound;
  });
  return changed ? { ...answer, message: { ...answer.message, parts } } : answer;
}

function boundPart(part: Part, provider: string, binding: string): Part {
  if (part.type !== "thinking") return part;
  const origin = part.origin?.provider === provider && part.origin.binding === undefined ? part.origin : undefined;
  const signature = part.signature === undefined ? undefined : boundEnvelope(part.signature, provider, binding);
  if (origin === undefined && signature === part.signature) return part;
  const bound = { ...part };
  if (origin !== undefined) bound.origin = { ...origin, binding };
  if (signature !== undefined) bound.signature = signature;
  return bound;
}

/** An envelope naming `provider` without a binding, written again with it; anything else as it is. */
function boundEnvelope(signature: string, provider: string, binding: string): string {
  if (!isOriginSignature(signature)) return signature;
  const origin = decodeOriginSignature(signature);
  // A compaction's envelope holds a summary, sent as text anywhere: nothing in it is bound.
  if (origin?.provider !== provider || origin.binding !== undefined || origin.field === (COMPACTION_FIELD as string))
    return signature;
  return encodeOriginSignature({ ...origin, binding });
}
