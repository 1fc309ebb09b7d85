import { InvalidRequestError, ParleyError } from "../core/index.js";

/** A conversation (or other stored object) that does not exist: a 404 on the gateway's routes. */
export class NotFoundError extends ParleyError {
  constructor(message: string) {
    super("not_found_error", message);
    this.name = "NotFoundError";
  }
}

export function conversationNotFound(conversationId: string): NotFoundError {
  return new NotFoundError(`conversation '${conversationId}' does not exist`);
}

/** An id already taken (by any owner: ids are unique in a store): a 409 on the gateway's routes. */
export class ConversationExistsError extends InvalidRequestError {
  constructor(conversationId: string) {
    super(`conversation '${conversationId}' already exists`, "id");
    this.name = "ConversationExistsError";
  }
}

export function conversationExists(conversationId: string): ConversationExistsError {
  return new ConversationExistsError(conversationId);
}

/**
 * The store did not answer within its deadline (a lock another process holds, a server that hangs) or cannot be
 * reached: a 503 in the route's API shape, naming the store, instead of a request that waits as long as the store
 * does or a bare 500.
 */
export class StoreUnavailableError extends ParleyError {
  constructor(
    readonly backend: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super("api_error", `the store (${backend}) ${reason}`, { status: 503, ...options });
    this.name = "StoreUnavailableError";
  }
}

/** The store's call passed its deadline. */
export function storeTooSlow(backend: string, deadlineMs: number, cause?: unknown): StoreUnavailableError {
  return new StoreUnavailableError(backend, `did not answer within ${deadlineMs} ms`, { cause });
}
