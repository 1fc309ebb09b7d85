import type {
  ContextOverflow,
  ConversationRequest,
  ConversationResponse,
  Converted,
  ErrorType,
  IncrementalDecoder,
  LossyEntry,
  Message,
  Part,
  StreamError,
  StreamEvent,
  WireFormat,
} from "../core/index.js";
import type { SseMessage } from "../stream/sse.js";

/**
 * One API format, whole: Parley answering clients that speak it (`client`), Parley calling providers that
 * speak it (`upstream`), its message history (`history`) and, when a client and its provider speak it both,
 * how the client's own bytes go through (`passthrough`). The gateway, the CLI and repair reach a format only
 * through this interface and the registry; everything behind it lives in the format's folder.
 */
export interface FormatAdapter<Id extends WireFormat = WireFormat> {
  readonly id: Id;
  /** The API's name for messages: `Anthropic Messages`. */
  readonly label: string;
  readonly client: ClientSide;
  readonly upstream: UpstreamSide;
  readonly history: HistoryCodec;
  readonly passthrough?: SameFormatPassthrough;
  /** Its bodies read for a person (the inspector, `parley trace show`); absent, they are shown as raw JSON. */
  readonly view?: BodyView;
}

/** How thinking is written to an API that has no signed thinking blocks (see `--reasoning`). */
export const REASONING_MODES = ["think-tags", "reasoning_content", "reasoning", "reasoning_details", "drop"] as const;

export type ReasoningMode = (typeof REASONING_MODES)[number];

// ---- client side: Parley answering a client of this API ----

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

// ---- upstream side: Parley calling a provider of this API ----

export interface UpstreamSide {
  /** The provider `type` in the configuration. */
  readonly type: string;
  /** The history rules of the API itself (`parley repair --for`); a provider's own are its connection's. */
  readonly repairTarget: RepairTarget;
  /**
   * Its providers take a client's model name as sent, their own names and aliases alike (DeepSeek's Anthropic API
   * maps `claude-*` itself): a name is never matched against their model list, nor sent to a default model.
   */
  readonly takesClientModelNames?: boolean;
  /** A configured provider of this API, ready to call; built once at start-up. Throws `SettingError`. */
  connect(settings: ProviderSettings): UpstreamConnection;
  /** A request in this API with no provider in view (`parley convert`). */
  encodeRequest(request: ConversationRequest, options?: { reasoning?: ReasoningMode }): Converted<unknown>;
  /** A whole answer, read leniently. */
  decodeResponse(body: Record<string, unknown>): Converted<ConversationResponse>;
  /** The SSE messages of an answer's stream as core events. */
  streamDecoder(): IncrementalDecoder<SseMessage>;
  /** A 2xx body that is no answer: the error object it carries instead, or why it holds none. */
  notAnAnswer(body: Record<string, unknown>): NotAnAnswer | undefined;
  /** What a whole answer must have to be read at all; throws an error naming the field (`parley convert`). */
  checkAnswer(body: Record<string, unknown>): void;
  /** The data of a stream's closing message that is not an event (`[DONE]`). */
  readonly streamEndMarker?: string;
  /** What one stream event's data carries that its decoder leaves out (choices past the first). */
  streamEventLossy?(data: unknown): LossyEntry | undefined;
  /** What of a client's own request its connections let through to this API; nothing else of it goes. */
  readonly forwarded: ClientForwarding;
  /**
   * Its providers compact a conversation themselves when asked (`ConversationRequest.compact`, which its encoder
   * writes). Absent: Parley compacts for them, asking the model for a summary.
   */
  readonly compacts?: boolean;
  /**
   * Whether an error answer (its status and body text) is the provider refusing reasoning it cannot verify: a
   * signature or sealed content made under another key, organisation or model (OpenAI's
   * `invalid_encrypted_content`, Anthropic's `Invalid signature in thinking block`). The gateway then sends the
   * request once more with the history's reasoning as text (`RepairTarget.reasoningAsText`).
   */
  isReasoningRefusal?(status: number, body: string): boolean;
}

