import type { IncomingHttpHeaders } from "node:http";
import { assertNever, type ConversationRequest, type Message, type Part } from "../../core/index.js";
import type { RouteTaken } from "../../store/traces/trace-store.js";
import { header, sessionOfUserId } from "./cache-key.js";

/**
 * Telling that a conversation's turn went to another provider or model than its previous one (which finds none of
 * the conversation's prompt cache: a provider's cache is its own and its model's). Each turn is known by its
 * conversation: the stored conversation's id, else the client's session and the conversation's start.
 *
 * The session alone is not the conversation: Claude Code sends its session id on every request of the session,
 * its subagents' and its small-model side requests (a title, a command's prefix) among them, each on a model of its
 * own and with a start of its own. Keyed by the session alone, each side request would read as a switch and the
 * main conversation's next turn as one back.
 */

/**
 * The conversation a turn belongs to. The stored conversation's id when there is one; else the tenant, the client's
 * session (as `conversationCacheKey` reads it) and the conversation's start (`conversationStart`), which the client
 * re-sends unchanged every turn.
 */
export function routeKey(
  tenant: string,
  headers: IncomingHttpHeaders,
  userId: string | undefined,
  conversationId: string | undefined,
  start: string,
): string {
  if (conversationId !== undefined) return `${tenant}\u0000conversation\u0000${conversationId}`;
  const session =
    header(headers, "x-claude-code-session-id") ?? sessionOfUserId(userId) ?? header(headers, "session_id");
  return `${tenant}\u0000${session ?? ""}\u0000${start}`;
}

/** Characters of a text kept whole; a longer one is kept as its length and its first and last `EDGE`. */
const WHOLE = 160;
const EDGE = 64;
/** Parts of a message sampled: the first ones, and the last (Claude Code's question comes after its reminders). */
const SAMPLED_PARTS = 4;

/**
 * A conversation's start as a key: its system prompt, any system messages that open the history (a Chat client's),
 * and the first other message, each text whole when short, else its length with its first and last characters.
 * Sampled rather than hashed whole: on the benchmark's 6.5 KB Claude Code-like request, hashing the start (as
 * `conversationCacheKey` does: its system prompt and first message serialised, then SHA-256) took 6-9 µs, this key
 * and the two lookups of `RouteMemory` 1.3 µs. Two conversations share a start only if they share those samples,
 * lengths included.
 */
export function conversationStart(request: Pick<ConversationRequest, "system" | "messages">): string {
  let start = request.system === undefined ? "" : messageSample(request.system);
  for (const message of request.messages) {
    start += `\u0002${messageSample(message)}`;
    if (message.role !== "system") break;
  }
  return start;
}

function messageSample(message: Message): string {
  const { parts } = message;
  let sample = `${message.role}\u0001${parts.length}`;
  const count = Math.min(parts.length, SAMPLED_PARTS);
  for (let index = 0; index < count; index++) sample += `\u0001${partSample(parts[index]!)}`;
  if (parts.length > SAMPLED_PARTS) sample += `\u0001${partSample(parts[parts.length - 1]!)}`;
  return sample;
}

function partSample(part: Part): string {
  switch (part.type) {
    case "text":
      return textSample(part.text);
    case "thinking":
      return textSample(part.thinking);
    case "redacted_thinking":
      return textSample(part.data);
    case "tool_call":
      return `${part.name}\u0000${part.id}`;
    case "tool_result":
      return `${part.toolCallId}\u0000${typeof part.content === "string" ? textSample(part.content) : part.content.length}`;
    case "image":
    case "document": {
      const source = part.source;
      return source.type === "url" ? textSample(source.url) : textSample(source.data);
    }
    case "opaque":
      return textSample(part.text ?? part.format);
    default:
      return assertNever(part, "part");
  }
}

function textSample(text: string): string {
  if (text.length <= WHOLE) return text;
  return `${text.slice(0, EDGE)}\u0000${text.length}\u0000${text.slice(-EDGE)}`;
}

/**
 * How many conversations' last routes are kept; the least recently answered goes first. A key is a few hundred
 * characters at most (the samples above), so the whole is a few MB at worst.
 */
export const REMEMBERED_CONVERSATIONS = 4_096;

/**
 * Each conversation's last answered route, in this process: a gateway restarted, or one of several behind a load
 * balancer that does not keep a conversation on one instance, compares a turn only with the turns it answered.
 * Kept in memory rather than read from the traces: nothing is read on the request path, and a trace is written after
 * its answer, in batches (a next turn sent at once would find the one before it, or none).
 */
export class RouteMemory {
  private readonly last = new Map<string, RouteTaken>();

  constructor(private readonly capacity = REMEMBERED_CONVERSATIONS) {}

  /** Where the conversation's last answered turn went, when that is not where this one goes. */
  switchedFrom(key: string, route: RouteTaken): RouteTaken | undefined {
    const last = this.last.get(key);
    if (last === undefined || (last.provider === route.provider && last.model === route.model)) return undefined;
    return last;
  }

  /** An answered turn's route, as its conversation's last. */
  remember(key: string, route: RouteTaken): void {
    // Deleted first, so that the map's order is the order of the last answers (the oldest goes first).
    this.last.delete(key);
    this.last.set(key, route);
    if (this.last.size > this.capacity) this.last.delete(this.last.keys().next().value!);
  }
}
