import { randomUUID } from "node:crypto";
import type { Message, Role } from "../../core/index.js";
import { type AnswerRow, answerExists, answerFromRow, answerRow, chainFromRows } from "../answer-rows.js";
import { checkMetadata, listQuery } from "../catalogue.js";
import { conversationExists, conversationNotFound } from "../errors.js";
import { decodeMessage, emptyEnvelope, encodeMessages, storedMessage } from "../message-codec.js";
import { ownerOf } from "../owner.js";
import type { PartChange } from "../part-builder.js";
import { DEFAULT_TRACE_BYTES } from "../retention.js";
import { createStreamingWriter, type FlushPolicy } from "../streaming-writer.js";
import { TraceQueue, type TraceWriterOptions, writerRetention } from "../trace-queue.js";
import type {
  AppendOptions,
  ConversationStore,
  ConversationSummary,
  CreateOptions,
  ListConversationsOptions,
  NewStoredAnswer,
  OwnerOptions,
  StoredAnswer,
  StoredConversation,
  StoredMessage,
  StreamingMessageWriter,
  TracePage,
  TraceQuery,
  TraceRecord,
  TraceRetentionPolicy,
  TraceUsage,
  TraceWriterStats,
} from "../types.js";
import { postgresMigrations } from "./migrations.js";
import { PostgresTraces } from "./traces.js";

/** The part of a PostgreSQL driver this store calls (`pg.Pool` fits it). */
export interface PostgresQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

export interface PostgresClient extends PostgresQueryable {
  release(error?: Error | boolean): void;
}

export interface PostgresPool extends PostgresQueryable {
  connect(): Promise<PostgresClient>;
  end(): Promise<void>;
}

interface LoadedRow {
  seq: number;
  complete: boolean;
  created_at: string;
  extra: string;
  source_format: string | null;
  source: string | null;
}

/** The messages' conversation is held by the owner in `$2`. */
const OWNED = "EXISTS (SELECT 1 FROM conversations c WHERE c.id = $1 AND c.owner = $2)";

/** A conversation's creation instant as the other backends give it (`toISOString()` form). */
const ISO_CREATED_AT = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

/** An answer's columns, its instant as the ISO text the other backends give. */
const ANSWER_COLUMNS = `id, owner, previous_id, messages, body,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

/** Any constant works; it only has to be the same in every Parley process sharing the database. */
const MIGRATION_LOCK = 0x7061726c6579; // "parley"

/**
 * `postgres://...`. Every sequence number comes from the conversation row's `next_seq`, incremented in the
 * writing transaction: the row lock that update takes serializes appends to one conversation across every
 * pool and process, while appends to different conversations run side by side.
 */
export class PostgresStore implements ConversationStore {
  private readonly pool: PostgresPool;
  private readonly flushPolicy: FlushPolicy | undefined;
  private readonly traces: PostgresTraces;
  private readonly traceQueue: TraceQueue;

  private constructor(pool: PostgresPool, options: { flushPolicy?: FlushPolicy } & TraceWriterOptions) {
    this.pool = pool;
    this.flushPolicy = options.flushPolicy;
    const retention = writerRetention(options.traceRetention, DEFAULT_TRACE_BYTES.disk);
    const traces = new PostgresTraces(pool, retention, options.traceSecrets ?? []);
    this.traces = traces;
    // Batches are written from a timer, after the responses went out; the database does the waiting.
    this.traceQueue = new TraceQueue({ write: (batch) => traces.write(batch) }, options.traceQueue);
  }

  /** Applies missing migrations, then returns the store. */
  static async open(
    pool: PostgresPool,
    options: { flushPolicy?: FlushPolicy } & TraceWriterOptions = {},
  ): Promise<PostgresStore> {
    await migrate(pool);
    return new PostgresStore(pool, options);
  }

  async createConversation(options: CreateOptions = {}): Promise<{ id: string }> {
    const id = options.id ?? randomUUID();
    const result = await this.pool.query(
      "INSERT INTO conversations (id, created_at, metadata, owner) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING",
      [id, new Date().toISOString(), JSON.stringify(checkMetadata(options.metadata)), ownerOf(options)],
    );
    if (result.rowCount === 0) throw conversationExists(id);
    return { id };
  }

  async hasConversation(id: string, options?: OwnerOptions): Promise<boolean> {
    const result = await this.pool.query("SELECT 1 FROM conversations WHERE id = $1 AND owner = $2", [
      id,
      ownerOf(options),
    ]);
    return result.rows.length > 0;
  }

