import { randomUUID } from "node:crypto";
import type { Message, Role } from "../../core/index.js";
import { checkMetadata, listQuery } from "../conversations/catalogue.js";
import type {
  AppendOptions,
  ConversationStore,
  ConversationSummary,
  CreateOptions,
  ListConversationsOptions,
  StartMessageOptions,
  StoredConversation,
  StoredMessage,
  StreamingMessageWriter,
} from "../conversations/conversation-store.js";
import { decodeMessage, emptyEnvelope, encodeMessages, storedMessage } from "../conversations/message-codec.js";
import type { PartChange } from "../conversations/part-builder.js";
import { createStreamingWriter, type FlushPolicy } from "../conversations/streaming-writer.js";
import { conversationExists, conversationNotFound } from "../errors.js";
import { type OwnerOptions, ownerOf } from "../owner.js";
import type { PostgresPool } from "./driver.js";

interface LoadedRow {
  seq: number;
  complete: boolean;
  created_at: string;
  extra: string;
  source_format: string | null;
  source: string | null;
}

/** A message to insert, as `encodeMessages` gives it, and whether it is complete. */
interface MessageInsert {
  role: string;
  envelope: string;
  parts: readonly string[];
  sourceFormat: string | null;
  source: string | null;
  complete: boolean;
}

/** The messages' conversation is held by the owner in `$2`. */
const OWNED = "EXISTS (SELECT 1 FROM conversations c WHERE c.id = $1 AND c.owner = $2)";

/** A conversation's creation instant as the other backends give it (`toISOString()` form). */
const ISO_CREATED_AT = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

/**
 * The conversations of `postgres://...`. Every sequence number comes from the conversation row's `next_seq`,
 * incremented in the writing transaction: the row lock that update takes serializes appends to one conversation
 * across every pool and process, while appends to different conversations run side by side.
 */
export class PostgresConversations implements ConversationStore {
  constructor(
    private readonly pool: PostgresPool,
    private readonly flushPolicy?: FlushPolicy,
  ) {}

  async create(options: CreateOptions = {}): Promise<{ id: string }> {
    const id = options.id ?? randomUUID();
    const result = await this.pool.query(
      "INSERT INTO conversations (id, created_at, metadata, owner) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING",
      [id, new Date().toISOString(), JSON.stringify(checkMetadata(options.metadata)), ownerOf(options)],
    );
    if (result.rowCount === 0) throw conversationExists(id);
    return { id };
  }

  async has(id: string, options?: OwnerOptions): Promise<boolean> {
    const result = await this.pool.query("SELECT 1 FROM conversations WHERE id = $1 AND owner = $2", [
      id,
      ownerOf(options),
    ]);
    return result.rows.length > 0;
  }

  async append(conversationId: string, messages: Message[], options: AppendOptions = {}): Promise<StoredMessage[]> {
    const encoded = encodeMessages(messages, options.sources);
    const createdAt = new Date().toISOString();
    const inserts = encoded.map((message) => ({ ...message, complete: true }));
    const { firstSeq } = await this.insertMessages(conversationId, ownerOf(options), inserts, createdAt);
    return encoded.map((message, offset) =>
      storedMessage(
        firstSeq + offset,
        decodeMessage(message.envelope, message.parts),
        true,
        createdAt,
        message.sourceFormat,
        message.source,
      ),
    );
  }

