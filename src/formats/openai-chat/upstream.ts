import { type ConversationRequest, type Converted, InvalidRequestError, type LossyEntry } from "../../core/index.js";
import {
  type ClientForwarding,
  type NotAnAnswer,
  type ProviderSettings,
  type RepairTarget,
  SettingError,
  type UpstreamConnection,
  type UpstreamSide,
} from "../adapter.js";
import { bearerDiscovery, bearerTarget } from "../forwarded.js";
import { type OpenAICompat, PRESETS, presetFromOwners, resolveCompat, TOKEN_COUNT_ENDPOINTS } from "./compat.js";
import { coreToOpenAIRequest } from "./from-core.js";
import { streamErrorFromOpenAI } from "./map-error.js";
import { limitsProviderKey, publishedLimits } from "./model-limits.js";
import { THOUGHT_SIGNATURE_KEYS } from "./signature-keys.js";
import { createOpenAIStreamDecoder, type OpenAIDecodeOptions } from "./stream-decoder.js";
import { refusesThoughtSignature } from "./thought-signatures.js";
import { openaiResponseToCore } from "./to-core.js";
import { chatTokenCounter } from "./token-count.js";
import type { OpenAIChatResponse } from "./wire-types.js";

/** What a Chat Completions API refuses in a history, for a provider with these quirks. */
export function openaiRepairTarget(compat: Partial<OpenAICompat>, provider?: string): RepairTarget {
  const target: RepairTarget = {
    toolResultZone: "until-next-assistant",
    emptiness: "no-content",
    alternatingRoles: false,
    toolResultsFirst: compat.strictToolMessageOrder ?? false,
    noTrailingWhitespaceAtEnd: false,
    reasoningOnToolCallTurns: compat.requiresReasoningOnToolCallTurns ?? false,
  };
  if (provider !== undefined) target.provider = provider;
  return target;
}

/** Nothing of the client's own request goes to a Chat Completions API: its body is all the API reads. */
const OPENAI_FORWARDED: ClientForwarding = { headers: [], queryParameters: [] };

/** Parley calling an OpenAI-compatible Chat Completions API. */
export const openaiChatUpstream: UpstreamSide = {
  type: "openai",
  // OpenAI's own rule, which `parley repair --for openai` applies: tool messages right after the tool calls.
  repairTarget: /* @__PURE__ */ openaiRepairTarget({ strictToolMessageOrder: true }),
  connect: connectOpenAI,
  encodeRequest: (request, options = {}) =>
    coreToOpenAIRequest(request, { reasoning: options.reasoning ?? "think-tags" }),
  decodeResponse: (body) => openaiResponseToCore(body as OpenAIChatResponse),
  streamDecoder: () => createOpenAIStreamDecoder(),
  notAnAnswer: openaiNotAnAnswer,
  checkAnswer: checkOpenAIAnswer,
  streamEndMarker: "[DONE]",
  forwarded: OPENAI_FORWARDED,
  streamEventLossy(data): LossyEntry | undefined {
    const choices = (data as { choices?: unknown } | null)?.choices;
    if (!Array.isArray(choices)) return undefined;
    if (!choices.some((choice) => ((choice as { index?: unknown } | null)?.index ?? 0) !== 0)) return undefined;
    return { code: "extra-choices-dropped", message: "only the first choice is kept" };
  },
};

/** An error object, or no choices, behind a 2xx. */
export function openaiNotAnAnswer(body: Record<string, unknown>): NotAnAnswer | undefined {
  // Some servers send an error object with a 2xx: it is the error the same status would have been.
  if (body.error !== undefined && body.error !== null && !Array.isArray(body.choices))
    return { error: streamErrorFromOpenAI(body.error) };
  if (!Array.isArray(body.choices) || body.choices.length === 0)
    return { noAnswer: "upstream answered without any choices" };
  return undefined;
}

export function checkOpenAIAnswer(body: Record<string, unknown>): void {
  const choices = body.choices;
  if (!Array.isArray(choices) || choices.length === 0)
    throw new InvalidRequestError(
      "must be a non-empty array of choices (is this a Chat Completions response?)",
      "choices",
    );
  const message = (choices[0] as { message?: unknown } | null)?.message;
  if (message === null || typeof message !== "object" || Array.isArray(message))
    throw new InvalidRequestError("must be an object", "choices[0].message");
  const content = (message as { content?: unknown }).content;
  if (content !== undefined && content !== null && typeof content !== "string" && !Array.isArray(content))
    throw new InvalidRequestError("must be a string, an array of parts or null", "choices[0].message.content");
}

/** Every setting name a provider's `compat` may override. */
const COMPAT_KEYS = /* @__PURE__ */ new Set([
  ...Object.keys(PRESETS.generic ?? {}),
  "maxTokensCap",
  "textToolCallFormat",
]);