  async appendMessages(
    conversationId: string,
    messages: Message[],
    options: AppendOptions = {},
  ): Promise<StoredMessage[]> {
    const encoded = encodeMessages(messages, options.sources);
    const createdAt = new Date().toISOString();
    const messageOffsets: number[] = [];
    const positions: number[] = [];
    const parts: string[] = [];
    encoded.forEach((message, offset) => {
      message.parts.forEach((part, position) => {
        messageOffsets.push(offset);
        positions.push(position);
        parts.push(part);
      });
    });
    // One statement, so one round trip and one implicit transaction: the UPDATE's row lock serializes
    // writers to this conversation until the messages and parts are in.
    const result = await this.pool.query(
      `WITH reserved AS (
         UPDATE conversations SET next_seq = next_seq + $2 WHERE id = $1 AND owner = $11
         RETURNING next_seq - $2 AS first_seq
       ), inserted AS (
         INSERT INTO messages (conversation_id, seq, role, complete, created_at, extra, source_format, source)
         SELECT $1, reserved.first_seq + t.offset_in_call::integer - 1, t.role, true, $3, t.extra, t.source_format, t.source
         FROM reserved, unnest($4::text[], $5::text[], $9::text[], $10::text[])
           WITH ORDINALITY AS t (role, extra, source_format, source, offset_in_call)
         RETURNING id, seq
       ), written AS (
         INSERT INTO parts (message_id, position, part)
         SELECT inserted.id, p.position, p.part
         FROM unnest($6::integer[], $7::integer[], $8::text[]) AS p (message_offset, position, part)
         JOIN inserted ON inserted.seq = (SELECT first_seq FROM reserved) + p.message_offset
         RETURNING 1
       )
       SELECT first_seq, (SELECT count(*) FROM written) AS parts_written FROM reserved`,
      [
        conversationId,
        encoded.length,
        createdAt,
        encoded.map((message) => message.role),
        encoded.map((message) => message.envelope),
        messageOffsets,
        positions,
        parts,
        encoded.map((message) => message.sourceFormat),
        encoded.map((message) => message.source),
        ownerOf(options),
      ],
    );
    const row = result.rows[0] as { first_seq: number } | undefined;
    if (!row) throw conversationNotFound(conversationId);
    return encoded.map((message, offset) =>
      storedMessage(
        row.first_seq + offset,
        decodeMessage(message.envelope, message.parts),
        true,
        createdAt,
        message.sourceFormat,
        message.source,
      ),
    );
  }

  async loadConversation(conversationId: string, options?: OwnerOptions): Promise<StoredMessage[] | undefined> {
    const owner = ownerOf(options);
    // Two reads in one snapshot (so a message another process streams into is seen whole or as of one
    // instant): the messages, then their parts in order. Cheaper for the server than aggregating the parts
    // per message, and each part is parsed once, as it was stored.
    const client = await this.pool.connect();
    let messages: LoadedRow[];
    let parts: Array<{ seq: number; part: string }>;
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      messages = (
        await client.query(
          `SELECT m.seq, m.complete, m.extra, m.source_format, m.source,
             to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
           FROM messages m WHERE m.conversation_id = $1 AND ${OWNED} ORDER BY m.seq`,
          [conversationId, owner],
        )
      ).rows as LoadedRow[];
      parts = (
        await client.query(
          `SELECT m.seq, p.part FROM messages m JOIN parts p ON p.message_id = m.id
           WHERE m.conversation_id = $1 AND ${OWNED} ORDER BY m.seq, p.position`,
          [conversationId, owner],
        )
      ).rows as Array<{ seq: number; part: string }>;
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
    if (messages.length === 0) return (await this.hasConversation(conversationId, options)) ? [] : undefined;
    const loaded = messages.map((row) =>
      storedMessage(row.seq, decodeMessage(row.extra, []), row.complete, row.created_at, row.source_format, row.source),
    );
    let index = 0;
    for (const row of parts) {
      while (loaded[index]!.seq !== row.seq) index++;
      loaded[index]!.message.parts.push(JSON.parse(row.part));
    }
    return loaded;
  }

  async startMessage(conversationId: string, role: Role, options?: OwnerOptions): Promise<StreamingMessageWriter> {
    const createdAt = new Date().toISOString();
    const result = await this.pool.query(
      `WITH reserved AS (
         UPDATE conversations SET next_seq = next_seq + 1 WHERE id = $1 AND owner = $5 RETURNING next_seq - 1 AS seq
       )
       INSERT INTO messages (conversation_id, seq, role, complete, created_at, extra)
       SELECT $1, reserved.seq, $2, false, $3, $4 FROM reserved RETURNING id, seq`,
      [conversationId, role, createdAt, emptyEnvelope(role), ownerOf(options)],
    );
    const row = result.rows[0] as { id: string; seq: number } | undefined;
    if (!row) throw conversationNotFound(conversationId);
    return createStreamingWriter({
      seq: row.seq,
      role,
      createdAt,
      ...(this.flushPolicy ? { policy: this.flushPolicy } : {}),
      sink: { writeParts: (changes, complete) => this.writeParts(row.id, changes, complete) },
    });
  }