  async load(conversationId: string, options?: OwnerOptions): Promise<StoredMessage[] | undefined> {
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
    if (messages.length === 0) return (await this.has(conversationId, options)) ? [] : undefined;
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

  async startMessage(
    conversationId: string,
    role: Role,
    options: StartMessageOptions = {},
  ): Promise<StreamingMessageWriter> {
    const createdAt = new Date().toISOString();
    // The question and the answer's row in one statement: their seqs are consecutive whoever else writes.
    const question = encodeMessages(options.question ?? [], options.sources).map((message) => ({
      ...message,
      complete: true,
    }));
    const answer = {
      role,
      envelope: emptyEnvelope(role),
      parts: [],
      sourceFormat: null,
      source: null,
      complete: false,
    };
    const inserted = await this.insertMessages(conversationId, ownerOf(options), [...question, answer], createdAt);
    const row = { id: inserted.lastId, seq: inserted.firstSeq + question.length };
    return createStreamingWriter({
      seq: row.seq,
      role,
      createdAt,
      ...(this.flushPolicy ? { policy: this.flushPolicy } : {}),
      sink: { writeParts: (changes, complete) => this.writeParts(row.id, changes, complete) },
    });
  }

  async list(options?: ListConversationsOptions): Promise<ConversationSummary[]> {
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

  async get(id: string, options?: OwnerOptions): Promise<StoredConversation | undefined> {
    const result = await this.pool.query(
      `SELECT metadata, ${ISO_CREATED_AT} FROM conversations WHERE id = $1 AND owner = $2`,
      [id, ownerOf(options)],
    );
    const row = result.rows[0] as { created_at: string; metadata: string } | undefined;
    const messages = row === undefined ? undefined : await this.load(id, options);
    if (row === undefined || messages === undefined) return undefined;
    return { id, createdAt: row.created_at, metadata: JSON.parse(row.metadata), messages };
  }

  async delete(id: string, options?: OwnerOptions): Promise<boolean> {
    // Its messages and parts go with it (ON DELETE CASCADE).
    const result = await this.pool.query("DELETE FROM conversations WHERE id = $1 AND owner = $2", [
      id,
      ownerOf(options),
    ]);
    return (result.rowCount ?? 0) > 0;
  }

  /**
   * Inserts messages with consecutive seqs from the conversation row, and their parts. One statement, so one round
   * trip and one implicit transaction: the UPDATE's row lock serializes writers to this conversation until the
   * messages and parts are in.
   */
  private async insertMessages(
    conversationId: string,
    owner: string,
    messages: readonly MessageInsert[],
    createdAt: string,
  ): Promise<{ firstSeq: number; lastId: string }> {
    const messageOffsets: number[] = [];
    const positions: number[] = [];
    const parts: string[] = [];
    messages.forEach((message, offset) => {
      message.parts.forEach((part, position) => {
        messageOffsets.push(offset);
        positions.push(position);
        parts.push(part);
      });
    });
    const result = await this.pool.query(
      `WITH reserved AS (
         UPDATE conversations SET next_seq = next_seq + $2 WHERE id = $1 AND owner = $11
         RETURNING next_seq - $2 AS first_seq
       ), inserted AS (
         INSERT INTO messages (conversation_id, seq, role, complete, created_at, extra, source_format, source)
         SELECT $1, reserved.first_seq + t.offset_in_call::integer - 1, t.role, t.complete, $3, t.extra, t.source_format,
           t.source
         FROM reserved, unnest($4::text[], $5::text[], $9::text[], $10::text[], $12::boolean[])
           WITH ORDINALITY AS t (role, extra, source_format, source, complete, offset_in_call)
         RETURNING id, seq
       ), written AS (
         INSERT INTO parts (message_id, position, part)
         SELECT inserted.id, p.position, p.part
         FROM unnest($6::integer[], $7::integer[], $8::text[]) AS p (message_offset, position, part)
         JOIN inserted ON inserted.seq = (SELECT first_seq FROM reserved) + p.message_offset
         RETURNING 1
       )
       SELECT first_seq, (SELECT id FROM inserted ORDER BY seq DESC LIMIT 1) AS last_id,
         (SELECT count(*) FROM written) AS parts_written
       FROM reserved`,
      [
        conversationId,
        messages.length,
        createdAt,
        messages.map((message) => message.role),
        messages.map((message) => message.envelope),
        messageOffsets,
        positions,
        parts,
        messages.map((message) => message.sourceFormat),
        messages.map((message) => message.source),
        owner,
        messages.map((message) => message.complete),
      ],
    );
    const row = result.rows[0] as { first_seq: number; last_id: string } | undefined;
    if (!row) throw conversationNotFound(conversationId);
    return { firstSeq: row.first_seq, lastId: row.last_id };
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