/**
 * What of a client's own request reaches an upstream, on purpose, by name: the upstream's request is built from
 * the provider's settings, and only these are copied from the client's. Never its credentials (`x-api-key`,
 * `authorization`, a key in the query string), cookies, hop-by-hop headers or anything a proxy added.
 */
export interface ClientForwarding {
  headers: readonly string[];
  /** Taken only from a client of this same API: another API's query means nothing here. */
  queryParameters: readonly string[];
}

export type NotAnAnswer = { error: StreamError } | { noAnswer: string };

/** What the configuration says of one provider. */
export interface ProviderSettings {
  /** The configuration's key; also the provider recorded in reasoning origins. */
  name: string;
  /** Without a trailing slash. */
  baseUrl: string;
  apiKey?: string;
  preset?: string;
  reasoning?: ReasoningMode;
  compat: Record<string, unknown>;
  headers: Record<string, string>;
  anthropicVersion?: string;
  /**
   * The gateway's other providers of the same type: a conversation may move among them (a route, Claude Code's
   * `/model`), so what only one of them can take back must say whose it is.
   */
  peers?: readonly string[];
}

/** A setting of a provider its API cannot use: `path` below the provider (`compat.foo`). */
export class SettingError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = "SettingError";
  }
}

/** One configured provider: everything per provider is resolved once, at start-up. */
export interface UpstreamConnection {
  /** The URL requests are POSTed to. */
  readonly endpoint: string;
  /** The history rules of this provider, its quirks included. */
  readonly repairTarget: RepairTarget;
  /**
   * Set for a provider whose thinking signatures only it can take back (an Anthropic-format provider that is not
   * Anthropic): the name its answers' signatures are wrapped under (an origin envelope), and the only provider
   * they go back to unwrapped. Absent: signatures pass as they came.
   */
  readonly signatureOwner?: string;
  /**
   * Where a request goes and with which headers: the provider's key and headers, and of the client's headers and
   * query (`clientQuery`, given only when the client speaks this API) what the API's `forwarded` names. `model` is
   * the model the request goes to, for an API that names it in the URL (Gemini).
   */
  target(clientHeaders: ClientHeaders, stream: boolean, clientQuery?: URLSearchParams, model?: string): UpstreamTarget;
  /** A repaired request as this provider's body. */
  encodeRequest(request: ConversationRequest): Converted<unknown>;
  /** A whole answer; `request` says which tools a tool call written as text may name. */
  decodeResponse(body: Record<string, unknown>, request: ConversationRequest): Converted<ConversationResponse>;
  streamDecoder(request: ConversationRequest): IncrementalDecoder<SseMessage>;
  /**
   * A whole answer sent to a streaming request (some servers ignore `stream: true`), as the SSE text it
   * stands for. Absent: this API does not do that, and such an answer is an upstream fault.
   */
  wholeAnswerAsStream?(body: Record<string, unknown>): string;
  /** What the connection knows of the provider's models without asking the provider; absent: nothing. */
  readonly modelFacts?: ProviderModelFacts;
  /** How the provider lists its models: where, with which headers, and how its API's list reads. */
  readonly discovery: ModelDiscovery;
  /**
   * What the provider's model list says of the server, after each listing: the `owned_by` of its models, where
   * model servers name themselves (`llamacpp`, `vllm`). A connection whose quirks were guessed takes its word.
   */
  recogniseServer?(owners: readonly string[]): void;
  /**
   * Where the provider counts the tokens of a request in a client's API (`FormatAdapter.id`) that is not its own, when
   * its server has such an endpoint (llama.cpp answers Anthropic's `/v1/messages/count_tokens` beside its Chat
   * Completions); undefined, Parley estimates.
   */
  countTokensUrlFor?(clientApi: string): string | undefined;
}

/** Asking a provider which models it serves: where, with which headers, and how its list reads. */
export interface ModelDiscovery {
  /** The list's URL (`<baseUrl>/models` for OpenAI's APIs, `/v1/models` for Anthropic's). */
  url: string;
  /** The provider's key, as its API takes it, and its configured headers. */
  headers: Record<string, string>;
  /**
   * The list's models with whatever limits each carries; undefined when the body holds no list. Absent: the
   * gateway's reader of OpenAI-shaped lists (`data`, or `models`), which knows the model servers' own fields.
   */
  parse?(json: unknown): ListedModel[] | undefined;
}

