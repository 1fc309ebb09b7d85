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

export function conversationExists(conversationId: string): InvalidRequestError {
  return new InvalidRequestError(`conversation '${conversationId}' already exists`, "id");
}
