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
import {
  decodeMessage,
  decodeMessageWithParts,
  emptyEnvelope,
  encodeMessages,
  storedMessage,
} from "../conversations/message-codec.js";
import type { PartChange } from "../conversations/part-builder.js";
import { createStreamingWriter, type FlushPolicy } from "../conversations/streaming-writer.js";
import { DEFAULT_STORE_DEADLINE_MS } from "../deadline.js";
import { conversationExists, conversationNotFound } from "../errors.js";
import { type OwnerOptions, ownerOf } from "../owner.js";
import { type SqliteDatabase, transactions, whenUnlocked } from "./driver.js";

interface LoadedRow {
  seq: number;
  complete: number;
  created_at: string;
  extra: string;
  parts: string;
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

/**
 * The conversations of `sqlite:PATH`. The driver is synchronous, so a transaction runs without yielding and no two
 * calls of one process interleave; `BEGIN IMMEDIATE` takes the write lock up front, so two processes on one file
 * serialize instead of failing at commit. A lock another process holds is waited for off the event loop, up to
 * the deadline (`whenUnlocked`).
 */
export class SqliteConversations implements ConversationStore {
  private readonly statements;
  private readonly transaction: <T>(work: () => T) => T;
  private readonly flushPolicy: FlushPolicy | undefined;
  private readonly deadlineMs: number;

