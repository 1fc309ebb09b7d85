// The upstream face of a format: Parley calling a provider of this API, and one configured provider's connection.
// `adapter.ts` puts the faces together.
import type {
  ConversationRequest,
  ConversationResponse,
  Converted,
  IncrementalDecoder,
  LossyEntry,
  StreamError,
  WireFormat,
} from "../core/index.js";
import type { SseMessage } from "../stream/sse.js";
import type { ReasoningMode } from "./reasoning-mode.js";

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
  /**
   * Whether the provider compacts a conversation itself, for an API whose providers can (`UpstreamSide.compacts`);
   * absent: the API's default.
   */
  compacts?: boolean;
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
   * Whether this provider compacts a conversation itself (`ConversationRequest.compact`), where its API's providers
   * can (`UpstreamSide.compacts`) but this one was configured not to. Absent: the API's `compacts`.
   */
  readonly compacts?: boolean;
  /**
   * The URL of the provider's own compaction endpoint (the Responses API's `POST /responses/compact`), where it
   * compacts: a client's request to that endpoint of the same API goes there as it came.
   */
  readonly compactEndpoint?: string;
  /**
   * Set for a provider whose thinking signatures only it can take back (an Anthropic-format provider that is not
   * Anthropic): the name its answers' signatures are wrapped under (an origin envelope), and the only provider
   * they go back to unwrapped. Absent: signatures pass as they came.
   */
  readonly signatureOwner?: string;
  /**
   * Whether the provider takes a prompt-cache key (`ConversationRequest.cacheKey`): the gateway derives one only
   * for those, since it is a hash of the conversation's start. Absent: it takes none.
   */
  readonly takesCacheKey?: boolean;
  /**
   * This provider's own words for refusing reasoning it cannot verify, where its API's providers differ (Google's
   * OpenAI-compatible endpoint on the Chat API refuses thought signatures). Absent: its API's `isReasoningRefusal`.
   */
  readonly isReasoningRefusal?: ((status: number, body: string) => boolean) | undefined;
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
   * How the provider counts a request's input tokens for a client of this API (`FormatAdapter.id`), where its server
   * can: Anthropic's `count_tokens`, llama.cpp's, vLLM's `/tokenize`, Gemini's `countTokens`. Undefined: it cannot,
   * and Parley estimates.
   */
  tokenCounter?(clientApi: string): TokenCounter | undefined;
}

/** A provider's own count of a request's input tokens, through its template and tokenizer. */
export interface TokenCounter {
  /** What it asks, for the log (`POST /tokenize`). */
  readonly endpoint: string;
  /**
   * Asks the provider through `query.post`: its count, or undefined when its answer holds none that can be read.
   * Rejects when asking failed (`post` rejected); the gateway then estimates.
   */
  count(query: TokenCountQuery): Promise<number | undefined>;
}

export interface TokenCountQuery {
  /** The request, its history repaired for the provider, `model` the provider's own. */
  request: ConversationRequest;
  /** The client's API, its body as sent (only `model` differs from what it asked for) and its headers and query. */
  clientApi: string;
  clientBody: Record<string, unknown>;
  clientHeaders: ClientHeaders;
  /** Given only when the client speaks the provider's API: another API's query means nothing here. */
  clientQuery?: URLSearchParams;
  /**
   * POSTs `body` as JSON and resolves with the JSON of a 2xx answer; rejects on an error status, a failure, a body
   * that is not JSON, or the gateway's deadline (`timeouts.countTokensMs`).
   */
  post(url: string, headers: Record<string, string>, body: unknown): Promise<unknown>;
}

/** A count as an answer gives it: a whole number of tokens, or undefined for anything else. */
export function tokenCount(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
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
  /** Where the preset came from: the configuration, the base URL, or what the server's model list says it is. */
  readonly presetFrom: "configuration" | "URL" | "model list";
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
