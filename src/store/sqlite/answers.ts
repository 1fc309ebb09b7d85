import { type AnswerRow, answerExists, answerFromRow, answerRow, chainFromRows } from "../answers/answer-rows.js";
import type { AnswerStore, NewStoredAnswer, StoredAnswer } from "../answers/answer-store.js";
import { DEFAULT_STORE_DEADLINE_MS } from "../deadline.js";
import { type OwnerOptions, ownerOf } from "../owner.js";
import { type SqliteDatabase, whenUnlocked } from "./driver.js";

/** The answers of `sqlite:PATH` kept for later turns: one row each, its messages and body as JSON text. */
export class SqliteAnswers implements AnswerStore {
  private readonly statements;

  constructor(
    database: SqliteDatabase,
    private readonly deadlineMs = DEFAULT_STORE_DEADLINE_MS,
  ) {
    const prepare = (sql: string) => database.prepare(sql);
    this.statements = {
      insertAnswer: prepare(
        `INSERT INTO answers (id, owner, created_at, previous_id, messages, body)
         VALUES (@id, @owner, @created_at, @previous_id, @messages, @body) ON CONFLICT (id) DO NOTHING`,
      ),
      getAnswer: prepare("SELECT * FROM answers WHERE id = ? AND owner = ?"),
      // From the asked answer back to the first of its chain, each link the same owner's.
      answerChain: prepare(
        `WITH RECURSIVE chain (id, owner, created_at, previous_id, messages, body, depth) AS (
           SELECT id, owner, created_at, previous_id, messages, body, 0 FROM answers WHERE id = @id AND owner = @owner
           UNION ALL
           SELECT a.id, a.owner, a.created_at, a.previous_id, a.messages, a.body, chain.depth + 1
           FROM answers a JOIN chain ON a.id = chain.previous_id WHERE a.owner = @owner
         )
         SELECT id, owner, created_at, previous_id, messages, body FROM chain ORDER BY depth`,
      ),
      deleteAnswer: prepare("DELETE FROM answers WHERE id = ? AND owner = ?"),
    };
  }

  async save(answer: NewStoredAnswer, options?: OwnerOptions): Promise<void> {
    const row = answerRow(answer, ownerOf(options));
    if ((await this.unlocked(() => this.statements.insertAnswer.run(row))).changes === 0) throw answerExists(answer.id);
  }

  async get(id: string, options?: OwnerOptions): Promise<StoredAnswer | undefined> {
    const row = (await this.unlocked(() => this.statements.getAnswer.get(id, ownerOf(options)))) as
      | AnswerRow
      | undefined;
    return row === undefined ? undefined : answerFromRow(row);
  }

  async chain(id: string, options?: OwnerOptions): Promise<StoredAnswer[] | undefined> {
    const rows = await this.unlocked(() => this.statements.answerChain.all({ id, owner: ownerOf(options) }));
    return chainFromRows(rows as AnswerRow[]);
  }

  async delete(id: string, options?: OwnerOptions): Promise<boolean> {
    return (await this.unlocked(() => this.statements.deleteAnswer.run(id, ownerOf(options)))).changes > 0;
  }

  /** Tried again off the event loop while another connection holds the lock, up to the deadline. */
  private unlocked<T>(work: () => T): Promise<T> {
    return whenUnlocked(work, this.deadlineMs);
  }
}
