import type { StreamError, StreamEvent } from "../../core/index.js";
import { formatSse } from "../../stream/sse.js";
import { createAnthropicStreamEncoder, createOpenAIStreamEncoder } from "./codecs.js";

/** Canonical events to the client's wire stream, with the keep-alive and error frames of its API. */
export interface ClientStreamEncoder {
  encode(event: StreamEvent): string;
  ping(): string;
  error(error: StreamError): string;
  /** What closes the stream after the last event (`data: [DONE]` on OpenAI). */
  end(): string;
}

export function clientStreamEncoder(
  format: "anthropic" | "openai",
  options: { model: string; includeUsage: boolean },
): ClientStreamEncoder {
  if (format === "anthropic") {
    const encoder = createAnthropicStreamEncoder({ model: options.model });
    return {
      encode: (event) => encoder.encode(event),
      ping: () => encoder.ping(),
      error: (error) => encoder.error(error),
      end: () => "",
    };
  }
  const encoder = createOpenAIStreamEncoder({
    model: options.model,
    reasoning: "reasoning_content",
    includeUsage: options.includeUsage,
  });
  return {
    encode: (event) => encoder.encode(event),
    // An SSE comment: ignored by every OpenAI client, keeps proxies from closing an idle connection.
    ping: () => ": ping\n\n",
    error: (error) =>
      formatSse(
        undefined,
        JSON.stringify({ error: { message: error.message, type: error.type, param: null, code: null } }),
      ),
    end: () => encoder.done(),
  };
}
