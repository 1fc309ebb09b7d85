/**
 * The JSON the inspector's endpoints answer with, as the page reads it. Types only: the page's bundle imports
 * nothing else from the server side.
 */

export interface TraceRow {
  id: string;
  requestId: string;
  createdAt: string;
  route: string;
  provider?: string;
  clientModel?: string;
  upstreamModel?: string;
  status?: number;
  durationMs?: number;
  /** The prompt's tokens neither read from nor written to the provider's cache. */
  inputTokens?: number;
  /** The prompt's tokens read from the cache; absent in a trace from before they were kept. */
  cacheReadTokens?: number;
  /** The prompt's tokens written to the cache. */
  cacheWriteTokens?: number;
  outputTokens?: number;
  /** Cache reads over the whole prompt (fresh input, reads and writes), 0 to 1; absent when not known. */
  cacheHitRatio?: number;
  /**
   * Where the conversation's previous answered turn went, when this one went to another provider or model: the
   * provider's cache for this conversation was empty.
   */
  switchedFrom?: { provider: string; model: string };
  conversationId?: string;
  stream?: boolean;
  lossyCount: number;
  repairCount: number;
}

/** A conversation's token figures over the exchanges whose figures are known. */
export interface TokenTotals {
  /** How many exchanges they add up. */
  exchanges: number;
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  cacheHitRatio?: number;
  /** Exchanges whose turn went elsewhere than the one before (`TraceRow.switchedFrom`). */
  switches: number;
}

export interface TraceList {
  traces: TraceRow[];
  nextCursor?: string;
}

/** A report entry (a loss, a repair) as shown: where it points, and whether a block was found there. */
export interface Note {
  kind: "lossy" | "repair";
  code: string;
  message: string;
  path?: string;
}

export type BlockKind =
  | "text"
  | "thinking"
  | "redacted_thinking"
  | "tool_call"
  | "tool_result"
  | "image"
  | "document"
  | "opaque";

export interface Block {
  kind: BlockKind;
  path: string;
  /** `tool call Bash (toolu_01)`, `thinking (signed)`. */
  title: string;
  text: string;
  /** A base64 image small enough to show (png, jpeg, gif, webp only). */
  image?: { mediaType: string; data: string };
  /** A right-hand block whose text is its left-hand twin's: `text` is empty and the page shows the other's. */
  sameText?: boolean;
  notes: Note[];
}

export interface MessageHead {
  role: string;
  path: string;
  notes: Note[];
  /** `merged from messages[2], messages[3]`, `split into ...`: what alignment saw. */
  remarks: string[];
}

export type Change = "same" | "changed" | "moved" | "removed" | "added";

/** One line of two aligned sides: a block of each (either may be missing), the messages they start. */
export interface Row {
  change: Change;
  /** For a changed pair: what changed (`thinking became text`, `text differs`). */
  detail?: string;
  left?: Block;
  right?: Block;
  leftMessage?: MessageHead;
  rightMessage?: MessageHead;
}

export interface Side {
  /** `Anthropic Messages`; absent when the body is not one the adapters can read. */
  format?: string;
  model?: string;
  tools?: string[];
  bytes: number;
  /** The body could not be read as messages: the page shows it raw. */
  unread?: boolean;
}

export interface Pairing {
  left: Side;
  right: Side;
  rows: Row[];
}

export interface StreamEventView {
  /** Ms since the request began, when the trace has arrival times. */
  ms?: number;
  event?: string;
  data: string;
}

export interface StreamView {
  events: StreamEventView[];
  /** Events past the first 5,000 are not listed. */
  more: number;
}

export interface ExchangeView {
  trace: TraceRow & { tenant?: string; timings: Record<string, number>; storedMessages?: number };
  request: Pairing;
  response: Pairing;
  streams: { client?: StreamView; upstream?: StreamView };
  /** Entries no block or message of either side holds (a request field, a tool definition, stored history). */
  unplaced: Note[];
}

export interface TurnView {
  seq: number;
  role: string;
  createdAt: string;
  complete: boolean;
  blocks: Block[];
  /** The exchange that stored it; absent for a message appended through the conversations API. */
  traceId?: string;
}

export interface ConversationView {
  id: string;
  messages: TurnView[];
  /** The conversation's exchanges, oldest first. */
  traces: TraceRow[];
  tokens: TokenTotals;
}

/** One exchange's client request against the one before it in the same conversation or session. */
export interface PreviousView {
  previous?: TraceRow;
  /** How the earlier one was chosen: its conversation id, or the same tenant, route and model. */
  by?: "conversation" | "session";
  pairing?: Pairing;
}
