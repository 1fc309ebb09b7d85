import { type ConversationRequest, InvalidRequestError, type LossyEntry } from "../../core/index.js";
import type { AnswerState, ClientEncodeOptions, FormatAdapter, SameFormatPassthrough } from "../../formats/adapter.js";
import { type RepairEntry, repair } from "../../repair/index.js";
import type { PreparedRequest } from "../off-loop/prepare-pool.js";
import { type CompactionPlan, compactionPlan, summaryRequest } from "./compaction.js";
import type { ProviderRuntime } from "./providers.js";

/** A client's request, read and converted, before it is planned for a provider. */
export interface ClientRequest {
  /** The API the client speaks. */
  format: FormatAdapter;
  clientModel: string;
  stream: boolean;
  /** The request in the canonical model, stored history already in front of the client's messages. */
  core: ConversationRequest;
  /** The client's body as parsed, for passing through to a provider of the same API. */
  raw?: Record<string, unknown>;
  /** That body's text as sent: with nothing to repair it goes on as is, only `model` renamed. */
  rawText?: string;
  /** How many stored messages were put in front (0 without a conversation). */
  historyCount: number;
  /** What reading the client's request could not carry. */
  lossy: LossyEntry[];
  /** The client asked for usage at the end of its stream. */
  includeUsage?: boolean;
  /** The id the answer is kept under (its client sees it), when it is kept, and when it began. */
  answerId?: string;
  createdAt?: number;
  /** The stored answer the request continued, and whether its answer is kept. */
  state?: AnswerState;
  /** The conversation's prompt-cache key (`ConversationRequest.cacheKey`), the same on each of its turns. */
  cacheKey?: string;
  /** The conversation's start (`conversationStart`), when `core` no longer holds the history (read off the loop). */
  conversationStart?: string;
  /** Set when the request was read on a prepare thread, which holds its history and plans it (`off-loop/`). */
  prepared?: PreparedRequest;
  /**
   * The client called its API's compaction endpoint (`POST /v1/responses/compact`), not its answer endpoint: the
   * answer is that endpoint's object, and a provider of the same API with such an endpoint is called at it.
   */
  endpoint?: "compact";
}

/** What the client's encoder needs beside the answer: the request (its tools, its settings), the id, the state. */
export function encodeOptions(request: ClientRequest): ClientEncodeOptions {
  const options: ClientEncodeOptions = { request: request.core };
  if (request.answerId !== undefined) options.answerId = request.answerId;
  if (request.createdAt !== undefined) options.createdAt = request.createdAt;
  if (request.state !== undefined) options.state = request.state;
  if (request.endpoint === "compact") options.compaction = true;
  return options;
}

export interface UpstreamPlan {
  body: unknown;
  /** The body's text when it is the client's own, byte for byte; otherwise the body is serialised. */
  bodyText?: string;
  lossy: LossyEntry[];
  repair: RepairEntry[];
  /** Set when Parley compacts the conversation itself: the body asks for a summary, the answer is written so. */
  compaction?: CompactionPlan;
  /** Where the body goes when not to the provider's endpoint: its compaction endpoint (`compactEndpoint`). */
  url?: string;
}

/**
 * The body to send to the provider. History is repaired for the provider first; a client of the provider's
 * own API goes through that API's passthrough when it has one (invariant 8 for Anthropic: blocks, signatures
 * and unknown fields byte for byte), any other through the core model and the provider's encoder.
 */
export function planUpstream(
  request: ClientRequest,
  provider: ProviderRuntime,
  upstreamModel: string,
  options: { reasoningAsText?: boolean } = {},
): UpstreamPlan {
  const { connection } = provider;
  const target = {
    ...connection.repairTarget,
    binding: provider.binding,
    ...(options.reasoningAsText ? { reasoningAsText: true } : {}),
  };
  const compaction = compactionPlan(request.format, request.core, provider, upstreamModel);
  const core = compaction === undefined ? request.core : summaryRequest(request.core);
  const repaired = repair(core.messages, target);
  // Empty messages are dropped, not refused; a history that held nothing else has nothing to answer.
  if (repaired.messages.length === 0 && core.messages.length > 0)
    throw new InvalidRequestError("every message is empty: nothing is left to send once they are removed", "messages");
  const passthrough = compaction === undefined ? sameApiPassthrough(request.format, provider) : undefined;
  if (passthrough !== undefined && request.raw !== undefined && request.rawText !== undefined) {
    // The client's compaction endpoint, to a provider that has one: the request goes there, as it came.
    const url = request.endpoint === "compact" ? connection.compactEndpoint : undefined;
    const planned = passthrough.request({
      body: request.raw,
      text: request.rawText,
      clientModel: request.clientModel,
      upstreamModel,
      stored: request.core.messages.slice(0, request.historyCount),
      ...(repaired.report.length === 0 ? {} : { repaired: repaired.messages }),
      ...(connection.signatureOwner === undefined ? {} : { signatureOwner: connection.signatureOwner }),
      ...(core.compact === true ? { compact: true } : {}),
      ...(request.cacheKey === undefined ? {} : { cacheKey: request.cacheKey }),
      provider: provider.config.name,
      ...(url === undefined ? {} : { endpoint: "compact" as const }),
    });
    const plan: UpstreamPlan = { body: planned.value, lossy: planned.lossy, repair: repaired.report };
    if (planned.bodyText !== undefined) plan.bodyText = planned.bodyText;
    if (url !== undefined) plan.url = url;
    return plan;
  }
  const converted = connection.encodeRequest({
    ...core,
    model: upstreamModel,
    messages: repaired.messages,
    stream: request.stream,
    ...(request.cacheKey === undefined ? {} : { cacheKey: request.cacheKey }),
  });
  const plan: UpstreamPlan = { body: converted.value, lossy: converted.lossy, repair: repaired.report };
  if (compaction !== undefined) plan.compaction = compaction;
  return plan;
}

/**
 * The one place that asks whether a client and its provider speak the same API: then, where the API has a
 * passthrough, the client's own bytes go on (only the model renamed), its answer comes back as it came, and its query
 * string is the provider's to read.
 */
export function sameApiPassthrough(
  client: FormatAdapter,
  provider: ProviderRuntime | undefined,
): SameFormatPassthrough | undefined {
  return provider !== undefined && client === provider.adapter ? provider.adapter.passthrough : undefined;
}

/** Whether the client's query string means something to the provider: only to a provider of its own API. */
export function forwardsClientQuery(client: FormatAdapter, provider: ProviderRuntime): boolean {
  return client === provider.adapter;
}
