import {
  type ConversationResponse,
  type ErrorType,
  isErrorType,
  isRetryableErrorType,
  type StreamError,
  statusForErrorType,
  UpstreamError,
  type Usage,
} from "../../core/index.js";
import type { FormatAdapter, SameFormatPassthrough } from "../../formats/adapter.js";
import type { RouteTaken } from "../../store/traces/trace-store.js";
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from "../../text/json-depth.js";
import { redactSecrets } from "../../upstream/index.js";
import type { LossyHeaderEntry } from "../lossy-header.js";
import type { ClientRequest, UpstreamPlan } from "./plan.js";
import type { ProviderRuntime } from "./providers.js";

/** One client request on its way to one provider, and what is gathered for its trace. */
export interface Exchange {
  request: ClientRequest;
  provider: ProviderRuntime;
  upstreamModel: string;
  plan: UpstreamPlan;
  /** The plan's body, serialised once. */
  bodyText: string;
  /** The client's query, when it speaks the upstream's API (which takes what it names of it: `beta=true`). */
  query: URLSearchParams | undefined;
  /** Set when the client's API is the provider's and has a passthrough: the answer goes back as it came. */
  passthrough: SameFormatPassthrough | undefined;
  /** Whether the exchange is traced (traces on and a store to keep them): the relay and the writers only read it. */
  tracing: boolean;
  conversationId?: string;
  /** What converting the request and repairing the history reported, for `x-parley-lossy`. */
  lossy: LossyHeaderEntry[];
  /** Keeps a finished answer (the client's `store`), before the client sees its end. */
  keepAnswer?: (answer: ConversationResponse) => Promise<void>;
  /** The input-token estimate, computed at most once and only when the upstream gives none. */
  estimateInputTokens(): number;
  trace: {
    upstreamResponse: string;
    clientResponse: string;
    responseLossy: import("../../core/index.js").LossyEntry[];
    timings: Record<string, number>;
    /** A streamed answer's pieces: offset in the traced text and ms since the request, flat pairs. */
    arrivals?: { upstreamResponse: number[]; clientResponse: number[] };
    status?: number;
    /** The answer's usage as the client got it (`recordUsage`). */
    usage?: Usage;
  };
  /** Where the conversation's previous answered turn went, when this one goes elsewhere (`route-switch.ts`). */
  switchedFrom?: RouteTaken;
}

/**
 * Fills input tokens from the estimate when the upstream reported none (never replaces a real count). A count of
 * cache reads or writes is a real count: the first turn of a cached session is all written to the cache, and
 * Anthropic reports its `input_tokens` (what follows the last breakpoint) as 0.
 */
export function withInputEstimate(usage: Partial<Usage> | undefined, exchange: Exchange): Partial<Usage> {
  const reported =
    (usage?.inputTokens ?? 0) + (usage?.cacheReadInputTokens ?? 0) + (usage?.cacheCreationInputTokens ?? 0);
  if (reported > 0) return usage ?? {};
  return { ...usage, inputTokens: exchange.estimateInputTokens() };
}

/** An upstream's in-stream error event as a typed error (unknown types become `api_error`, message kept). */
export function streamErrorToUpstreamError(error: StreamError, secrets: readonly string[]): UpstreamError {
  const type: ErrorType = isErrorType(error.type) ? error.type : "api_error";
  const status = type === "api_error" ? 500 : statusForErrorType(type);
  // Before any content reached the client, a server-side failure or a rate limit is worth another attempt,
  // as the same answer given as a status would be.
  return new UpstreamError(type, `upstream: ${redactSecrets(error.message, secrets)}`, {
    retryable: isRetryableErrorType(type),
    status,
  });
}

/** A whole answer's JSON nested deeper than any real one: a 502 before the code that walks it overflows. */
export function checkAnswerDepth(text: string): void {
  if (jsonNestsDeeperThan(text)) {
    throw new UpstreamError("api_error", `upstream answered with JSON nested deeper than ${MAX_JSON_DEPTH} levels`, {
      retryable: false,
      status: 502,
    });
  }
}

/** Where a traced stream's arrival times go, made on the first piece. */
export function streamArrivals(exchange: Exchange): NonNullable<Exchange["trace"]["arrivals"]> {
  exchange.trace.arrivals ??= { upstreamResponse: [], clientResponse: [] };
  return exchange.trace.arrivals;
}

/**
 * Milliseconds since `start` to a tenth, as a stream's arrivals are kept: the inspector shows no finer, and a
 * double printed in full (12.939027999999979) made each mark three times the bytes and its formatting several
 * times the time of `12.9`, per piece of every stream traced.
 */
export function arrivalMs(start: number, now = performance.now()): number {
  return Math.round((now - start) * 10) / 10;
}

/** Appends to a trace buffer up to `cap` characters. */
export function appendCapped(buffer: string, text: string, cap: number): string {
  if (buffer.length >= cap) return buffer;
  const room = cap - buffer.length;
  return text.length <= room ? buffer + text : `${buffer}${text.slice(0, room)}…[cut]`;
}

/**
 * A 2xx answer that is not one, as its API tells: an error object sent with a success status (some servers
 * do), mapped like the same error sent as a status; or no answer at all, a 502 rather than an empty message.
 */
export function checkAnswer(adapter: FormatAdapter, body: Record<string, unknown>, secrets: readonly string[]): void {
  const problem = adapter.upstream.notAnAnswer(body);
  if (problem === undefined) return;
  if ("error" in problem) throw streamErrorToUpstreamError(problem.error, secrets);
  throw new UpstreamError("api_error", problem.noAnswer, {
    retryable: false,
    status: 502,
    body: redactSecrets(JSON.stringify(body).slice(0, 500), secrets),
  });
}
