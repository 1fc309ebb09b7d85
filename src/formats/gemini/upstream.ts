import { type ConversationRequest, InvalidRequestError } from "../../core/index.js";
import {
  type ClientForwarding,
  type ListedModel,
  type NotAnAnswer,
  type ProviderSettings,
  type RepairTarget,
  SettingError,
  tokenCount,
  type UpstreamConnection,
  type UpstreamSide,
} from "../adapter.js";
import { forwardedHeaders } from "../forwarded.js";
import { refusesReasoning } from "../reasoning-refusal.js";
import { streamErrorFromGemini } from "./errors.js";
import { coreToGeminiRequest } from "./from-core.js";
import { createGeminiStreamDecoder } from "./stream-decoder.js";
import { geminiResponseToCore } from "./to-core.js";

/**
 * What Gemini refuses in a history: a function call's responses must come in the next content, as many as there
 * were calls; a content with no parts. Roles need not alternate. Thinking is the encoder's to place: the provider's
 * own signatures go back on their parts, anything else as text or not at all (see `contents-from-core.ts`).
 */
export const GEMINI_REPAIR_TARGET: RepairTarget = {
  toolResultZone: "next-message",
  emptiness: "no-content",
  alternatingRoles: false,
  toolResultsFirst: false,
  noTrailingWhitespaceAtEnd: false,
  reasoningOnToolCallTurns: false,
};

/** Nothing of the client's own request goes to Gemini: the body and the URL are all it reads. */
const GEMINI_FORWARDED: ClientForwarding = { headers: [], queryParameters: [] };

/** The servers Parley knows that speak the Gemini API: Google's Gemini API, and Vertex AI (a distinct origin). */
const PRESETS = ["gemini", "vertex"] as const;

/** Google's words for a thought signature missing from the part that needs one, or one it cannot read. */
export const GEMINI_REASONING_REFUSALS: readonly RegExp[] = [
  /missing a `?thought[_ ]?signature`?/i,
  /thought[_ ]?signature`? (?:is )?(?:invalid|not valid|corrupt)/i,
  /invalid `?thought[_ ]?signature/i,
  /corrupted thought[_ ]?signature/i,
];

/** Parley calling Google's Gemini API, or Vertex AI's `generateContent`. */
export const geminiUpstream: UpstreamSide = {
  type: "gemini",
  repairTarget: GEMINI_REPAIR_TARGET,
  connect: connectGemini,
  encodeRequest: (request, options = {}) =>
    coreToGeminiRequest(request, { reasoning: options.reasoning === "drop" ? "drop" : "think-tags" }),
  decodeResponse: (body) => geminiResponseToCore(body),
  streamDecoder: () => createGeminiStreamDecoder(),
  notAnAnswer: geminiNotAnAnswer,
  checkAnswer: checkGeminiAnswer,
  forwarded: GEMINI_FORWARDED,
  isReasoningRefusal: refusesReasoning(GEMINI_REASONING_REFUSALS),
};

/** An error body in place of an answer, or an answer with neither candidates nor a blocked prompt. */
export function geminiNotAnAnswer(body: Record<string, unknown>): NotAnAnswer | undefined {
  if (body.error !== undefined && body.error !== null && !Array.isArray(body.candidates))
    return { error: streamErrorFromGemini(body.error) };
  if (!Array.isArray(body.candidates) && body.promptFeedback === undefined)
    return { noAnswer: "upstream answered without candidates" };
  return undefined;
}

export function checkGeminiAnswer(body: Record<string, unknown>): void {
  if (!Array.isArray(body.candidates) && body.promptFeedback === undefined)
    throw new InvalidRequestError("must be an array of candidates (is this a Gemini response?)", "candidates");
}

/** The base models are under: the URL as given when it names its version (or Vertex's publisher), else `/v1beta`. */
export function modelsBase(baseUrl: string): string {
  if (/\/v1(beta\d*|alpha)?$/.test(baseUrl) || /\/publishers\/[^/]+$/.test(baseUrl)) return baseUrl;
  return `${baseUrl}/v1beta`;
}

function presetOf(provider: ProviderSettings): (typeof PRESETS)[number] {
  if (provider.preset === undefined) return /aiplatform\.googleapis\.com/.test(provider.baseUrl) ? "vertex" : "gemini";
  if (!(PRESETS as readonly string[]).includes(provider.preset))
    throw new SettingError(
      "preset",
      `unknown preset '${provider.preset}' for a Gemini provider (known: ${PRESETS.join(", ")})`,
    );
  return provider.preset as (typeof PRESETS)[number];
}

