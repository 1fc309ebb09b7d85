// src/store/answers/answer-store.ts — the stored answers' API (the Responses API's `store`)
import type { Message } from "../../core/index.js";
import type { OwnerOptions } from "../owner.js";
/**
 * An answer kept for a later turn (the Responses API's `store`), under the id its client saw. It belongs to an
 * owner as conversations do (see owner.ts): the calls name the owner they act for, and another owner's answer is
 * not there for them.
 */
export interface StoredAnswer {
  id: string;
  /** The tenant that created it (`DEFAULT_OWNER` on a gateway without keys). */
  owner: string;
  createdAt: string;
  /** The stored answer this turn continued. */
  previousId?: string;
  /** The turn's messages: what the client sent, then the answer. */
  messages: Message[];
  /** The answer as its client got it, in its API's shape, for reading it back. */
  body: unknown;
}
/** An answer to keep: its owner is the one the call acts for. */
export type NewStoredAnswer = Omit<StoredAnswer, "owner">;
// Every call acts for an owner (DEFAULT_OWNER when none is named): another owner's answer is unknown to it. Ids are
// unique across owners.
export interface AnswerStore {
  save(answer: NewStoredAnswer, options?: OwnerOptions): Promise<void>; // an id already stored is an InvalidRequestError (409)
  get(id: string, options?: OwnerOptions): Promise<StoredAnswer | undefined>; // undefined: unknown, or another owner's
  chain(id: string, options?: OwnerOptions): Promise<StoredAnswer[] | undefined>; // the answer and those it continued, oldest first; undefined when one is missing
  delete(id: string, options?: OwnerOptions): Promise<boolean>; // false: unknown, or another owner's
}
