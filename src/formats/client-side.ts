// The client face of a format: Parley answering a client of this API.
// `adapter.ts` puts the faces together.
import type {
  ContextOverflow,
  ConversationRequest,
  ConversationResponse,
  Converted,
  ErrorType,
  LossyEntry,
  Part,
  StreamError,
  StreamEvent,
} from "../core/index.js";
import type { ReasoningMode } from "./reasoning-mode.js";

export interface ClientSide {
  /** The routes this API is answered on, by what they do. */
  readonly routes: readonly ClientRoute[];
  /** An unknown path under this prefix is answered (404, 405) in this API's error shape. */
  readonly pathPrefix?: string;
  /**
   * A request body: loose validation (an `InvalidRequestError` naming the field), then to core. `place` is where it
   * came, for an API that names in its URL what others put in the body (Gemini's model and streaming).
   */
  readRequest(body: unknown, place?: RequestPlace): ClientRequestRead;
  /** A token-count request body as the request it counts (for a `count-tokens` route). */
  readCountTokensRequest?(body: unknown, place?: RequestPlace): ConversationRequest;
  /** A `count-tokens` route's answer; absent, `{"input_tokens": N}`. */
  countTokensBody?(inputTokens: number): unknown;
  /**
   * Where this API's clients put their key, beside `x-api-key` and `Authorization: Bearer` (Gemini's
   * `x-goog-api-key` and `?key=`). Accepted on this API's routes only, and never forwarded.
   */
  readonly credentials?: { headers: readonly string[]; queryParameters: readonly string[] };
  /** A whole answer as this API gives it. */
  encodeResponse(response: ConversationResponse, options?: ClientEncodeOptions): Converted<unknown>;
  /** The answer's stream as this API gives it; one encoder per answer. */
  streamEncoder(options: ClientStreamOptions): ClientStreamEncoder;
  /**
   * What a streamed answer could not carry to this client: what `encodeResponse` reports for the same answer,
   * and what streaming changes on top (tool arguments that are not JSON).
   */
  streamedAnswerLossy(answer: ConversationResponse, options?: ClientEncodeOptions): LossyEntry[];
  /** An error Parley answers a request with, as this API's error body. */
  errorBody(error: ErrorReport, requestId: string): unknown;
  /** An error carried in place of an answer (an upstream's, converted), as this API's error body. */
  errorDocument(error: StreamError): unknown;
  /**
   * `GET /v1/models` and `GET /v1/models/{id}` in this API's shapes (for `models` and `model` routes). With
   * `marks`, its shape is offered on the shared list route (`GET /v1/models`, `?format=<id>`), and they say how its
   * clients are told apart there: headers only they send (`anthropic-version`), or `bearer`, an
   * `Authorization: Bearer` with none of another API's headers (the OpenAI SDK).
   */
  readonly models?: {
    list(models: readonly ModelInfo[]): unknown;
    one(model: ModelInfo): unknown;
    readonly marks?: { headers?: readonly string[]; bearer?: boolean };
  };
  /**
   * A request that continues history only a provider of this API holds (Anthropic's `thread: continue` sends only
   * the new messages): the error its client gets when the request's provider (`provider`, its name) is of another
   * API, worded as this API's servers answer for history they do not have. Undefined for a request that carries
   * its whole history.
   */
  continuesHeldHistory?(body: Record<string, unknown>, provider: string): ErrorReport | undefined;
  /** Answers Parley keeps for later turns, for an API whose clients ask it to (`stored-answer` routes). */
  readonly stored?: StoredAnswers;
  /**
   * For an API whose clients ask for their conversation compacted (`ConversationRequest.compact`): the one part of
   * the answer that holds it, `envelope` being Parley's (`encodeCompaction`) when Parley compacted it. A later
   * request's reader turns that part back into the summary's text.
   */
  readonly compaction?: { answerPart(envelope: string): Part };
}

