import { randomUUID } from "node:crypto";
import type { Message, Role } from "../../core/index.js";
import { type AnswerRow, answerExists, answerFromRow, answerRow, chainFromRows } from "../answer-rows.js";
import { checkMetadata, listQuery } from "../catalogue.js";
import { conversationExists, conversationNotFound } from "../errors.js";
import {
  decodeMessage,
  decodeMessageWithParts,
  emptyEnvelope,
  encodeMessages,
  storedMessage,
} from "../message-codec.js";
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
import { configureConnection, convertToIncrementalVacuum } from "./connection.js";
import { sqliteMigrations } from "./migrations.js";
import { SqliteTraceWorker } from "./trace-writer.js";
import { SqliteTraces } from "./traces.js";

/** The part of a SQLite driver this store calls (better-sqlite3 fits it). */
export interface SqliteStatement {
  run(...parameters: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  get(...parameters: unknown[]): unknown;
  all(...parameters: unknown[]): unknown[];
}

export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): unknown;
  /** The file's path (better-sqlite3's `name`); with `memory` false, the trace writer opens it too. */
  readonly name?: string;
  readonly memory?: boolean;
}

interface LoadedRow {
  seq: number;
  complete: number;
  created_at: string;
  extra: string;
  parts: string;
  source_format: string | null;
  source: string | null;
}

/**
 * How long a trace waits for others before the writer's thread gets its batch. A batch's bodies cross in one
 * buffer that comes back for the next, and queued traces are heap on the event loop until they go: at 100 ms
 * (the queue's default, for writers on the event loop) the bench's c=16 loads kept batches of ~250 traces and
 * two buffers of up to 9 MB; at 10 ms the gateway's RSS peaked ~50 MB lower (219 -> 161 MB json, 211 -> 161
 * stream, side by side), its CPU within the noise (a transaction a batch costs the writer little).
 */
const WORKER_BATCH_DELAY_MS = 10;

/**
 * `sqlite:PATH`. The driver is synchronous, so a transaction runs without yielding and no two calls of one
 * process interleave; `BEGIN IMMEDIATE` takes the write lock up front, so two processes on one file
 * serialize (waiting up to `busy_timeout`) instead of failing at commit.
 */
export class SqliteStore implements ConversationStore {
  private readonly database: SqliteDatabase;
  private readonly flushPolicy: FlushPolicy | undefined;
  private readonly statements;
  /** Reads, and (for a database only this connection can reach) writes, of traces on this connection. */
  private readonly traces: SqliteTraces;
  private readonly traceWorker: SqliteTraceWorker | undefined;
  private readonly traceQueue: TraceQueue;

