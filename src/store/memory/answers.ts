import { type AnswerRow, answerExists, answerFromRow, answerRow, chainFromRows } from "../answers/answer-rows.js";
import type { AnswerStore, NewStoredAnswer, StoredAnswer } from "../answers/answer-store.js";
import { type OwnerOptions, ownerOf } from "../owner.js";

/** The answers of `memory:`, as rows of JSON text like the SQL backends', gone when the process ends. */
export class MemoryAnswers implements AnswerStore {
  private readonly rows = new Map<string, AnswerRow>();

  async save(answer: NewStoredAnswer, options?: OwnerOptions): Promise<void> {
    if (this.rows.has(answer.id)) throw answerExists(answer.id);
    this.rows.set(answer.id, answerRow(answer, ownerOf(options)));
  }

  async get(id: string, options?: OwnerOptions): Promise<StoredAnswer | undefined> {
    const row = this.owned(id, ownerOf(options));
    return row === undefined ? undefined : answerFromRow(row);
  }

  async chain(id: string, options?: OwnerOptions): Promise<StoredAnswer[] | undefined> {
    const owner = ownerOf(options);
    const rows: AnswerRow[] = [];
    for (let row = this.owned(id, owner); row !== undefined; ) {
      rows.push(row);
      row = row.previous_id === null ? undefined : this.owned(row.previous_id, owner);
    }
    return chainFromRows(rows);
  }

  async delete(id: string, options?: OwnerOptions): Promise<boolean> {
    return this.owned(id, ownerOf(options)) !== undefined && this.rows.delete(id);
  }

  private owned(id: string, owner: string): AnswerRow | undefined {
    const row = this.rows.get(id);
    return row?.owner === owner ? row : undefined;
  }
}