  async listConversations(options?: ListConversationsOptions): Promise<ConversationSummary[]> {
    const { owner, filters, limit } = listQuery(options);
    // Top-level containment of scalars is equality, type included (metadata is text: jsonb would reorder its keys).
    const result = await this.pool.query(
      `SELECT id, metadata, ${ISO_CREATED_AT} FROM conversations
       WHERE owner = $1 AND metadata::jsonb @> $2::jsonb ORDER BY conversations.created_at DESC, id DESC LIMIT $3`,
      [owner, JSON.stringify(Object.fromEntries(filters)), limit],
    );
    return (result.rows as Array<{ id: string; created_at: string; metadata: string }>).map((row) => ({
      id: row.id,
      createdAt: row.created_at,
      metadata: JSON.parse(row.metadata),
    }));
  }

  async getConversation(id: string, options?: OwnerOptions): Promise<StoredConversation | undefined> {
    const result = await this.pool.query(
      `SELECT metadata, ${ISO_CREATED_AT} FROM conversations WHERE id = $1 AND owner = $2`,
      [id, ownerOf(options)],
    );
    const row = result.rows[0] as { created_at: string; metadata: string } | undefined;
    const messages = row === undefined ? undefined : await this.loadConversation(id, options);
    if (row === undefined || messages === undefined) return undefined;
    return { id, createdAt: row.created_at, metadata: JSON.parse(row.metadata), messages };
  }

  async deleteConversation(id: string, options?: OwnerOptions): Promise<boolean> {
    // Its messages and parts go with it (ON DELETE CASCADE).
    const result = await this.pool.query("DELETE FROM conversations WHERE id = $1 AND owner = $2", [
      id,
      ownerOf(options),
    ]);
    return (result.rowCount ?? 0) > 0;
  }

  recordTrace(trace: TraceRecord): Promise<void> {
    return this.traceQueue.enqueue(trace);
  }

  async listTraces(query: TraceQuery = {}): Promise<TracePage> {
    return this.traces.list(query);
  }

  async getTrace(idOrRequestId: string): Promise<TraceRecord | undefined> {
    return this.traces.get(idOrRequestId);
  }

  async pruneTraces(policy: TraceRetentionPolicy): Promise<number> {
    return this.traces.prune(policy);
  }

  async traceUsage(): Promise<TraceUsage> {
    return this.traces.usage();
  }

  traceStats(): TraceWriterStats {
    return this.traceQueue.stats();
  }

  async saveAnswer(answer: NewStoredAnswer, options?: OwnerOptions): Promise<void> {
    const row = answerRow(answer, ownerOf(options));
    const result = await this.pool.query(
      `INSERT INTO answers (id, owner, created_at, previous_id, messages, body)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
      [row.id, row.owner, row.created_at, row.previous_id, row.messages, row.body],
    );
    if (result.rowCount === 0) throw answerExists(answer.id);
  }

  async getAnswer(id: string, options?: OwnerOptions): Promise<StoredAnswer | undefined> {
    const result = await this.pool.query(`SELECT ${ANSWER_COLUMNS} FROM answers WHERE id = $1 AND owner = $2`, [
      id,
      ownerOf(options),
    ]);
    const row = result.rows[0] as AnswerRow | undefined;
    return row === undefined ? undefined : answerFromRow(row);
  }

  async answerChain(id: string, options?: OwnerOptions): Promise<StoredAnswer[] | undefined> {
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

  async deleteAnswer(id: string, options?: OwnerOptions): Promise<boolean> {
    const result = await this.pool.query("DELETE FROM answers WHERE id = $1 AND owner = $2", [id, ownerOf(options)]);
    return (result.rowCount ?? 0) > 0;
  }

  async close(): Promise<void> {
    await this.traceQueue.close();
    await this.pool.end();
  }

  /** One statement, so one implicit transaction: the parts and the completion mark land together. */
  private async writeParts(messageId: string, changes: readonly PartChange[], complete: boolean): Promise<void> {
    await this.pool.query(
      `WITH written AS (
         INSERT INTO parts (message_id, position, part)
         SELECT $1, t.position, t.part FROM unnest($2::integer[], $3::text[]) AS t (position, part)
         ON CONFLICT (message_id, position) DO UPDATE SET part = excluded.part
         RETURNING 1
       )
       UPDATE messages SET complete = true WHERE id = $1 AND $4::boolean`,
      [messageId, changes.map((change) => change.position), changes.map((change) => change.part), complete],
    );
  }
}

/** Applies missing steps under an advisory lock, so gateways starting together never race on the schema. */
export async function migrate(pool: PostgresPool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL)",
    );
    const applied = await client.query("SELECT version FROM schema_migrations");
    const versions = new Set((applied.rows as Array<{ version: number }>).map((row) => row.version));
    for (const migration of postgresMigrations) {
      if (versions.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())", [migration.version]);
    }
    await client.query("COMMIT");
    client.release();
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    client.release(true);
    throw error;
  }
}