  constructor(database: SqliteDatabase, options: { flushPolicy?: FlushPolicy } & TraceWriterOptions = {}) {
    this.database = database;
    this.flushPolicy = options.flushPolicy;
    configureConnection(database);
    migrate(database);
    convertToIncrementalVacuum(database);
    const retention = writerRetention(options.traceRetention, DEFAULT_TRACE_BYTES.disk);
    const secrets = options.traceSecrets ?? [];
    this.traces = new SqliteTraces(database, retention, secrets);
    const onDisk = database.memory === false && database.name !== undefined && database.name !== "";
    this.traceWorker = onDisk ? new SqliteTraceWorker({ path: database.name!, retention, secrets }) : undefined;
    const traces = this.traces;
    this.traceQueue = new TraceQueue(this.traceWorker ?? { write: async (batch) => traces.write(batch) }, {
      ...(this.traceWorker === undefined ? {} : { delayMs: WORKER_BATCH_DELAY_MS }),
      ...options.traceQueue,
    });
    const prepare = (sql: string) => database.prepare(sql);
    this.statements = {
      begin: prepare("BEGIN IMMEDIATE"),
      commit: prepare("COMMIT"),
      rollback: prepare("ROLLBACK"),
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

  async createConversation(options: CreateOptions = {}): Promise<{ id: string }> {
    const id = options.id ?? randomUUID();
    const result = this.statements.insertConversation.run(
      id,
      new Date().toISOString(),
      JSON.stringify(checkMetadata(options.metadata)),
      ownerOf(options),
    );
    if (result.changes === 0) throw conversationExists(id);
    return { id };
  }

  async hasConversation(id: string, options?: OwnerOptions): Promise<boolean> {
    return this.statements.hasConversation.get(id, ownerOf(options)) !== undefined;
  }

  async appendMessages(
    conversationId: string,
    messages: Message[],
    options: AppendOptions = {},
  ): Promise<StoredMessage[]> {
    const encoded = encodeMessages(messages, options.sources);
    const createdAt = new Date().toISOString();
    return this.transaction(() => {
      const firstSeq = this.reserveSeqs(conversationId, ownerOf(options), encoded.length);
      return encoded.map((message, offset) => {
        const seq = firstSeq + offset;
        const { lastInsertRowid } = this.statements.insertMessage.run(
          conversationId,
          seq,
          message.role,
          1,
          createdAt,
          message.envelope,
          message.sourceFormat,
          message.source,
        );
        message.parts.forEach((part, position) => {
          this.statements.insertPart.run(lastInsertRowid, position, part);
        });
        const decoded = decodeMessage(message.envelope, message.parts);
        return storedMessage(seq, decoded, true, createdAt, message.sourceFormat, message.source);
      });
    });
  }

  async loadConversation(conversationId: string, options?: OwnerOptions): Promise<StoredMessage[] | undefined> {
    // One statement reads one snapshot, even while another process streams into the conversation. Parts
    // come joined into one JSON array text per message, so each message costs one parse.
    const rows = this.statements.load.all(conversationId, ownerOf(options)) as LoadedRow[];
    if (rows.length === 0) return (await this.hasConversation(conversationId, options)) ? [] : undefined;
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

  async startMessage(conversationId: string, role: Role, options?: OwnerOptions): Promise<StreamingMessageWriter> {
    const createdAt = new Date().toISOString();
    const { seq, messageId } = this.transaction(() => {
      const reserved = this.reserveSeqs(conversationId, ownerOf(options), 1);
      const { lastInsertRowid } = this.statements.insertMessage.run(
        conversationId,
        reserved,
        role,
        0,
        createdAt,
        emptyEnvelope(role),
        null,
        null,
      );
      return { seq: reserved, messageId: lastInsertRowid };
    });
    return createStreamingWriter({
      seq,
      role,
      createdAt,
      ...(this.flushPolicy ? { policy: this.flushPolicy } : {}),
      sink: { writeParts: async (changes, complete) => this.writeParts(messageId, changes, complete) },
    });
  }

  async listConversations(options?: ListConversationsOptions): Promise<ConversationSummary[]> {
    const { owner, filters, limit } = listQuery(options);
    // Each filter is one key of the top-level object, matched with its JSON type (json_each reads true as 1).
    const clauses = filters.map(
      ([, value]) => `AND EXISTS (SELECT 1 FROM json_each(c.metadata) j WHERE j.key = ? AND ${typeMatch(value)})`,
    );
    const values = filters.flatMap(([key, value]) =>
      value === null || typeof value === "boolean" ? [key] : [key, value],
    );
    const rows = this.database
      .prepare(
        `SELECT id, created_at, metadata FROM conversations c WHERE owner = ? ${clauses.join(" ")}
         ORDER BY created_at DESC, rowid DESC LIMIT ?`,
      )
      .all(owner, ...values, limit) as Array<{ id: string; created_at: string; metadata: string }>;
    return rows.map((row) => ({ id: row.id, createdAt: row.created_at, metadata: JSON.parse(row.metadata) }));
  }

  async getConversation(id: string, options?: OwnerOptions): Promise<StoredConversation | undefined> {
    const row = this.statements.conversationRow.get(id, ownerOf(options)) as
      | { created_at: string; metadata: string }
      | undefined;
    const messages = row === undefined ? undefined : await this.loadConversation(id, options);
    if (row === undefined || messages === undefined) return undefined;
    return { id, createdAt: row.created_at, metadata: JSON.parse(row.metadata), messages };
  }

  async deleteConversation(id: string, options?: OwnerOptions): Promise<boolean> {
    // Its messages and parts go with it (ON DELETE CASCADE, foreign keys on).
    return this.statements.deleteConversation.run(id, ownerOf(options)).changes > 0;
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

  /** In the writer's thread once it runs (a large prune takes a while), else on this connection. */
  async pruneTraces(policy: TraceRetentionPolicy): Promise<number> {
    if (this.traceWorker?.running) return this.traceWorker.prune(policy);
    return this.traces.prune(policy);
  }

  async traceUsage(): Promise<TraceUsage> {
    return this.traces.usage();
  }

  traceStats(): TraceWriterStats {
    return this.traceQueue.stats();
  }

  async saveAnswer(answer: NewStoredAnswer, options?: OwnerOptions): Promise<void> {
    if (this.statements.insertAnswer.run(answerRow(answer, ownerOf(options))).changes === 0)
      throw answerExists(answer.id);
  }

  async getAnswer(id: string, options?: OwnerOptions): Promise<StoredAnswer | undefined> {
    const row = this.statements.getAnswer.get(id, ownerOf(options)) as AnswerRow | undefined;
    return row === undefined ? undefined : answerFromRow(row);
  }

  async answerChain(id: string, options?: OwnerOptions): Promise<StoredAnswer[] | undefined> {
    return chainFromRows(this.statements.answerChain.all({ id, owner: ownerOf(options) }) as AnswerRow[]);
  }

  async deleteAnswer(id: string, options?: OwnerOptions): Promise<boolean> {
    return this.statements.deleteAnswer.run(id, ownerOf(options)).changes > 0;
  }

  async close(): Promise<void> {
    await this.traceQueue.close();
    await this.traceWorker?.close();
    this.database.close();
  }

  private writeParts(messageId: number | bigint, changes: readonly PartChange[], complete: boolean): void {
    this.transaction(() => {
      for (const change of changes) this.statements.upsertPart.run(messageId, change.position, change.part);
      if (complete) this.statements.markComplete.run(messageId);
    });
  }

  /** Reserves `count` sequence numbers on the conversation row `owner` holds; the first one comes back. */
  private reserveSeqs(conversationId: string, owner: string, count: number): number {
    const row = this.statements.reserveSeq.get(count, conversationId, owner) as { next_seq: number } | undefined;
    if (!row) throw conversationNotFound(conversationId);
    return row.next_seq - count;
  }

  private transaction<T>(work: () => T): T {
    this.statements.begin.run();
    try {
      const result = work();
      this.statements.commit.run();
      return result;
    } catch (error) {
      this.statements.rollback.run();
      throw error;
    }
  }
}

/** The condition on a json_each row that its value is this one, type included. */
function typeMatch(value: string | number | boolean | null): string {
  if (value === null) return "j.type = 'null'";
  if (typeof value === "boolean") return `j.type = '${value}'`;
  return typeof value === "string" ? "j.type = 'text' AND j.atom = ?" : "j.type IN ('integer', 'real') AND j.atom = ?";
}

/** Applies the steps this database lacks, each in its own write transaction, so two processes never race. */
export function migrate(database: SqliteDatabase): void {
  database.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
  for (const migration of sqliteMigrations) {
    database.exec("BEGIN IMMEDIATE");
    try {
      const applied = database.prepare("SELECT 1 FROM schema_migrations WHERE version = ?").get(migration.version);
      if (applied === undefined) {
        database.exec(migration.sql);
        database
          .prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)")
          .run(migration.version, new Date().toISOString());
      }
      database.exec("COMMIT");
    } catch (error) {
      database.exec("ROLLBACK");
      throw error;
    }
  }
}