  constructor(
    private readonly database: SqliteDatabase,
    options: { flushPolicy?: FlushPolicy | undefined; deadlineMs?: number | undefined } = {},
  ) {
    this.flushPolicy = options.flushPolicy;
    this.deadlineMs = options.deadlineMs ?? DEFAULT_STORE_DEADLINE_MS;
    this.transaction = transactions(database);
    const prepare = (sql: string) => database.prepare(sql);
    this.statements = {
      insertConversation: prepare(
        "INSERT INTO conversations (id, created_at, metadata, owner) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
      ),
      hasConversation: prepare("SELECT 1 FROM conversations WHERE id = ? AND owner = ?"),
      conversationRow: prepare("SELECT created_at, metadata FROM conversations WHERE id = ? AND owner = ?"),
      deleteConversation: prepare("DELETE FROM conversations WHERE id = ? AND owner = ?"),
      reserveSeq: prepare(
        "UPDATE conversations SET next_seq = next_seq + ? WHERE id = ? AND owner = ? RETURNING next_seq",
      ),
      insertMessage: prepare(
        "INSERT INTO messages (conversation_id, seq, role, complete, created_at, extra, source_format, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      ),
      insertPart: prepare("INSERT INTO parts (message_id, position, part) VALUES (?, ?, ?)"),
      upsertPart: prepare(
        "INSERT INTO parts (message_id, position, part) VALUES (?, ?, ?) ON CONFLICT (message_id, position) DO UPDATE SET part = excluded.part",
      ),
      markComplete: prepare("UPDATE messages SET complete = 1 WHERE id = ?"),
      load: prepare(
        `SELECT m.seq, m.complete, m.created_at, m.extra, m.source_format, m.source,
           '[' || coalesce((SELECT group_concat(p.part, ',' ORDER BY p.position) FROM parts p WHERE p.message_id = m.id), '') || ']' AS parts
         FROM messages m WHERE m.conversation_id = ?
           AND EXISTS (SELECT 1 FROM conversations c WHERE c.id = m.conversation_id AND c.owner = ?)
         ORDER BY m.seq`,
      ),
    };
  }

  async create(options: CreateOptions = {}): Promise<{ id: string }> {
    const id = options.id ?? randomUUID();
    const metadata = JSON.stringify(checkMetadata(options.metadata));
    const createdAt = new Date().toISOString();
    const result = await this.unlocked(() =>
      this.statements.insertConversation.run(id, createdAt, metadata, ownerOf(options)),
    );
    if (result.changes === 0) throw conversationExists(id);
    return { id };
  }

  async has(id: string, options?: OwnerOptions): Promise<boolean> {
    return (await this.unlocked(() => this.statements.hasConversation.get(id, ownerOf(options)))) !== undefined;
  }

  async append(conversationId: string, messages: Message[], options: AppendOptions = {}): Promise<StoredMessage[]> {
    const encoded = encodeMessages(messages, options.sources);
    const createdAt = new Date().toISOString();
    const inserts = encoded.map((message) => ({ ...message, complete: true }));
    const { firstSeq } = await this.unlocked(() =>
      this.transaction(() => this.insertMessages(conversationId, ownerOf(options), inserts, createdAt)),
    );
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
    // One statement reads one snapshot, even while another process streams into the conversation. Parts
    // come joined into one JSON array text per message, so each message costs one parse.
    const rows = (await this.unlocked(() => this.statements.load.all(conversationId, ownerOf(options)))) as LoadedRow[];
    if (rows.length === 0) return (await this.has(conversationId, options)) ? [] : undefined;
    return rows.map((row) =>
      storedMessage(
        row.seq,
        decodeMessageWithParts(row.extra, row.parts),
        row.complete === 1,
        row.created_at,
        row.source_format,
        row.source,
      ),
    );
  }

  async startMessage(
    conversationId: string,
    role: Role,
    options: StartMessageOptions = {},
  ): Promise<StreamingMessageWriter> {
    const createdAt = new Date().toISOString();
    // The question and the answer's row in one transaction: their seqs are consecutive whoever else writes.
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
    const { firstSeq, lastId: messageId } = await this.unlocked(() =>
      this.transaction(() => this.insertMessages(conversationId, ownerOf(options), [...question, answer], createdAt)),
    );
    const seq = firstSeq + question.length;
    return createStreamingWriter({
      seq,
      role,
      createdAt,
      ...(this.flushPolicy ? { policy: this.flushPolicy } : {}),
      sink: { writeParts: async (changes, complete) => this.writeParts(messageId, changes, complete) },
    });
  }

  async list(options?: ListConversationsOptions): Promise<ConversationSummary[]> {
    const { owner, filters, limit } = listQuery(options);
    // Each filter is one key of the top-level object, matched with its JSON type (json_each reads true as 1).
    const clauses = filters.map(
      ([, value]) => `AND EXISTS (SELECT 1 FROM json_each(c.metadata) j WHERE j.key = ? AND ${typeMatch(value)})`,
    );
    const values = filters.flatMap(([key, value]) =>
      value === null || typeof value === "boolean" ? [key] : [key, value],
    );
    const statement = this.database.prepare(
      `SELECT id, created_at, metadata FROM conversations c WHERE owner = ? ${clauses.join(" ")}
       ORDER BY created_at DESC, rowid DESC LIMIT ?`,
    );
    const rows = (await this.unlocked(() => statement.all(owner, ...values, limit))) as Array<{
      id: string;
      created_at: string;
      metadata: string;
    }>;
    return rows.map((row) => ({ id: row.id, createdAt: row.created_at, metadata: JSON.parse(row.metadata) }));
  }

  async get(id: string, options?: OwnerOptions): Promise<StoredConversation | undefined> {
    const row = (await this.unlocked(() => this.statements.conversationRow.get(id, ownerOf(options)))) as
      | { created_at: string; metadata: string }
      | undefined;
    const messages = row === undefined ? undefined : await this.load(id, options);
    if (row === undefined || messages === undefined) return undefined;
    return { id, createdAt: row.created_at, metadata: JSON.parse(row.metadata), messages };
  }

  async delete(id: string, options?: OwnerOptions): Promise<boolean> {
    // Its messages and parts go with it (ON DELETE CASCADE, foreign keys on).
    return (await this.unlocked(() => this.statements.deleteConversation.run(id, ownerOf(options)))).changes > 0;
  }

  private writeParts(messageId: number | bigint, changes: readonly PartChange[], complete: boolean): Promise<void> {
    return this.unlocked(() =>
      this.transaction(() => {
        for (const change of changes) this.statements.upsertPart.run(messageId, change.position, change.part);
        if (complete) this.statements.markComplete.run(messageId);
      }),
    );
  }

  /** Inserts messages with consecutive seqs from the conversation row, in the caller's transaction. */
  private insertMessages(
    conversationId: string,
    owner: string,
    messages: readonly MessageInsert[],
    createdAt: string,
  ): { firstSeq: number; lastId: number | bigint } {
    const firstSeq = this.reserveSeqs(conversationId, owner, messages.length);
    let lastId: number | bigint = 0;
    messages.forEach((message, offset) => {
      const { lastInsertRowid } = this.statements.insertMessage.run(
        conversationId,
        firstSeq + offset,
        message.role,
        message.complete ? 1 : 0,
        createdAt,
        message.envelope,
        message.sourceFormat,
        message.source,
      );
      message.parts.forEach((part, position) => {
        this.statements.insertPart.run(lastInsertRowid, position, part);
      });
      lastId = lastInsertRowid;
    });
    return { firstSeq, lastId };
  }

  /** A call's statements, tried again off the event loop while another connection holds the lock (up to the deadline). */
  private unlocked<T>(work: () => T): Promise<T> {
    return whenUnlocked(work, this.deadlineMs);
  }

  /** Reserves `count` sequence numbers on the conversation row `owner` holds; the first one comes back. */
  private reserveSeqs(conversationId: string, owner: string, count: number): number {
    const row = this.statements.reserveSeq.get(count, conversationId, owner) as { next_seq: number } | undefined;
    if (!row) throw conversationNotFound(conversationId);
    return row.next_seq - count;
  }
}

/** The condition on a json_each row that its value is this one, type included. */
function typeMatch(value: string | number | boolean | null): string {
  if (value === null) return "j.type = 'null'";
  if (typeof value === "boolean") return `j.type = '${value}'`;
  return typeof value === "string" ? "j.type = 'text' AND j.atom = ?" : "j.type IN ('integer', 'real') AND j.atom = ?";
}
