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
export interface AppendOptions {
  sources?: ReadonlyArray<MessageSource | undefined>; // one per message, in order; undefined where there is none
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
export interface ConversationStore {
  createConversation(options?: { id?: string; metadata?: Record<string, unknown> }): Promise<{ id: string }>;
  hasConversation(id: string): Promise<boolean>;
  appendMessages(conversationId: string, messages: Message[], options?: AppendOptions): Promise<StoredMessage[]>; // throws NotFoundError (ParleyError "not_found_error") for an unknown id
  loadConversation(conversationId: string): Promise<StoredMessage[] | undefined>; // undefined for an unknown id; ordered by seq
  startMessage(conversationId: string, role: Role): Promise<StreamingMessageWriter>; // streaming persistence of an answer
  recordTrace(trace: TraceRecord): Promise<void>;
  listTraces(options?: { limit?: number }): Promise<TraceSummary[]>; // newest first
  getTrace(id: string): Promise<TraceRecord | undefined>;
  pruneTraces(policy: { maxAgeMs?: number; maxCount?: number }): Promise<number>;
  close(): Promise<void>;
}
