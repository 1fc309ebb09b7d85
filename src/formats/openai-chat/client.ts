import type { ContextOverflow, ConversationResponse, ErrorType, LossyEntry, StreamError } from "../../core/index.js";
import { assertNever } from "../../core/index.js";
import { formatSse } from "../../stream/sse.js";
import type { ClientSide, ClientStreamEncoder, ClientStreamOptions, ModelInfo } from "../adapter.js";
import { coreToOpenAIResponse } from "./from-core.js";
import { createOpenAIStreamEncoder, type OpenAIStreamEncoder } from "./stream-encoder.js";
import { openaiRequestToCore } from "./to-core.js";
import { parseOpenAIRequest } from "./validate-request.js";

/** Parley answering OpenAI Chat Completions clients. */
export const openaiChatClient: ClientSide = {
  routes: [{ method: "POST", path: "/v1/chat/completions", kind: "answer" }],
  pathPrefix: "/v1/chat/",
  readRequest(body) {
    const converted = openaiRequestToCore(parseOpenAIRequest(body));
    const streamOptions = (body as { stream_options?: { include_usage?: unknown } }).stream_options;
    return { ...converted, includeUsage: streamOptions?.include_usage === true };
  },
  encodeResponse: (response, options = {}) =>
    coreToOpenAIResponse(response, options.reasoning === undefined ? {} : { reasoning: options.reasoning }),
  streamEncoder: openaiClientStream,
  streamedAnswerLossy(answer: ConversationResponse, options = {}): LossyEntry[] {
    const lossy = coreToOpenAIResponse(answer, { reasoning: options.reasoning ?? "reasoning_content" }).lossy;
    // Arguments go out as they came in, in the `arguments` string.
    answer.message.parts.forEach((part, index) => {
      if (part.type !== "tool_call" || part.rawInput === undefined) return;
      lossy.push({
        code: "tool-arguments-not-json",
        message: `tool call '${part.name}' arguments are not valid JSON; streamed as received`,
        path: `message.content[${index}]`,
      });
    });
    return lossy;
  },
  errorBody: (error, _requestId) =>
    error.contextOverflow === undefined
      ? { error: { message: error.message, type: error.type, param: error.param, code: openaiCode(error.type) } }
      : {
          error: {
            message: contextLengthExceeded(error.contextOverflow),
            type: "invalid_request_error",
            param: "messages",
            code: "context_length_exceeded",
          },
        },
  errorDocument,
  // No route of its own: `GET /v1/models` answers in this shape to an OpenAI client (see the gateway's model list).
  models: {
    list: (models) => ({ object: "list", data: models.map(modelObject) }),
    one: modelObject,
    marks: { bearer: true },
  },
};

/** OpenAI's model object, with the limits as OpenRouter names them (`context_length`, `max_completion_tokens`). */
function modelObject(model: ModelInfo) {
  const object: Record<string, unknown> = {
    id: model.id,
    object: "model",
    created: Math.floor(Date.parse(model.createdAt) / 1000),
    owned_by: model.ownedBy ?? "parley",
  };
  if (model.contextWindow !== undefined) object.context_length = model.contextWindow;
  if (model.maxOutputTokens !== undefined) object.max_completion_tokens = model.maxOutputTokens;
  return object;
}

function errorDocument(error: StreamError) {
  return { error: { message: error.message, type: error.type, param: null, code: null } };
}

/**
 * The chunk encoder, with the frames around it. Without a model name it is built at the first event, from
 * `message-start` (the source's model and id); `end` adds `data: [DONE]` once the answer finished or failed.
 */
function openaiClientStream(options: ClientStreamOptions): ClientStreamEncoder {
  let encoder: OpenAIStreamEncoder | undefined =
    options.model === undefined
      ? undefined
      : createOpenAIStreamEncoder({ ...encoderOptions(options), model: options.model });
  let ended = false;
  return {
    encode(event) {
      if (encoder === undefined) {
        const start = event.type === "message-start" ? event : undefined;
        encoder = createOpenAIStreamEncoder({
          ...encoderOptions(options),
          model: start?.model ?? "unknown",
          ...(start ? { id: start.id } : {}),
        });
      }
      if (event.type === "finish" || event.type === "error") ended = true;
      return encoder.encode(event);
    },
    // An SSE comment: ignored by every OpenAI client, keeps proxies from closing an idle connection.
    ping: () => ": ping\n\n",
    error(error) {
      ended = true;
      return formatSse(undefined, JSON.stringify(errorDocument(error)));
    },
    end: () => (encoder !== undefined && ended ? encoder.done() : ""),
  };
}

function encoderOptions(options: ClientStreamOptions) {
  return { reasoning: options.reasoning ?? "reasoning_content", includeUsage: options.includeUsage ?? false };
}

function openaiCode(type: ErrorType): string | null {
  switch (type) {
    case "authentication_error":
      return "invalid_api_key";
    case "rate_limit_error":
      return "rate_limit_exceeded";
    case "request_too_large":
      return "request_too_large";
    case "overloaded_error":
      return "overloaded";
    case "timeout_error":
      return "timeout";
    case "not_found_error":
      return "not_found";
    case "invalid_request_error":
    case "permission_error":
    case "api_error":
      return null;
    default:
      return assertNever(type, "error type");
  }
}

/** OpenAI's words for a prompt over the window, under the code clients act on (`context_length_exceeded`). */
function contextLengthExceeded({ promptTokens, contextWindow }: ContextOverflow): string {
  const maximum =
    contextWindow === undefined
      ? "This model's maximum context length was exceeded."
      : `This model's maximum context length is ${contextWindow} tokens.`;
  const resulted = promptTokens === undefined ? "" : ` However, your messages resulted in ${promptTokens} tokens.`;
  return `${maximum}${resulted} Please reduce the length of the messages.`;
}
