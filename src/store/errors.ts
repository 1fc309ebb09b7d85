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
