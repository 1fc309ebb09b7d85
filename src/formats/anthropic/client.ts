import type { ContextOverflow, ConversationResponse, LossyEntry, StreamError } from "../../core/index.js";
import type { ClientSide, ModelInfo } from "../adapter.js";
import { coreToAnthropicResponse } from "./from-core.js";
import { createAnthropicStreamEncoder } from "./stream-encoder.js";
import { threadContinued } from "./threads.js";
import { anthropicRequestToCore } from "./to-core.js";
import { parseAnthropicRequest, parseCountTokensRequest } from "./validate-request.js";
import type { AnthropicRequestBody } from "./wire-types.js";

/** Parley answering Anthropic clients: `POST /v1/messages` (stateful with a conversation id) and its neighbours. */
export const anthropicClient: ClientSide = {
  routes: [
    { method: "POST", path: "/v1/messages", kind: "answer", conversations: true },
    { method: "POST", path: "/v1/messages/count_tokens", kind: "count-tokens" },
    { method: "GET", path: "/v1/models", kind: "models" },
    { method: "GET", path: "/v1/models/{id}", kind: "model" },
  ],
  readRequest: (body) => anthropicRequestToCore(parseAnthropicRequest(body)),
  // A count has no answer to size: any max_tokens reads the request the same.
  readCountTokensRequest: (body) =>
    anthropicRequestToCore({ ...parseCountTokensRequest(body), max_tokens: 1 } as AnthropicRequestBody).value,
  encodeResponse: (response) => coreToAnthropicResponse(response),
  streamEncoder(options) {
    const encoder = createAnthropicStreamEncoder(options.model === undefined ? {} : { model: options.model });
    return {
      encode: (event) => encoder.encode(event),
      ping: () => encoder.ping(),
      error: (error) => encoder.error(error),
      end: () => "",
    };
  },
  streamedAnswerLossy(answer: ConversationResponse): LossyEntry[] {
    const lossy = coreToAnthropicResponse(answer).lossy;
    // Its encoder sends each tool input whole, as an object: arguments that were not JSON went repaired.
    answer.message.parts.forEach((part, index) => {
      if (part.type !== "tool_call" || part.rawInput === undefined) return;
      lossy.push({
        code: "tool-arguments-repaired",
        message: `tool call '${part.name}' arguments were not valid JSON; the input was repaired`,
        path: `message.content[${index}]`,
      });
    });
    // Its encoder leaves out a signature-only thinking block that would end the answer after its text.
    const parts = answer.message.parts;
    const last = parts.at(-1);
    if (last?.type === "thinking" && last.thinking === "" && parts.at(-2)?.type === "text")
      lossy.push({
        code: "thought-signature-dropped",
        message: "a signature given after the answer's text was left out, so that the answer ends with its text",
        path: `message.content[${parts.length - 1}]`,
      });
    return lossy;
  },
  errorBody: (error, requestId) => {
    if (error.contextOverflow !== undefined) {
      const message = promptTooLong(error.contextOverflow);
      return { type: "error", error: { type: "invalid_request_error", message }, request_id: requestId };
    }
    return {
      type: "error",
      error:
        error.details === undefined
          ? { type: error.type, message: error.message }
          : { type: error.type, message: error.message, details: error.details },
      request_id: requestId,
    };
  },
  errorDocument: (error: StreamError) => ({ type: "error", error: { type: error.type, message: error.message } }),
  models: {
    list(models) {
      const data = models.map(modelObject);
      return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
    },
    one: modelObject,
    // Claude Code and the Anthropic SDK send `anthropic-version`.
    marks: { headers: ["anthropic-version", "x-api-key"] },
  },
  continuesHeldHistory: threadContinued,
};

/**
 * Anthropic's model object, with the limits Anthropic's Models API gives and Claude Code reads from a gateway:
 * `max_input_tokens` (the window) and `max_tokens` (the output limit; a window shared by prompt and answer bounds
 * the answer too when no separate limit is known).
 */
function modelObject(model: ModelInfo) {
  const object: Record<string, unknown> = {
    type: "model",
    id: model.id,
    display_name: model.upstreamModel === undefined ? model.id : `${model.id} (${model.upstreamModel})`,
    created_at: model.createdAt,
  };
  const output = model.maxOutputTokens ?? model.contextWindow;
  if (model.contextWindow !== undefined) object.max_input_tokens = model.contextWindow;
  if (output !== undefined) object.max_tokens = output;
  return object;
}

/**
 * Anthropic's words for a prompt over the window, which Claude Code recognises (and reads the counts of) to compact:
 * `prompt is too long: 208310 tokens > 200000 maximum`.
 */
function promptTooLong(overflow: ContextOverflow): string {
  const { promptTokens, contextWindow } = overflow;
  if (promptTokens === undefined || contextWindow === undefined) return "prompt is too long";
  return `prompt is too long: ${promptTokens} tokens > ${contextWindow} maximum`;
}