function connectOpenAI(provider: ProviderSettings): UpstreamConnection {
  // A preset guessed from the URL gives way to what the server says it is in its model list (`recogniseServer`).
  let compat = compatOf(provider);
  let reasoning = provider.reasoning ?? compat.reasoningMode;
  const endpoint = `${provider.baseUrl}/chat/completions`;
  let recognised = false;
  const decodeOptions = (request: ConversationRequest): OpenAIDecodeOptions => {
    // Whose reasoning it is, and which text tool-call syntax to recover (typed by the request's tools).
    const options: OpenAIDecodeOptions = { provider: provider.name };
    if (request.tools !== undefined) options.tools = request.tools;
    if (compat.textToolCallFormat !== undefined) options.textToolCalls = compat.textToolCallFormat;
    return options;
  };
  const target = bearerTarget(provider, endpoint, OPENAI_FORWARDED);
  const encodeRequest = (request: ConversationRequest): Converted<unknown> => {
    // Without a preset (named or known from the URL) or a setting, the mode is no one's choice: a client's
    // reasoning field goes as it came.
    const asItCame = provider.reasoning === undefined && provider.preset === undefined && compat.id === "generic";
    const converted = coreToOpenAIRequest(request, {
      reasoning,
      compat,
      provider: provider.name,
      ...(asItCame ? { reasoningAsItCame: true } : {}),
    });
    const body = converted.value as unknown as Record<string, unknown>;
    if (request.stream && body.stream_options === undefined && compat.streamUsage !== false) {
      // Usage arrives only when asked for; clients' context meters depend on it.
      body.stream_options = { include_usage: true };
    }
    return converted;
  };
  return {
    endpoint,
    get repairTarget() {
      return openaiRepairTarget(compat, provider.name);
    },
    target,
    get takesCacheKey() {
      return compat.promptCacheKey;
    },
    get isReasoningRefusal() {
      return compat.thoughtSignatures === "none" ? undefined : refusesThoughtSignature;
    },
    encodeRequest,
    decodeResponse: (body, request) => openaiResponseToCore(body as OpenAIChatResponse, decodeOptions(request)),
    streamDecoder: (request) => createOpenAIStreamDecoder(decodeOptions(request)),
    wholeAnswerAsStream,
    modelFacts: {
      get preset() {
        return compat.id;
      },
      get presetFrom() {
        return provider.preset !== undefined ? "configuration" : recognised ? "model list" : "URL";
      },
      publishedLimits: (model) => publishedLimits(limitsProviderKey(compat.id, provider.baseUrl), model),
      ...(compat.maxTokensCap === undefined ? {} : { maxTokensCap: compat.maxTokensCap }),
    },
    discovery: bearerDiscovery(provider),
    tokenCounter(clientApi) {
      return chatTokenCounter(compat.tokenCount, { target, encodeRequest }, provider.baseUrl, clientApi);
    },
    recogniseServer(owners) {
      if (provider.preset !== undefined) return;
      const named = presetFromOwners(owners);
      if (named === undefined || named === compat.id) return;
      compat = resolveCompat(named, provider.baseUrl, provider.compat as Partial<OpenAICompat>);
      recognised = true;
      reasoning = provider.reasoning ?? compat.reasoningMode;
    },
  };
}

/** The provider's quirks: its preset (named, or guessed from the base URL) with its overrides. */
export function compatOf(provider: ProviderSettings): OpenAICompat {
  if (provider.preset !== undefined && !(provider.preset in PRESETS)) {
    throw new SettingError("preset", `unknown preset '${provider.preset}' (known: ${Object.keys(PRESETS).join(", ")})`);
  }
  for (const key of Object.keys(provider.compat)) {
    if (!COMPAT_KEYS.has(key)) throw new SettingError(`compat.${key}`, "unknown setting");
  }
  const signatures = provider.compat.thoughtSignatures;
  if (
    signatures !== undefined &&
    signatures !== "none" &&
    !(THOUGHT_SIGNATURE_KEYS as readonly unknown[]).includes(signatures)
  )
    throw new SettingError(
      "compat.thoughtSignatures",
      `must be one of ${[...THOUGHT_SIGNATURE_KEYS, "none"].join(", ")}`,
    );
  const counting = provider.compat.tokenCount;
  if (counting !== undefined && !(TOKEN_COUNT_ENDPOINTS as readonly unknown[]).includes(counting))
    throw new SettingError("compat.tokenCount", `must be one of ${TOKEN_COUNT_ENDPOINTS.join(", ")}`);
  try {
    return resolveCompat(provider.preset, provider.baseUrl, provider.compat as Partial<OpenAICompat>);
  } catch (error) {
    throw new SettingError("compat", (error as Error).message);
  }
}

/**
 * A whole answer as the one-chunk event stream it is equivalent to: the message becomes the delta, so that
 * the stream decoder reads it as the whole-answer codec reads it.
 */
function wholeAnswerAsStream(body: Record<string, unknown>): string {
  const { choices, ...rest } = body as { choices?: Array<Record<string, unknown>> } & Record<string, unknown>;
  const chunk = {
    ...rest,
    choices: (Array.isArray(choices) ? choices : []).map(({ message, ...choice }) => ({ ...choice, delta: message })),
  };
  return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
}
