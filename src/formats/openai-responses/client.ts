import type { ContextOverflow, ConversationResponse, ErrorType, LossyEntry, StreamError } from "../../core/index.js";
import { assertNever } from "../../core/index.js";
import type { ClientSide, ClientStreamEncoder } from "../adapter.js";
import { coreToResponsesResponse } from "./from-core.js";
import { newItemId } from "./ids.js";
import { createResponsesStreamEncoder } from "./stream-encoder.js";
import { responsesRequestToCore } from "./to-core.js";
import { parseResponsesRequest } from "./validate-request.js";
import type { ResponsesCompactionObject } from "./wire-types.js";

/**
 * Parley answering OpenAI Responses clients (Codex, the OpenAI SDKs and Agents SDK): `POST /v1/responses`, streamed
 * or not, and the answers it keeps (`store`) read back and deleted by id.
 */
export const responsesClient: ClientSide = {
  routes: [
    { method: "POST", path: "/v1/responses", kind: "answer" },
    { method: "GET", path: "/v1/responses/{id}", kind: "stored-answer" },
    { method: "DELETE", path: "/v1/responses/{id}", kind: "delete-stored-answer" },
    { method: "POST", path: "/v1/responses/compact", kind: "compact" },
  ],
  pathPrefix: "/v1/responses",
  readRequest(body, place) {
    const read = responsesRequestToCore(parseResponsesRequest(body));
    if (place?.route.kind !== "compact") return read;
    // `POST /v1/responses/compact`: the whole answer is the compacted conversation, kept by the client alone.
    return { ...read, value: { ...read.value, compact: true, stream: false }, state: { kept: false } };
  },
  encodeResponse(response, options = {}) {
    const encoded = coreToResponsesResponse(response, options);
    if (options.compaction !== true) return encoded;
    // `POST /v1/responses/compact` answers its compacted conversation as its own object, not as a response.
    const { id, created_at, output, usage } = encoded.value;
    const compacted: ResponsesCompactionObject = { id, object: "response.compaction", created_at, output, usage };
    return { value: compacted, lossy: encoded.lossy };
  },
  streamEncoder(options): ClientStreamEncoder {
    const encoder = createResponsesStreamEncoder(options);
    return {
      encode: (event) => encoder.encode(event),
      // An SSE comment: ignored by the SDKs and by Codex, keeps proxies from closing an idle connection.
      ping: () => ": ping\n\n",
      error: (error) => encoder.error(error),
      end: () => "",
    };
  },
  streamedAnswerLossy(answer: ConversationResponse, options = {}): LossyEntry[] {
    const lossy = coreToResponsesResponse(answer, options).lossy;
    answer.message.parts.forEach((part, index) => {
      if (part.type !== "tool_call" || part.rawInput === undefined) return;
      lossy.push({
        code: "tool-arguments-not-json",
        message: `tool call '${part.name}' arguments are not valid JSON; sent as received`,
        path: `message.content[${index}]`,
      });
    });
    return lossy;
  },
  errorBody: (error) =>
    error.contextOverflow === undefined
      ? { error: { message: error.message, type: error.type, param: error.param, code: errorCode(error.type) } }
      : {
          error: {
            message: inputExceedsWindow(error.contextOverflow),
            type: "invalid_request_error",
            param: "input",
            code: "context_length_exceeded",
          },
        },
  errorDocument: (error: StreamError) => ({
    error: { message: error.message, type: error.type, param: null, code: null },
  }),
  compaction: {
    answerPart: (envelope) => ({
      type: "opaque",
      format: "responses",
      block: { id: newItemId("cmp"), type: "compaction", encrypted_content: envelope },
    }),
  },
  stored: {
    newId: () => newItemId("resp"),
    previousParam: "previous_response_id",
    notFound: (id) => `Response with id '${id}' not found.`,
    deleted: (id) => ({ id, object: "response", deleted: true }),
  },
};

function errorCode(type: ErrorType): string | null {
  switch (type) {
    case "authentication_error":
      return "invalid_api_key";
    case "rate_limit_error":
      return "rate_limit_exceeded";
    case "not_found_error":
      return "not_found";
    case "overloaded_error":
      return "server_is_overloaded";
    case "request_too_large":
      return "request_too_large";
    case "timeout_error":
      return "timeout";
    case "invalid_request_error":
    case "permission_error":
    case "api_error":
      return null;
    default:
      return assertNever(type, "error type");
  }
}

/** The Responses API's words for a prompt over the window, under the code Codex compacts on. */
function inputExceedsWindow({ promptTokens, contextWindow }: ContextOverflow): string {
  const counts =
    promptTokens !== undefined && contextWindow !== undefined
      ? ` (${promptTokens} tokens > ${contextWindow} maximum)`
      : contextWindow !== undefined
        ? ` of ${contextWindow} tokens`
        : "";
  return `Your input exceeds the context window of this model${counts}. Please adjust your input and try again.`;
}