export interface ClientRoute {
  method: "GET" | "POST" | "DELETE";
  path: string;
  /**
   * `answer`: a conversation turn; `count-tokens`: its input tokens; `models`, `model`: the model list, one model;
   * `stored-answer`, `delete-stored-answer`: an answer Parley kept (`{id}` in the path), read or deleted;
   * `compact`: the conversation in the body compacted (`POST /v1/responses/compact`), answered whole.
   */
  kind: "answer" | "count-tokens" | "models" | "model" | "stored-answer" | "delete-stored-answer" | "compact";
  /** An `answer` route that takes `x-parley-conversation-id` (stored history in front of the client's). */
  conversations?: boolean;
  /** An `answer` route whose answers are streamed whatever the body says (Gemini's `:streamGenerateContent`). */
  stream?: boolean;
}

/**
 * Where a request came: its route, the path's parameters (a segment `{model}`, or a segment's head as in
 * `{model}:generateContent`) and its query.
 */
export interface RequestPlace {
  route: ClientRoute;
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
}

export interface ClientRequestRead extends Converted<ConversationRequest> {
  /** The client asked for usage at the end of its stream (OpenAI's `stream_options.include_usage`). */
  includeUsage?: boolean;
  /** The stored answer this request continues, and whether its own answer is to be kept (`stored`). */
  state?: AnswerState;
}

/** A turn's place among stored answers: the one it continues, and whether it is kept itself. */
export interface AnswerState {
  previous?: string;
  kept: boolean;
}

/**
 * Answers kept by Parley: each under an id the client sees, with the messages of its turn (so that a later request
 * naming it gets the whole history in front of its own) and the answer as `stored-answer` gives it back.
 */
export interface StoredAnswers {
  /** A fresh id for an answer that will be kept. */
  newId(): string;
  /** The request field naming the answer continued, for the error when there is none (`previous_response_id`). */
  readonly previousParam: string;
  /** What the client is told when there is no such answer (for it). */
  notFound(id: string): string;
  /** The body of a `delete-stored-answer` route's success. */
  deleted(id: string): unknown;
}

export interface ClientEncodeOptions {
  /** Where thinking goes for a client of an API without thinking blocks; each API has its default. */
  reasoning?: ReasoningMode;
  /** The client's request this answers: the tools it offered (how a call is written), the settings it repeats. */
  request?: ConversationRequest;
  /** The id the client sees for this answer (one Parley keeps is known before it is written); absent, its own. */
  answerId?: string;
  /** When the answer began (Unix seconds), so that one written twice (sent, then kept) says the same. */
  createdAt?: number;
  state?: AnswerState;
  /**
   * The answer's provider speaks the client's API and is the only one of it a conversation can go back to: the
   * reasoning it sealed reaches the client as it made it, not in Parley's envelope.
   */
  reasoningAsMade?: boolean;
  /**
   * The client called its API's compaction endpoint (`POST /v1/responses/compact`): the answer, a compacted
   * conversation, is written as that endpoint's object (`response.compaction`).
   */
  compaction?: boolean;
}

export interface ClientStreamOptions extends ClientEncodeOptions {
  /** The model name the client sees; absent, the source's (from `message-start`). */
  model?: string;
  includeUsage?: boolean;
}

/** Core events to the client's wire stream, with the keep-alive and error frames of its API. */
export interface ClientStreamEncoder {
  encode(event: StreamEvent): string;
  /** A frame that keeps an idle connection open. */
  ping(): string;
  /** The frame that ends a stream that failed after its status line went out. */
  error(error: StreamError): string;
  /** What closes the stream after its last event (`data: [DONE]` on OpenAI); empty before a finish or error. */
  end(): string;
}

/** An error as the gateway reports it: its type, what happened, the offending field. */
export interface ErrorReport {
  type: ErrorType;
  message: string;
  param: string | null;
  /** What a client acts on beside the type (Anthropic's `error.details.error_code`). */
  details?: Record<string, unknown>;
  /** A prompt over the model's window: the API words it as its clients recognise (and compact on). */
  contextOverflow?: ContextOverflow;
}

export interface ModelInfo {
  id: string;
  /** ISO 8601. */
  createdAt: string;
  /** The model the name reaches, when it is another (shown beside the name). */
  upstreamModel?: string;
  /** Who serves it (the provider's name). */
  ownedBy?: string;
  /** Prompt and answer together, in tokens. */
  contextWindow?: number;
  /** The largest answer the model gives. */
  maxOutputTokens?: number;
}
