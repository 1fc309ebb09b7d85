import { InvalidRequestError, type Message } from "../../core/index.js";
import type { NewStoredAnswer, StoredAnswer } from "./answer-store.js";

/** A stored answer as every backend's row holds it: its messages and body as JSON text, kept byte for byte. */
export interface AnswerRow {
  id: string;
  owner: string;
  created_at: string;
  previous_id: string | null;
  messages: string;
  body: string;
}

/** The row of an answer kept for `owner`. */
export function answerRow(answer: NewStoredAnswer, owner: string): AnswerRow {
  return {
    id: answer.id,
    owner,
    created_at: answer.createdAt,
    previous_id: answer.previousId ?? null,
    messages: JSON.stringify(answer.messages),
    body: JSON.stringify(answer.body),
  };
}

export function answerFromRow(row: AnswerRow): StoredAnswer {
  const answer: StoredAnswer = {
    id: row.id,
    owner: row.owner,
    createdAt: row.created_at,
    messages: JSON.parse(row.messages) as Message[],
    body: JSON.parse(row.body),
  };
  if (row.previous_id !== null) answer.previousId = row.previous_id;
  return answer;
}

/**
 * The chain read from the asked answer back (newest first), oldest first; undefined when it is cut: the asked
 * answer is not there, or one it continues was deleted (or is another owner's).
 */
export function chainFromRows(newestFirst: readonly AnswerRow[]): StoredAnswer[] | undefined {
  const oldest = newestFirst.at(-1);
  if (oldest === undefined || oldest.previous_id !== null) return undefined;
  return newestFirst.map(answerFromRow).reverse();
}

export function answerExists(id: string): InvalidRequestError {
  return new InvalidRequestError(`an answer with id '${id}' is already stored`, "id");
}
