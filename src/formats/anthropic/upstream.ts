import {
  type ConversationRequest,
  type ConversationResponse,
  type Converted,
  InvalidRequestError,
} from "../../core/index.js";
import {
  type ClientForwarding,
  type NotAnAnswer,
  type ProviderSettings,
  type RepairTarget,
  SettingError,
  type TokenCounter,
  tokenCount,
  type UpstreamConnection,
  type UpstreamSide,
} from "../adapter.js";
import { forwardedHeaders, forwardedQuery } from "../forwarded.js";
import { refusesReasoning } from "../reasoning-refusal.js";
import { coreToAnthropicRequest } from "./from-core.js";
import { ANTHROPIC_PRESETS, anthropicPreset } from "./presets.js";
import { wrapAnswerSignatures, wrapStreamSignatures } from "./signatures.js";
import { createAnthropicStreamDecoder } from "./stream-decoder.js";
import { anthropicResponseToCore } from "./to-core.js";
import type { AnthropicMessageResponse } from "./wire-types.js";

/** Anthropic's pattern for `tool_use.id`; its 400 names it ("String should match pattern"). */
export const ANTHROPIC_TOOL_ID = /^[a-zA-Z0-9_-]+$/;

/**
 * What the Messages API refuses in a history, each rule a 400 of its own: see repair-and-normalize.md.
 * Thinking goes back only with Anthropic's own signature.
 */
export const ANTHROPIC_REPAIR_TARGET: RepairTarget = {
  toolResultZone: "next-message",
  emptiness: "blank-text",
  thinkingSignedBy: "anthropic",
  alternatingRoles: true,
  toolIdPattern: ANTHROPIC_TOOL_ID,
  toolResultsFirst: true,
  noTrailingWhitespaceAtEnd: true,
  reasoningOnToolCallTurns: false,
};

const DEFAULT_VERSION = "2023-06-01";

/** The client's betas are its own business with Anthropic; its key is not (the provider's key is used). */
export const ANTHROPIC_FORWARDED: ClientForwarding = {
  headers: ["anthropic-beta"],
  // Anthropic's SDK marks beta calls with `?beta=true`.
  queryParameters: ["beta"],
};

/**
 * Anthropic's words for thinking it cannot verify: a signature made for another key or model family, or a block of
 * the last assistant turn that is not as it was made.
 */
export const ANTHROPIC_REASONING_REFUSALS: readonly RegExp[] = [
  /invalid `?signature`? in `?thinking`? block/i,
  /`?thinking`? or `?redacted_thinking`? blocks in the latest assistant message cannot be modified/i,
  /thinking blocks? (?:\S+ )?cannot be modified/i,
];

/** Parley calling an Anthropic Messages API (Anthropic itself, or a server that speaks it). */
export const anthropicUpstream: UpstreamSide = {
  type: "anthropic",
  repairTarget: ANTHROPIC_REPAIR_TARGET,
  // Anthropic-format upstreams take their own names and aliases (DeepSeek's maps `claude-*` itself).
  takesClientModelNames: true,
  connect: connectAnthropic,
  encodeRequest: (request) => coreToAnthropicRequest(request),
  decodeResponse: decodeResponse,
  streamDecoder: createAnthropicStreamDecoder,
  forwarded: ANTHROPIC_FORWARDED,
  notAnAnswer: anthropicNotAnAnswer,
  checkAnswer: checkAnthropicAnswer,
  isReasoningRefusal: refusesReasoning(ANTHROPIC_REASONING_REFUSALS),
};

/** An error document sent in place of an answer. */
export function anthropicNotAnAnswer(body: Record<string, unknown>): NotAnAnswer | undefined {
  if (body.type !== "error") return undefined;
  const error = (body.error ?? {}) as { type?: unknown; message?: unknown };
  return {
    error: {
      type: typeof error.type === "string" ? error.type : "api_error",
      message: typeof error.message === "string" ? error.message : JSON.stringify(body.error ?? null),
    },
  };
}

export function checkAnthropicAnswer(body: Record<string, unknown>): void {
  if (!Array.isArray(body.content))
    throw new InvalidRequestError("must be an array of content blocks (is this a Messages API response?)", "content");
}

function decodeResponse(body: Record<string, unknown>): Converted<ConversationResponse> {
  return { value: anthropicResponseToCore(body as AnthropicMessageResponse), lossy: [] };
}

/**
 * The name a provider's thinking signatures are wrapped under, when they are not Anthropic's: always for a
 * provider known to sign on its own, and for a server Parley does not know once the gateway has other
 * Anthropic-format providers a conversation could move to. Anthropic's own, and a lone unknown server's, pass as
 * they came (invariant 8), at no cost.
 */
