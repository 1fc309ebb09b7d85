import { randomUUID } from "node:crypto";
import type { Message, Role } from "../../core/index.js";
import { checkMetadata, listQuery, metadataMatches } from "../conversations/catalogue.js";
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
import { createStreamingWriter, type FlushPolicy } from "../conversations/streaming-writer.js";
import { conversationExists, conversationNotFound } from "../errors.js";
import { type OwnerOptions, ownerOf } from "../owner.js";

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

/** The conversations of `memory:` — for tests and throwaway gateways; everything is gone when the process ends. */
export class MemoryConversations implements ConversationStore {
  private readonly conversations = new Map<string, ConversationRow>();

  constructor(private readonly flushPolicy?: FlushPolicy) {}

  async create(options: CreateOptions = {}): Promise<{ id: string }> {
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

  async has(id: string, options?: OwnerOptions): Promise<boolean> {
    return this.owned(id, options) !== undefined;
  }

  async append(conversationId: string, messages: Message[], options: AppendOptions = {}): Promise<StoredMessage[]> {
    const conversation = this.owned(conversationId, options);
    if (!conversation) throw conversationNotFound(conversationId);
    return appendRows(conversation, messages, options);
  }

  async load(conversationId: string, options?: OwnerOptions): Promise<StoredMessage[] | undefined> {
    return this.owned(conversationId, options)?.messages.map(toStored);
  }

  async startMessage(
    conversationId: string,
    role: Role,
    options: StartMessageOptions = {},
  ): Promise<StreamingMessageWriter> {
    const conversation = this.owned(conversationId, options);
    if (!conversation) throw conversationNotFound(conversationId);
    // The question first (encoded before anything is touched), then the answer: one call, so nothing between them.
    if (options.question !== undefined) appendRows(conversation, options.question, options);
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

  async list(options?: ListConversationsOptions): Promise<ConversationSummary[]> {
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

  async get(id: string, options?: OwnerOptions): Promise<StoredConversation | undefined> {
    const conversation = this.owned(id, options);
    if (conversation === undefined) return undefined;
    const metadata = JSON.parse(conversation.metadata) as Record<string, unknown>;
    return { id, createdAt: conversation.createdAt, metadata, messages: conversation.messages.map(toStored) };
  }

  async delete(id: string, options?: OwnerOptions): Promise<boolean> {
    return this.owned(id, options) !== undefined && this.conversations.delete(id);
  }

  /** The conversation when the owner the call acts for holds it; another owner's is as unknown as a missing one. */
  private owned(id: string, options: OwnerOptions | undefined): ConversationRow | undefined {
    const conversation = this.conversations.get(id);
    return conversation?.owner === ownerOf(options) ? conversation : undefined;
  }
}

/** Appends complete messages, synchronously: nothing else runs between them and what the caller adds next. */
function appendRows(conversation: ConversationRow, messages: Message[], options: AppendOptions): StoredMessage[] {
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

function toStored(row: MessageRow): StoredMessage {
  // Parts a crash left unwritten are holes in the array; the SQL backends never return them either.
  const parts = row.parts.filter((part): part is string => part !== undefined);
  const message = decodeMessage(row.envelope, parts);
  return storedMessage(row.seq, message, row.complete, row.createdAt, row.sourceFormat, row.source);
}
