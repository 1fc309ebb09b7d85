import type { ErrorReport } from "../adapter.js";

/**
 * Anthropic's message threads (`thread` on `POST /v1/messages`): a `continue` turn sends only the new messages and
 * `previous_message_id`, and the server supplies the rest of the conversation (with its `system` and `tools`). An
 * Anthropic provider holds its own threads, so the request goes there as sent. Parley keeps no threads for other
 * providers: such a `continue` is answered as Anthropic answers for a thread it does not have (404
 * `not_found_error`, `details.error_code: "thread_not_found"`), on which the SDK (`beta.messages.toolRunner()`,
 * `thread()`) sends the whole conversation again under a new thread, and stops threading when that thread is not
 * found either. A `continue` sent on would reach the upstream without its history and be answered as if it had none.
 */
export function threadContinued(body: Record<string, unknown>, provider: string): ErrorReport | undefined {
  const thread = body.thread as { type?: unknown; previous_message_id?: unknown } | null | undefined;
  if (thread === null || typeof thread !== "object" || thread.type !== "continue") return undefined;
  const previous = typeof thread.previous_message_id === "string" ? ` '${thread.previous_message_id}'` : "";
  return {
    type: "not_found_error",
    message:
      `thread not found: the gateway keeps no threads for provider ${provider}, so previous_message_id` +
      `${previous} has none; send the whole conversation again with thread: {"type": "create"}, or without thread`,
    param: null,
    details: { error_code: "thread_not_found" },
  };
}
