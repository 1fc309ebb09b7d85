// src/store/conversations/conversation-store.ts — the conversation store's API
import type { Message, Role, StreamEvent, WireFormat } from "../../core/index.js";
import type { OwnerOptions } from "../owner.js";
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
export interface CreateOptions extends OwnerOptions {
  id?: string;
  metadata?: Record<string, unknown>;
}
export interface AppendOptions extends OwnerOptions {
  sources?: ReadonlyArray<MessageSource | undefined>; // one per message, in order; undefined where there is none
}
/**
 * A streamed answer's start. With `question`, those messages are appended in the same transaction, just before the
 * answer (`sources` are theirs): the turn's seqs are consecutive, so no other writer's message can come between a
 * question and its answer.
 */
export interface StartMessageOptions extends AppendOptions {
  question?: Message[];
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
export interface StreamingMessageWriter {
  readonly seq: number; // assigned by the store when the message was started
  push(event: StreamEvent): void; // synchronous; buffers and flushes in batches (time/size), never one transaction per token
  flush(): Promise<void>; // force what is buffered to disk
  complete(): Promise<StoredMessage>; // final flush, mark complete
  abort(): Promise<void>; // final flush, leave marked incomplete (upstream failed / client gone)
}
// Every call acts for an owner (see owner.ts; DEFAULT_OWNER when none is named): another owner's conversation is
// unknown to it. Ids are unique across owners: creating one another owner holds is a conflict.
export interface ConversationStore {
  create(options?: CreateOptions): Promise<{ id: string }>; // throws ConversationExistsError for an id already taken
  has(id: string, options?: OwnerOptions): Promise<boolean>;
  append(conversationId: string, messages: Message[], options?: AppendOptions): Promise<StoredMessage[]>; // throws NotFoundError (ParleyError "not_found_error") for an unknown id
  load(conversationId: string, options?: OwnerOptions): Promise<StoredMessage[] | undefined>; // undefined for an unknown id; ordered by seq
  startMessage(conversationId: string, role: Role, options?: StartMessageOptions): Promise<StreamingMessageWriter>; // streaming persistence of an answer (after its question, when given)
  list(options?: ListConversationsOptions): Promise<ConversationSummary[]>; // the owner's, newest first
  get(id: string, options?: OwnerOptions): Promise<StoredConversation | undefined>; // undefined for an unknown id
  delete(id: string, options?: OwnerOptions): Promise<boolean>; // false for an unknown id; its messages go with it
}
