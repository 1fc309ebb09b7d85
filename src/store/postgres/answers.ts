import { type AnswerRow, answerExists, answerFromRow, answerRow, chainFromRows } from "../answers/answer-rows.js";
import type { AnswerStore, NewStoredAnswer, StoredAnswer } from "../answers/answer-store.js";
import { type OwnerOptions, ownerOf } from "../owner.js";
import type { PostgresPool } from "./driver.js";

/** An answer's columns, its instant as the ISO text the other backends give. */
const ANSWER_COLUMNS = `id, owner, previous_id, messages, body,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

/** The answers of `postgres://...` kept for later turns: one row each, its messages and body as JSON text. */
export class PostgresAnswers implements AnswerStore {
  constructor(private readonly pool: PostgresPool) {}

  async save(answer: NewStoredAnswer, options?: OwnerOptions): Promise<void> {
    const row = answerRow(answer, ownerOf(options));
    const result = await this.pool.query(
      `INSERT INTO answers (id, owner, created_at, previous_id, messages, body)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
      [row.id, row.owner, row.created_at, row.previous_id, row.messages, row.body],
    );
    if (result.rowCount === 0) throw answerExists(answer.id);
  }

  async get(id: string, options?: OwnerOptions): Promise<StoredAnswer | undefined> {
    const result = await this.pool.query(`SELECT ${ANSWER_COLUMNS} FROM answers WHERE id = $1 AND owner = $2`, [
      id,
      ownerOf(options),
    ]);
    const row = result.rows[0] as AnswerRow | undefined;
    return row === undefined ? undefined : answerFromRow(row);
  }

  async chain(id: string, options?: OwnerOptions): Promise<StoredAnswer[] | undefined> {
    // From the asked answer back to the first of its chain, each link the same owner's.
    const result = await this.pool.query(
      `WITH RECURSIVE chain AS (
         SELECT answers.*, 0 AS depth FROM answers WHERE id = $1 AND owner = $2
         UNION ALL
         SELECT a.*, chain.depth + 1 FROM answers a JOIN chain ON a.id = chain.previous_id WHERE a.owner = $2
       )
       SELECT ${ANSWER_COLUMNS} FROM chain ORDER BY depth`,
      [id, ownerOf(options)],
    );
    return chainFromRows(result.rows as AnswerRow[]);
  }

  async delete(id: string, options?: OwnerOptions): Promise<boolean> {
    const result = await this.pool.query("DELETE FROM answers WHERE id = $1 AND owner = $2", [id, ownerOf(options)]);
    return (result.rowCount ?? 0) > 0;
  }
}