export interface ListedModel {
  id: string;
  contextWindow?: number;
  maxOutputTokens?: number;
}

/** A model's limits, in tokens. */
export interface ModelLimits {
  /** Prompt and answer together. */
  contextWindow?: number;
  /** The largest `max_tokens` the provider accepts for the model. */
  maxOutputTokens?: number;
}

export interface ProviderModelFacts {
  /** The kind of server whose quirks apply (a preset id: `vllm`, `ollama`, `deepseek`...). */
  readonly preset: string;
  /** Whether the preset was guessed from the base URL rather than configured. */
  readonly presetGuessed: boolean;
  /** The limits the provider publishes for a model, when its figures are known. */
  publishedLimits(model: string): ModelLimits | undefined;
  /** A cap on every model's output (`compat.maxTokensCap`). */
  readonly maxTokensCap?: number;
}

/** A request's headers as Node gives them (`IncomingHttpHeaders`), without tying the formats to Node's types. */
export type ClientHeaders = Readonly<Record<string, string | string[] | undefined>>;

export interface UpstreamTarget {
  url: string;
  headers: Record<string, string>;
}

/**
 * What a history must be for an API to take it, as data: the repair passes and the validator read these,
 * never the API's name.
 */
export interface RepairTarget {
  /**
   * Where tool results may answer tool calls: only in the next message (system messages in place skipped),
   * or in any user message before the next assistant message (where OpenAI's `tool` messages land).
   */
  toolResultZone: ToolResultZone;
  /**
   * What is too empty to send. `blank-text`: a message or text block (in a tool result too) with nothing but
   * whitespace; `no-content`: only a message with nothing the API can take (empty text, redacted thinking).
   */
  emptiness: "blank-text" | "no-content";
  /** Thinking goes back as thinking only when this format signed it; any other thinking becomes text. */
  thinkingSignedBy?: WireFormat;
  /**
   * The provider whose own signatures alone this target takes back (in the origin envelope that names it, see
   * `UpstreamConnection.signatureOwner`); absent, the format's own signatures as they came.
   */
  signatureOwner?: string;
  /** Roles alternate between user and assistant, starting with user. */
  alternatingRoles: boolean;
  /** Tool-call ids must match this and be unique in the history; others are renamed. */
  toolIdPattern?: RegExp;
  /** Tool results come first in what answers the calls, before any other content. */
  toolResultsFirst: boolean;
  /** A final assistant message (a prefill) may not end with whitespace. */
  noTrailingWhitespaceAtEnd: boolean;
  /** Every assistant message with tool calls carries its reasoning (Kimi, DeepSeek). */
  reasoningOnToolCallTurns: boolean;
  /**
   * No reasoning goes as reasoning: every thinking part becomes text, signed or sealed alike, and what has no text
   * (redacted thinking, a signature alone) is left out. For a request sent again after the provider refused
   * reasoning it could not verify.
   */
  reasoningAsText?: boolean;
  /** The provider, whose own words a violation is given in where they differ. */
  provider?: string;
  /**
   * The key or deployment behind `provider` (`ReasoningOrigin.binding`): what the provider sealed or signed under
   * another becomes text, as it would be refused. Absent: reasoning is bound to the provider's name alone.
   */
  binding?: string;
}

export type ToolResultZone = "next-message" | "until-next-assistant";

// ---- history: a conversation's messages in this API ----

export interface HistoryCodec {
  /**
   * Whether a message carries a mark only this format has (a role, a field, a block type): how `normalize` and
   * `parley repair` tell a history's format. Parley's own format needs none: it is what is left.
   */
  recognizes?(message: Record<string, unknown>): boolean;
  /** An array of this API's messages (paths name `messages[i]`) to core. */
  toCore(messages: unknown): HistoryRead;
  fromCore(messages: readonly Message[], options?: HistoryEncodeOptions): Converted<unknown[]>;
}

