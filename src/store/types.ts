// src/store/types.ts  — the store API
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
/**
 * One gateway exchange. The bodies are text exactly as received or sent (the responses cut at
 * `traces.maxBodyBytes`), and come back from `getTrace` byte for byte (after key redaction).
 */
export interface TraceRecord {
  id: string;
  requestId: string;
  createdAt: string;
  route: string;
  provider?: string;
  /** The model the client asked for. */
  clientModel?: string;
  /** The model sent upstream. */
  upstreamModel?: string;
  status?: number;
  durationMs?: number;
  inputTokens?: number;
  outputTokens?: number;
  conversationId?: string;
  /** The tenant of the client's key (`DEFAULT_OWNER` on a gateway without keys), as conversation owners are. */
  tenant?: string;
  stream?: boolean;
  clientRequest?: string;
  upstreamRequest?: string;
  upstreamResponse?: string;
  clientResponse?: string;
  lossy: LossyEntry[];
  repair: unknown[];
  timings: Record<string, number>;
  /**
   * When each piece of a streamed response arrived (upstream) or was written (client): pairs of the piece's
   * offset in the body text and the milliseconds since the request began, flat (`[0, 412.5, 187, 430.1, ...]`).
   */
  arrivals?: { upstreamResponse?: number[]; clientResponse?: number[] };
  /** How many stored messages a stateful turn put in front of the client's: where the repaired history began. */
  storedMessages?: number;
  /**
   * How many of `lossy`'s first entries came from reading the client's request (their paths are the client's)
   * and how many next from writing the upstream request (their paths name the history it was written from);
   * the rest came from the answer.
   */
  lossyStages?: { clientRequest: number; upstreamRequest: number };
}
/** What a trace list shows: everything but the bodies and the reports, which are counted. */
export type TraceSummary = Omit<
  TraceRecord,
  | "clientRequest"
  | "upstreamRequest"
  | "upstreamResponse"
  | "clientResponse"
  | "lossy"
  | "repair"
  | "timings"
  | "arrivals"
  | "storedMessages"
  | "lossyStages"
> & { lossyCount: number; repairCount: number };
/** Filters of `listTraces`, all optional, combined with AND; newest first. */
export interface TraceQuery {
  /** Page size (default 50). */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
  /** An exact status, or an inclusive range (`{ from: 500, to: 599 }`). */
  status?: number | { from: number; to: number };
  /** The client's or the upstream model. */
  model?: string;
  conversationId?: string;
  /** Only traces that did (true) or did not (false) lose something in conversion. */
  hasLosses?: boolean;
  tenant?: string;
}
export interface TracePage {
  traces: TraceSummary[];
  /** Present when more traces match: pass it as `cursor` for the next page. */
  nextCursor?: string;
}
/** Bounds on stored traces; the oldest go first. */
export interface TraceRetentionPolicy {
  maxAgeMs?: number;
  maxCount?: number;
  /** Bytes the stored traces may take (rows and shared body chunks, as stored). */
  maxBytes?: number;
}
export interface TraceUsage {
  traces: number;
  bytes: number;
}
/** The background trace writer's counters since the store opened. */
export interface TraceWriterStats {
  recorded: number;
  /** Dropped because the writer fell behind and its queue was full. */
  dropped: number;
  /** Lost to a write that failed. */
  failed: number;
  /** Waiting for the writer now. */
  queued: number;
}
export interface StreamingMessageWriter {
  readonly seq: number; // assigned by the store when the message was started
  push(event: StreamEvent): void; // synchronous; buffers and flushes in batches (time/size), never one transaction per token
  flush(): Promise<void>; // force what is buffered to disk
  complete(): Promise<StoredMessage>; // final flush, mark complete
  abort(): Promise<void>; // final flush, leave marked incomplete (upstream failed / client gone)
}
/**
 * An answer kept for a later turn (the Responses API's `store`), under the id its client saw. It belongs to an
 * owner as conversations do (see owner.ts): the calls name the owner they act for, and another owner's answer is
 * not there for them.
 */
export interface StoredAnswer {
  id: string;
  /** The tenant that created it (`DEFAULT_OWNER` on a gateway without keys). */
  owner: string;
  createdAt: string;
  /** The stored answer this turn continued. */
  previousId?: string;
  /** The turn's messages: what the client sent, then the answer. */
  messages: Message[];
  /** The answer as its client got it, in its API's shape, for reading it back. */
  body: unknown;
}
/** An answer to keep: its owner is the one the call acts for. */
export type NewStoredAnswer = Omit<StoredAnswer, "owner">;
// Conversation and stored-answer calls act for an owner (see owner.ts; DEFAULT_OWNER when none is named): another
// owner's conversation or answer is unknown to them. Ids are unique across owners: creating one another owner
// holds is a conflict.
export interface ConversationStore {
  createConversation(options?: CreateOptions): Promise<{ id: string }>; // throws ConversationExistsError for an id already taken
  hasConversation(id: string, options?: OwnerOptions): Promise<boolean>;
  appendMessages(conversationId: string, messages: Message[], options?: AppendOptions): Promise<StoredMessage[]>; // throws NotFoundError (ParleyError "not_found_error") for an unknown id
  loadConversation(conversationId: string, options?: OwnerOptions): Promise<StoredMessage[] | undefined>; // undefined for an unknown id; ordered by seq
  startMessage(conversationId: string, role: Role, options?: OwnerOptions): Promise<StreamingMessageWriter>; // streaming persistence of an answer
  listConversations(options?: ListConversationsOptions): Promise<ConversationSummary[]>; // the owner's, newest first
  getConversation(id: string, options?: OwnerOptions): Promise<StoredConversation | undefined>; // undefined for an unknown id
  deleteConversation(id: string, options?: OwnerOptions): Promise<boolean>; // false for an unknown id; its messages go with it
  /**
   * Queues a trace for the background writer and returns at once, never waiting on disk. The promise resolves
   * once the trace is stored and rejects with a `TraceNotRecordedError` when it was dropped (queue full) or its
   * write failed; either is counted in `traceStats()`. Recording an id again replaces that trace.
   */
  recordTrace(trace: TraceRecord): Promise<void>;
  listTraces(query?: TraceQuery): Promise<TracePage>; // newest first
  getTrace(idOrRequestId: string): Promise<TraceRecord | undefined>; // by trace id, or the newest with that request id
  pruneTraces(policy: TraceRetentionPolicy): Promise<number>; // how many traces went
  traceUsage(): Promise<TraceUsage>;
  traceStats(): TraceWriterStats;
  saveAnswer(answer: NewStoredAnswer, options?: OwnerOptions): Promise<void>; // an id already stored is an InvalidRequestError (409)
  getAnswer(id: string, options?: OwnerOptions): Promise<StoredAnswer | undefined>; // undefined: unknown, or another owner's
  answerChain(id: string, options?: OwnerOptions): Promise<StoredAnswer[] | undefined>; // the answer and those it continued, oldest first; undefined when one is missing
  deleteAnswer(id: string, options?: OwnerOptions): Promise<boolean>; // false: unknown, or another owner's
  close(): Promise<void>; // writes what the trace writer holds first
}
