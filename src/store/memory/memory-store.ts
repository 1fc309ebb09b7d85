import { randomUUID } from "node:crypto";
import type { Message, Role } from "../../core/index.js";
import { checkMetadata, listQuery, metadataMatches } from "../catalogue.js";
import { conversationExists, conversationNotFound } from "../errors.js";
import { decodeMessage, emptyEnvelope, encodeMessages, storedMessage } from "../message-codec.js";
import { ownerOf } from "../owner.js";
import { redactTrace } from "../redact.js";
import { ageCutoff, clampLimit, summarizeTrace, traceInstant } from "../retention.js";
import { createStreamingWriter, type FlushPolicy } from "../streaming-writer.js";
import type {
  AppendOptions,
  ConversationStore,
  ConversationSummary,
  CreateOptions,
  ListConversationsOptions,
  OwnerOptions,
  StoredConversation,
  StoredMessage,
  StreamingMessageWriter,
  TraceRecord,
  TraceSummary,
} from "../types.js";

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

interface TraceRow {
  order: number;
  instant: string;
  record: string;
  summary: TraceSummary;
}

/** `memory:` — for tests and throwaway gateways; everything is gone when the process ends. */
export class MemoryStore implements ConversationStore {
  private readonly conversations = new Map<string, ConversationRow>();
  private readonly traces = new Map<string, TraceRow>();
  private traceOrder = 0;
  private readonly flushPolicy: FlushPolicy | undefined;

  constructor(options: { flushPolicy?: FlushPolicy } = {}) {
    this.flushPolicy = options.flushPolicy;
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

  async recordTrace(trace: TraceRecord): Promise<void> {
    const redacted = redactTrace(trace);
    const instant = traceInstant(redacted.createdAt);
    this.traces.set(trace.id, {
      order: this.traceOrder++,
      instant,
      record: JSON.stringify(redacted),
      // Listed by the normalized instant, as the SQL backends list their indexed column.
      summary: { ...summarizeTrace(redacted), createdAt: instant },
    });
  }

  async listTraces(options: { limit?: number } = {}): Promise<TraceSummary[]> {
    return this.newestFirst()
      .slice(0, clampLimit(options.limit))
      .map((row) => ({ ...row.summary }));
  }

  async getTrace(id: string): Promise<TraceRecord | undefined> {
    const row = this.traces.get(id);
    return row ? (JSON.parse(row.record) as TraceRecord) : undefined;
  }

  async pruneTraces(policy: { maxAgeMs?: number; maxCount?: number }): Promise<number> {
    const rows = this.newestFirst();
    const cutoff = policy.maxAgeMs === undefined ? undefined : ageCutoff(policy.maxAgeMs);
    let removed = 0;
    rows.forEach((row, rank) => {
      const tooOld = cutoff !== undefined && row.instant < cutoff;
      const tooMany = policy.maxCount !== undefined && rank >= policy.maxCount;
      if (!tooOld && !tooMany) return;
      this.traces.delete(row.summary.id);
      removed++;
    });
    return removed;
  }

  async close(): Promise<void> {}

  /** The conversation when the owner the call acts for holds it; another owner's is as unknown as a missing one. */
  private owned(id: string, options: OwnerOptions | undefined): ConversationRow | undefined {
    const conversation = this.conversations.get(id);
    return conversation?.owner === ownerOf(options) ? conversation : undefined;
  }

  private newestFirst(): TraceRow[] {
    return [...this.traces.values()].sort((a, b) =>
      a.instant === b.instant ? b.order - a.order : a.instant < b.instant ? 1 : -1,
    );
  }
}

function toStored(row: MessageRow): StoredMessage {
  // Parts a crash left unwritten are holes in the array; the SQL backends never return them either.
  const parts = row.parts.filter((part): part is string => part !== undefined);
  const message = decodeMessage(row.envelope, parts);
  return storedMessage(row.seq, message, row.complete, row.createdAt, row.sourceFormat, row.source);
}
