import type { ConversationResponse, LossyEntry, StreamError } from "../../core/index.js";
import type { ClientSide, ModelInfo, RequestPlace } from "../adapter.js";
import { geminiErrorBody } from "./errors.js";
import { coreToGeminiResponse } from "./from-core.js";
import { createGeminiStreamEncoder } from "./stream-encoder.js";
import { type RequestPlace as GeminiPlace, geminiRequestToCore } from "./to-core.js";
import { parseCountTokensRequest, parseGeminiRequest } from "./validate-request.js";

/**
 * Parley answering Gemini clients (Gemini CLI, the `@google/genai` SDK): `generateContent` and
 * `streamGenerateContent` (the model in the path, the stream in the method's name), `countTokens` and the model list,
 * with their keys in `x-goog-api-key` or `?key=`.
 */
export const geminiClient: ClientSide = {
  routes: [
    // The `@google/genai` SDK calls API version v1 unless told otherwise, Gemini CLI's bundled one v1beta: the model
    // methods answer under both (the model list stays under v1beta: `GET /v1/models` is the other APIs' list).
    ...["/v1beta", "/v1"].flatMap((version) => [
      { method: "POST" as const, path: `${version}/models/{model}:generateContent`, kind: "answer" as const },
      {
        method: "POST" as const,
        path: `${version}/models/{model}:streamGenerateContent`,
        kind: "answer" as const,
        stream: true,
      },
      { method: "POST" as const, path: `${version}/models/{model}:countTokens`, kind: "count-tokens" as const },
    ]),
    { method: "GET", path: "/v1beta/models", kind: "models" },
    { method: "GET", path: "/v1beta/models/{id}", kind: "model" },
  ],
  pathPrefix: "/v1beta/",
  credentials: { headers: ["x-goog-api-key"], queryParameters: ["key"] },
  readRequest: (body, place) => geminiRequestToCore(parseGeminiRequest(body), placeOf(body, place)),
  readCountTokensRequest: (body, place) =>
    geminiRequestToCore(parseCountTokensRequest(body), { ...placeOf(body, place), stream: false }).value,
  countTokensBody: (inputTokens) => ({ totalTokens: inputTokens }),
  encodeResponse: (response, options = {}) =>
    coreToGeminiResponse(response, options.answerId === undefined ? {} : { answerId: options.answerId }),
  streamEncoder(options) {
    const encoder = createGeminiStreamEncoder({
      ...(options.model === undefined ? {} : { model: options.model }),
      ...(options.answerId === undefined ? {} : { answerId: options.answerId }),
    });
    return {
      encode: (event) => encoder.encode(event),
      // Google's SDKs read a stream as `data:` lines only; an SSE comment would stall their parser.
      ping: () => "",
      error: (error) => encoder.error(error),
      end: () => "",
    };
  },
  streamedAnswerLossy(answer: ConversationResponse): LossyEntry[] {
    return coreToGeminiResponse(answer).lossy;
  },
  errorBody: (error) => geminiErrorBody(error.type, error.message),
  errorDocument: (error: StreamError) => geminiErrorBody(error.type, error.message, error.status),
  models: {
    list: (models) => ({ models: models.map(modelObject) }),
    one: modelObject,
  },
};

/** The model and streaming of a request: from its URL, else (a body read with no URL, `parley convert`) its body. */
function placeOf(body: unknown, place: RequestPlace | undefined): GeminiPlace {
  const named = place?.params.model ?? (body as { model?: unknown } | null)?.model;
  return { model: modelName(typeof named === "string" ? named : ""), stream: place?.route.stream === true };
}

/** `models/gemini-2.5-pro` or `gemini-2.5-pro`: the model's own name. */
export function modelName(name: string): string {
  return name.startsWith("models/") ? name.slice("models/".length) : name;
}

/** Gemini's model object, with the limits Gemini CLI and the SDK read. */
function modelObject(model: ModelInfo) {
  const object: Record<string, unknown> = {
    name: `models/${model.id}`,
    displayName: model.upstreamModel === undefined ? model.id : `${model.id} (${model.upstreamModel})`,
    supportedGenerationMethods: ["generateContent", "streamGenerateContent", "countTokens"],
  };
  if (model.contextWindow !== undefined) object.inputTokenLimit = model.contextWindow;
  const output = model.maxOutputTokens ?? model.contextWindow;
  if (output !== undefined) object.outputTokenLimit = output;
  return object;
}