export interface HistoryRead {
  messages: Message[];
  lossy: LossyEntry[];
  /** Per core message, the wire messages it came from, where they are not one to one. */
  sources?: MessageSource[];
}

/** The wire message a core message started at, and the wire message each of its parts came from. */
export interface MessageSource {
  message: number;
  parts: number[];
}

export interface HistoryEncodeOptions {
  reasoning?: ReasoningMode;
  /** The provider whose quirks (and reasoning mode, when `reasoning` is absent) the history is written for. */
  provider?: ProviderSettings;
  /** Thinking this API did not sign goes out signed with its origin, for clients that drop unsigned thinking. */
  signOriginThinking?: boolean;
  /** The wire history the messages were read from: blocks carried unchanged go out as the very objects that came in. */
  original?: readonly unknown[];
}

// ---- the same format on both sides ----

/**
 * A client and its provider speaking the same API: the client's own request goes on with only what must change
 * (the model), and the provider's answer comes back as it came (contract invariant 8).
 */
export interface SameFormatPassthrough {
  request(input: PassthroughRequest): Converted<unknown> & { bodyText?: string };
  /**
   * The provider's whole answer as the client gets it (its signatures wrapped for a `signatureOwner`), under the id
   * Parley keeps it by (`answerId`), where the API has such ids.
   */
  response(body: Record<string, unknown>, clientModel: string, signatureOwner?: string, answerId?: string): unknown;
  /** The API's token-count URL for a request URL, where the API counts tokens itself. */
  countTokensUrl?(url: string): string;
}

export interface PassthroughRequest {
  /** The client's body as parsed, and its text as sent. */
  body: Record<string, unknown>;
  text: string;
  clientModel: string;
  upstreamModel: string;
  /** The stored messages put in front of the client's (none without a conversation). */
  stored: readonly Message[];
  /** The whole history (stored and the client's) when repair changed it; absent when repair changed nothing. */
  repaired?: readonly Message[];
  /** The provider's `signatureOwner`: the signatures it made go back to it out of their envelopes. */
  signatureOwner?: string;
  /** The provider's name: reasoning whose envelope names it goes back to it as it made it. */
  provider?: string;
  /** The request asks for its conversation compacted (`ConversationRequest.compact`), which the body may not say. */
  compact?: boolean;
  /** The conversation's prompt-cache key (`ConversationRequest.cacheKey`), for an API that has a field for it. */
  cacheKey?: string;
}

// ---- bodies read for a person ----

/**
 * A request or a whole answer of this API as the conversation it holds: its messages as they stand in the body,
 * each part (a block, a field) in the canonical model with the path reports name it by (`messages[3].content[1]`,
 * `messages[2].tool_calls[0]`, `choices[0].message.reasoning_content`). Lenient: a body that is not of this API,
 * or that its reader refuses, is undefined, never an error.
 */
export interface BodyView {
  request(body: unknown): ViewedBody | undefined;
  response(body: unknown): ViewedBody | undefined;
}

export interface ViewedBody {
  model?: string;
  messages: ViewedMessage[];
  /** The tools a request offers, by name. */
  tools?: string[];
}

export interface ViewedMessage {
  /** `system`, `user`, `assistant`, `tool`, `developer`: the body's own word. */
  role: string;
  /** `messages[3]`, `system`, `choices[0].message`; empty for a whole answer that is the message. */
  path: string;
  parts: ViewedPart[];
}

export interface ViewedPart {
  part: Part;
  path: string;
  /**
   * A request's part: its place (message, part) in the canonical history the request reads as, where repair
   * reports point, and where this format's request encoder reports point: its lossy paths name a part as
   * `messages[i].content[j]` (a message as `messages[i]`) for the part at [i, j] of the history it wrote from,
   * whatever the wire made of it (the inspector puts each loss at its block by this): a system prompt the encoder
   * writes as a message is that history's first message, and the wire messages or items one message became read
   * back as that one message. Absent for a system prompt in a request-level field and for answers.
   */
  at?: readonly [message: number, part: number];
}