function connectGemini(provider: ProviderSettings): UpstreamConnection {
  const preset = presetOf(provider);
  const compat = Object.keys(provider.compat);
  if (compat.length > 0) throw new SettingError(`compat.${compat[0]}`, "unknown setting");
  const mode = provider.reasoning;
  if (mode !== undefined && mode !== "think-tags" && mode !== "drop")
    throw new SettingError(
      "reasoning",
      "a gemini provider takes think-tags or drop (its own thoughts go back as they came)",
    );
  const reasoning = mode ?? "think-tags";
  const base = modelsBase(provider.baseUrl);
  const keyHeaders = (): Record<string, string> => {
    if (provider.apiKey === undefined) return {};
    // Vertex AI takes an OAuth access token; the Gemini API its key.
    return preset === "vertex" ? { authorization: `Bearer ${provider.apiKey}` } : { "x-goog-api-key": provider.apiKey };
  };
  const decodeOptions = { provider: provider.name };
  const encodeRequest = (request: ConversationRequest) =>
    coreToGeminiRequest(request, { provider: provider.name, reasoning });
  return {
    endpoint: `${base}/models/{model}:generateContent`,
    repairTarget: { ...GEMINI_REPAIR_TARGET, provider: provider.name },
    target(clientHeaders, stream, _clientQuery, model = "") {
      const name = encodeURIComponent(model.startsWith("models/") ? model.slice(7) : model);
      const method = stream ? "streamGenerateContent?alt=sse" : "generateContent";
      return {
        url: `${base}/models/${name}:${method}`,
        headers: {
          ...provider.headers,
          "content-type": "application/json",
          accept: stream ? "text/event-stream" : "application/json",
          ...forwardedHeaders(clientHeaders, GEMINI_FORWARDED),
          ...keyHeaders(),
        },
      };
    },
    encodeRequest,
    decodeResponse: (body) => geminiResponseToCore(body, decodeOptions),
    streamDecoder: () => createGeminiStreamDecoder(decodeOptions),
    // A whole answer is one event of the stream it stands for.
    wholeAnswerAsStream: (body) => `data: ${JSON.stringify(body)}\n\n`,
    tokenCounter: () => ({
      endpoint: "POST models/{model}:countTokens",
      async count({ request, post }) {
        const name = request.model.startsWith("models/") ? request.model.slice(7) : request.model;
        const headers = { ...provider.headers, "content-type": "application/json", ...keyHeaders() };
        const encoded = encodeRequest(request).value as Record<string, unknown>;
        const answer = await post(
          `${base}/models/${encodeURIComponent(name)}:countTokens`,
          headers,
          countTokensBody(preset, name, encoded),
        );
        return tokenCount((answer as { totalTokens?: unknown } | null)?.totalTokens);
      },
    }),
    discovery: {
      url: `${base}/models?pageSize=1000`,
      headers: { ...provider.headers, ...keyHeaders() },
      parse: parseGeminiModels,
    },
  };
}

/** What Vertex AI's `countTokens` takes beside the contents (its `CountTokensRequest`). */
const VERTEX_COUNT_FIELDS = ["contents", "systemInstruction", "tools", "generationConfig"];

/**
 * A `countTokens` body that counts what `generateContent` would be sent: the Gemini API takes the whole request under
 * `generateContentRequest`, naming its model (`models/...`), since `contents` alone leaves out the system instruction
 * and the tools; Vertex AI takes those fields beside `contents`.
 */
function countTokensBody(
  preset: (typeof PRESETS)[number],
  model: string,
  request: Record<string, unknown>,
): Record<string, unknown> {
  if (preset === "vertex")
    return Object.fromEntries(
      VERTEX_COUNT_FIELDS.filter((field) => field in request).map((field) => [field, request[field]]),
    );
  return { generateContentRequest: { model: `models/${model}`, ...request } };
}

/**
 * `GET /v1beta/models`: `{models: [{name: "models/...", inputTokenLimit, outputTokenLimit,
 * supportedGenerationMethods}]}`, the models that generate content; the input limit stands for the window.
 */
export function parseGeminiModels(json: unknown): ListedModel[] | undefined {
  const models = (json as { models?: unknown } | null)?.models;
  if (!Array.isArray(models)) return undefined;
  const out: ListedModel[] = [];
  for (const entry of models) {
    if (entry === null || typeof entry !== "object") continue;
    const { name, inputTokenLimit, outputTokenLimit, supportedGenerationMethods } = entry as Record<string, unknown>;
    if (typeof name !== "string") continue;
    if (Array.isArray(supportedGenerationMethods) && !supportedGenerationMethods.includes("generateContent")) continue;
    const model: ListedModel = { id: name.startsWith("models/") ? name.slice(7) : name };
    if (typeof inputTokenLimit === "number" && inputTokenLimit > 0) model.contextWindow = inputTokenLimit;
    if (typeof outputTokenLimit === "number" && outputTokenLimit > 0) model.maxOutputTokens = outputTokenLimit;
    out.push(model);
  }
  return out;
}
