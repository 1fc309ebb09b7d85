import { randomUUID } from "node:crypto";
import type { Message, Role } from "../../core/index.js";
import { type AnswerRow, answerExists, answerFromRow, answerRow, chainFromRows } from "../answer-rows.js";
import { checkMetadata, listQuery, metadataMatches } from "../catalogue.js";
import { conversationExists, conversationNotFound } from "../errors.js";
import { decodeMessage, emptyEnvelope, encodeMessages, storedMessage } from "../message-codec.js";
import { ownerOf } from "../owner.js";
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
import { MemoryTraces } from "./traces.js";

/** Rows as the SQL backends hold them: JSON text, so the memory store proves the same byte-equality. */
interface MessageRow {
  seq: number;
  complete: boolean;
  createdAt: string;
  envelope: string;
  parts: string[];
  sourceFormat: string | null;
  source: string | null;
}

interface ConversationRow {
  owner: string;
  createdAt: string;
  metadata: string;
  nextSeq: number;
  messages: MessageRow[];
}

/** `memory:` — for tests and throwaway gateways; everything is gone when the process ends. */
export class MemoryStore implements ConversationStore {
  private readonly conversations = new Map<string, ConversationRow>();
  private readonly traces: MemoryTraces;
  private readonly traceQueue: TraceQueue;
  private readonly answers = new Map<string, AnswerRow>();
  private readonly flushPolicy: FlushPolicy | undefined;

  constructor(options: { flushPolicy?: FlushPolicy } & TraceWriterOptions = {}) {
    this.flushPolicy = options.flushPolicy;
    const retention = writerRetention(options.traceRetention, DEFAULT_TRACE_BYTES.memory);
    this.traces = new MemoryTraces(retention, options.traceSecrets ?? []);
    // Deferred to a timer, so that chunking runs after the response rather than on the request path.
    const traces = this.traces;
    // Small batches: here a batch is held in the heap until it is written, and there is no commit to share.
    this.traceQueue = new TraceQueue(
      { write: (batch) => traces.write(batch) },
      { batchTraces: 64, delayMs: 20, ...options.traceQueue },
    );
  }

  async createConversation(options: CreateOptions = {}): Promise<{ id: string }> {
    const id = options.id ?? randomUUID();
    if (this.conversations.has(id)) throw conversationExists(id);
    this.conversations.set(id, {
      owner: ownerOf(options),
      createdAt: new Date().toISOString(),
      metadata: JSON.stringify(checkMetadata(options.metadata)),
      nextSeq: 1,
      messages: [],
    });
    return { id };
  }

  async hasConversation(id: string, options?: OwnerOptions): Promise<boolean> {
    return this.owned(id, options) !== undefined;
  }

  async appendMessages(
    conversationId: string,
    messages: Message[],
    options: AppendOptions = {},
  ): Promise<StoredMessage[]> {
    const conversation = this.owned(conversationId, options);
    if (!conversation) throw conversationNotFound(conversationId);
    // Encode everything before touching the conversation, so a bad message appends nothing.
    const encoded = encodeMessages(messages, options.sources);
    const createdAt = new Date().toISOString();
    return encoded.map((message) => {
      const row: MessageRow = {
        seq: conversation.nextSeq++,
        complete: true,
        createdAt,
        envelope: message.envelope,
        parts: message.parts,
        sourceFormat: message.sourceFormat,
        source: message.source,
      };
      conversation.messages.push(row);
      return toStored(row);
    });
  }

  async loadConversation(conversationId: string, options?: OwnerOptions): Promise<StoredMessage[] | undefined> {
    return this.owned(conversationId, options)?.messages.map(toStored);
  }

  async startMessage(conversationId: string, role: Role, options?: OwnerOptions): Promise<StreamingMessageWriter> {
    const conversation = this.owned(conversationId, options);
    if (!conversation) throw conversationNotFound(conversationId);
    const row: MessageRow = {
      seq: conversation.nextSeq++,
      complete: false,
      createdAt: new Date().toISOString(),
      envelope: emptyEnvelope(role),
      parts: [],
      sourceFormat: null,
      source: null,
    };
    conversation.messages.push(row);
    return createStreamingWriter({
      seq: row.seq,
      role,
      createdAt: row.createdAt,
      ...(this.flushPolicy ? { policy: this.flushPolicy } : {}),
      sink: {
        async writeParts(changes, complete) {
          for (const change of changes) row.parts[change.position] = change.part;
          if (complete) row.complete = true;
        },
      },
    });
  }

  async listConversations(options?: ListConversationsOptions): Promise<ConversationSummary[]> {
    const query = listQuery(options);
    const found: ConversationSummary[] = [];
    // Newest first: the map keeps creation order, so it is read backwards.
    for (const [id, conversation] of [...this.conversations].reverse()) {
      if (found.length === query.limit) break;
      if (conversation.owner !== query.owner) continue;
      const metadata = JSON.parse(conversation.metadata) as Record<string, unknown>;
      if (metadataMatches(metadata, query.filters)) found.push({ id, createdAt: conversation.createdAt, metadata });
    }
    return found;
  }

  async getConversation(id: string, options?: OwnerOptions): Promise<StoredConversation | undefined> {
    const conversation = this.owned(id, options);
    if (conversation === undefined) return undefined;
    const metadata = JSON.parse(conversation.metadata) as Record<string, unknown>;
    return { id, createdAt: conversation.createdAt, metadata, messages: conversation.messages.map(toStored) };
  }

  async deleteConversation(id: string, options?: OwnerOptions): Promise<boolean> {
    return this.owned(id, options) !== undefined && this.conversations.delete(id);
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
    if (this.answers.has(answer.id)) throw answerExists(answer.id);
    this.answers.set(answer.id, answerRow(answer, ownerOf(options)));
  }

  async getAnswer(id: string, options?: OwnerOptions): Promise<StoredAnswer | undefined> {
    const row = this.ownedAnswer(id, ownerOf(options));
    return row === undefined ? undefined : answerFromRow(row);
  }

  async answerChain(id: string, options?: OwnerOptions): Promise<StoredAnswer[] | undefined> {
    const owner = ownerOf(options);
    const rows: AnswerRow[] = [];
    for (let row = this.ownedAnswer(id, owner); row !== undefined; ) {
      rows.push(row);
      row = row.previous_id === null ? undefined : this.ownedAnswer(row.previous_id, owner);
    }
    return chainFromRows(rows);
  }

  async deleteAnswer(id: string, options?: OwnerOptions): Promise<boolean> {
    return this.ownedAnswer(id, ownerOf(options)) !== undefined && this.answers.delete(id);
  }

  async close(): Promise<void> {
    await this.traceQueue.close();
  }

  /** The conversation when the owner the call acts for holds it; another owner's is as unknown as a missing one. */
  private owned(id: string, options: OwnerOptions | undefined): ConversationRow | undefined {
    const conversation = this.conversations.get(id);
    return conversation?.owner === ownerOf(options) ? conversation : undefined;
  }

  private ownedAnswer(id: string, owner: string): AnswerRow | undefined {
    const row = this.answers.get(id);
    return row?.owner === owner ? row : undefined;
  }
}

function toStored(row: MessageRow): StoredMessage {
  // Parts a crash left unwritten are holes in the array; the SQL backends never return them either.
  const parts = row.parts.filter((part): part is string => part !== undefined);
  const message = decodeMessage(row.envelope, parts);
  return storedMessage(row.seq, message, row.complete, row.createdAt, row.sourceFormat, row.source);
}
