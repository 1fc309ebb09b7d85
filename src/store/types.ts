// src/store/types.ts  — the store API (fixed; the gateway engineer codes against it now)
import type { LossyEntry, Message, Role, StreamEvent } from "../core/index.js";
export interface StoredMessage {
  seq: number;
  message: Message;
  complete: boolean;
  createdAt: string;
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
/**
 * An answer kept for a later turn (the Responses API's `store`), under the id its client saw. It belongs to the
 * tenant that created it: every read names the owner, and another owner's answer is not there.
 */
export interface StoredAnswer {
  id: string;
  /** Who may read it: the gateway's digest of the client's API key ("" when the gateway takes no keys). */
  owner: string;
  createdAt: string;
  /** The stored answer this turn continued. */
  previousId?: string;
  /** The turn's messages: what the client sent, then the answer. */
  messages: Message[];
  /** The answer as its client got it, in its API's shape, for reading it back. */
  body: unknown;
}
export interface ConversationStore {
  createConversation(options?: { id?: string; metadata?: Record<string, unknown> }): Promise<{ id: string }>;
  hasConversation(id: string): Promise<boolean>;
  appendMessages(conversationId: string, messages: Message[]): Promise<StoredMessage[]>; // throws NotFoundError (ParleyError "not_found_error") for an unknown id
  loadConversation(conversationId: string): Promise<StoredMessage[] | undefined>; // undefined for an unknown id; ordered by seq
  startMessage(conversationId: string, role: Role): Promise<StreamingMessageWriter>; // streaming persistence of an answer
  recordTrace(trace: TraceRecord): Promise<void>;
  listTraces(options?: { limit?: number }): Promise<TraceSummary[]>; // newest first
  getTrace(id: string): Promise<TraceRecord | undefined>;
  pruneTraces(policy: { maxAgeMs?: number; maxCount?: number }): Promise<number>;
  saveAnswer(answer: StoredAnswer): Promise<void>; // an id already stored is an InvalidRequestError (409)
  getAnswer(id: string, owner: string): Promise<StoredAnswer | undefined>; // undefined: unknown, or another owner's
  answerChain(id: string, owner: string): Promise<StoredAnswer[] | undefined>; // the answer and those it continued, oldest first; undefined when one is missing
  deleteAnswer(id: string, owner: string): Promise<boolean>; // false: unknown, or another owner's
  close(): Promise<void>;
}