export function signatureOwnerOf(provider: ProviderSettings): string | undefined {
  const preset = anthropicPreset(provider.preset, provider.baseUrl);
  if (preset === undefined) {
    const known = Object.keys(ANTHROPIC_PRESETS).join(", ");
    throw new SettingError("preset", `unknown preset '${provider.preset}' for an Anthropic provider (known: ${known})`);
  }
  if (preset.signatures === "own") return provider.name;
  if (preset.signatures === "unknown" && (provider.peers?.length ?? 0) > 0) return provider.name;
  return undefined;
}

function connectAnthropic(provider: ProviderSettings): UpstreamConnection {
  const v1 = provider.baseUrl.endsWith("/v1") ? provider.baseUrl : `${provider.baseUrl}/v1`;
  const endpoint = `${v1}/messages`;
  const version = provider.anthropicVersion ?? DEFAULT_VERSION;
  const owner = signatureOwnerOf(provider);
  const connection: UpstreamConnection = {
    endpoint,
    repairTarget:
      owner === undefined
        ? ANTHROPIC_REPAIR_TARGET
        : { ...ANTHROPIC_REPAIR_TARGET, signatureOwner: owner, provider: provider.name },
    target(clientHeaders, stream, clientQuery) {
      const headers: Record<string, string> = {
        ...provider.headers,
        "content-type": "application/json",
        accept: stream ? "text/event-stream" : "application/json",
        "anthropic-version": version,
        // Only what `ANTHROPIC_FORWARDED` names comes from the client.
        ...forwardedHeaders(clientHeaders, ANTHROPIC_FORWARDED),
      };
      if (provider.apiKey !== undefined) headers["x-api-key"] = provider.apiKey;
      const query = forwardedQuery(clientQuery, ANTHROPIC_FORWARDED);
      return { url: query === "" ? endpoint : `${endpoint}?${query}`, headers };
    },
    encodeRequest: (request) =>
      coreToAnthropicRequest(hoistLeadingSystem(request), owner === undefined ? {} : { signatureOwner: owner }),
    decodeResponse: (body) => decodeResponse(owner === undefined ? body : wrapAnswerSignatures(body, owner)),
    streamDecoder: () =>
      owner === undefined
        ? createAnthropicStreamDecoder()
        : wrapStreamSignatures(createAnthropicStreamDecoder(), owner),
    tokenCounter: (clientApi) => anthropicTokenCounter(connection, clientApi),
    // Anthropic's Models API; its list reads as OpenAI's does (`data`), with `max_input_tokens` and `max_tokens`.
    discovery: {
      url: `${v1}/models`,
      headers: {
        ...provider.headers,
        ...(provider.apiKey === undefined ? {} : { "x-api-key": provider.apiKey }),
        "anthropic-version": version,
      },
    },
  };
  if (owner !== undefined) return { ...connection, signatureOwner: owner };
  return connection;
}

/** What `count_tokens` takes of a Messages request: any other field (`max_tokens`, `stream`) is refused. */
const COUNT_TOKENS_FIELDS = ["model", "messages", "system", "tools", "tool_choice", "thinking"];

/**
 * `POST /v1/messages/count_tokens`, with the query and betas the client's messages would go with. An Anthropic
 * client's own body goes as it came, only its model renamed (invariant 8); any other client's request as this
 * connection writes it, cut to what the endpoint takes.
 */
function anthropicTokenCounter(connection: UpstreamConnection, clientApi: string): TokenCounter {
  return {
    endpoint: "POST /v1/messages/count_tokens",
    async count({ request, clientBody, clientHeaders, clientQuery, post }) {
      const target = connection.target(clientHeaders, false, clientQuery);
      const url = target.url.replace(/\/messages(\?|$)/, "/messages/count_tokens$1");
      let body: Record<string, unknown>;
      if (clientApi === "anthropic") body = { ...clientBody, model: request.model };
      else {
        const encoded = connection.encodeRequest(request).value as Record<string, unknown>;
        body = Object.fromEntries(
          COUNT_TOKENS_FIELDS.filter((field) => field in encoded).map((field) => [field, encoded[field]]),
        );
      }
      const answer = (await post(url, target.headers, body)) as { input_tokens?: unknown } | null;
      return tokenCount(answer?.input_tokens);
    },
  };
}

/**
 * OpenAI clients put the system prompt first among the messages; Anthropic's place for it is `system`, which
 * every Anthropic-compatible server reads (not all of them take a `system` message in place).
 */
export function hoistLeadingSystem(request: ConversationRequest): ConversationRequest {
  let count = 0;
  while (request.messages[count]?.role === "system") count++;
  if (count === 0 || request.system !== undefined) return request;
  const parts = request.messages.slice(0, count).flatMap((message) => message.parts);
  return { ...request, system: { role: "system", parts }, messages: request.messages.slice(count) };
}
