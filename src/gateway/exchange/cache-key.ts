import { createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { ConversationRequest } from "../../core/index.js";

/**
 * The conversation's prompt-cache key (`ConversationRequest.cacheKey`): the same on every turn of one conversation,
 * so that a provider that routes its cache by a key (OpenAI's `prompt_cache_key`) sends each turn where the last
 * one's prefix is. Taken from the first of:
 *
 * - Claude Code's session id: its `x-claude-code-session-id` header, or the `session_id` in `metadata.user_id`
 *   (a JSON object since 2.1; `user_<hash>_account_<uuid>_session_<uuid>` before);
 * - Codex's conversation id, its `session_id` header (its own `prompt_cache_key` in the body wins anyway);
 * - the stored conversation the turn belongs to (`x-parley-conversation-id`);
 * - else the history's start: the system prompt and the first message, which a client re-sends unchanged.
 *
 * Whatever the source, the key is a hash of it: nothing a client sent reaches the provider through it, and no key
 * or credential is ever an input.
 */
export function conversationCacheKey(
  headers: IncomingHttpHeaders,
  request: ConversationRequest,
  conversationId: string | undefined,
): string {
  const session = header(headers, "x-claude-code-session-id") ?? sessionOfUserId(request.userId);
  if (session !== undefined) return keyOf("session", session);
  const codex = header(headers, "session_id");
  if (codex !== undefined) return keyOf("session", codex);
  if (conversationId !== undefined) return keyOf("conversation", conversationId);
  return keyOf("start", JSON.stringify([request.system ?? null, request.messages[0] ?? null]));
}

/** 40 hex characters of SHA-256: OpenAI takes keys up to 64 characters. */
function keyOf(kind: string, value: string): string {
  return `parley-${createHash("sha256").update(`${kind}:${value}`).digest("hex").slice(0, 40)}`;
}

/** A header's first value, trimmed; undefined when absent or empty. */
export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  return text === undefined || text === "" ? undefined : text;
}

/** The session id inside Claude Code's `metadata.user_id`, in either of its forms; undefined for any other value. */
export function sessionOfUserId(userId: string | undefined): string | undefined {
  if (userId === undefined) return undefined;
  if (userId.startsWith("{")) {
    try {
      const parsed = JSON.parse(userId) as { session_id?: unknown };
      return typeof parsed.session_id === "string" && parsed.session_id !== "" ? parsed.session_id : undefined;
    } catch {
      return undefined;
    }
  }
  return /_session_([0-9a-fA-F-]{8,})$/.exec(userId)?.[1];
}
