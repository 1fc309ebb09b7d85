// src/store/types.ts  — the store API (fixed; the gateway engineer codes against it now)
import type { LossyEntry, Message, Role, StreamEvent, WireFormat } from "../core/index.js";
export interface StoredMessage {
  seq: number;
  message: Message;
  complete: boolean;
  createdAt: string;
  source?: MessageSource; // the message as the client appended it, when it came in a wire format
}
/** A message's own JSON text as a client sent it (in `format`), kept whole beside its parts and given back byte for byte. */
export interface MessageSource {
  format: WireFormat;
  json: string;
}
/** Whose conversation a call acts for (see owner.ts): absent, `DEFAULT_OWNER`. */
export interface OwnerOptions {
  owner?: string;
}
export interface CreateOptions extends OwnerOptions {
  id?: string;
  metadata?: Record<string, unknown>;
}
export interface AppendOptions extends OwnerOptions {
  sources?: ReadonlyArray<MessageSource | undefined>; // one per message, in order; undefined where there is none
}
/** A stored conversation as a list shows it. */
export interface ConversationSummary {
  id: string;
  createdAt: string;
  metadata: Record<string, unknown>;
}
/** A stored conversation read back whole: what it was created with, and its messages in order. */
export interface StoredConversation extends ConversationSummary {
  messages: StoredMessage[];
}
export type MetadataValue = string | number | boolean | null;
export interface ListConversationsOptions extends OwnerOptions {
  metadata?: Record<string, MetadataValue>; // only conversations whose metadata has each key with this value (and type)
  limit?: number; // 1 to 1000, default 100
}
export interface TraceRecord {
  id: string;
  requestId: string;
  createdAt: string;
  route: string;
  provider?: string;
  model?: string;
  status?: number;
  clientRequest?: unknown;
  upstreamRequest?: unknown;
  upstreamResponse?: string;
  clientResponse?: string;
  lossy: LossyEntry[];
  repair: unknown[];
  timings: Record<string, number>;
}
export type TraceSummary = Pick<
  TraceRecord,
  "id" | "requestId" | "createdAt" | "route" | "provider" | "model" | "status"
>;
export interface StreamingMessageWriter {
  readonly seq: number; // assigned by the store when the message was started
  push(event: StreamEvent): void; // synchronous; buffers and flushes in batches (time/size), never one transaction per token
  flush(): Promise<void>; // force what is buffered to disk
  complete(): Promise<StoredMessage>; // final flush, mark complete
  abort(): Promise<void>; // final flush, leave marked incomplete (upstream failed / client gone)
}
// Conversation calls act for an owner (see owner.ts; DEFAULT_OWNER when none is named): another owner's
// conversation is unknown to them. Ids are unique across owners: creating one another owner holds is a conflict.
export interface ConversationStore {
  createConversation(options?: CreateOptions): Promise<{ id: string }>; // throws ConversationExistsError for an id already taken
  hasConversation(id: string, options?: OwnerOptions): Promise<boolean>;
  appendMessages(conversationId: string, messages: Message[], options?: AppendOptions): Promise<StoredMessage[]>; // throws NotFoundError (ParleyError "not_found_error") for an unknown id
  loadConversation(conversationId: string, options?: OwnerOptions): Promise<StoredMessage[] | undefined>; // undefined for an unknown id; ordered by seq
  startMessage(conversationId: string, role: Role, options?: OwnerOptions): Promise<StreamingMessageWriter>; // streaming persistence of an answer
  listConversations(options?: ListConversationsOptions): Promise<ConversationSummary[]>; // the owner's, newest first
  getConversation(id: string, options?: OwnerOptions): Promise<StoredConversation | undefined>; // undefined for an unknown id
  deleteConversation(id: string, options?: OwnerOptions): Promise<boolean>; // false for an unknown id; its messages go with it
  recordTrace(trace: TraceRecord): Promise<void>;
  listTraces(options?: { limit?: number }): Promise<TraceSummary[]>; // newest first
  getTrace(id: string): Promise<TraceRecord | undefined>;
  pruneTraces(policy: { maxAgeMs?: number; maxCount?: number }): Promise<number>;
  close(): Promise<void>;
}
