import { type TokenCounter, tokenCount, type UpstreamConnection } from "../adapter.js";
import type { TokenCountEndpoint } from "./compat.js";

/**
 * The model servers' own token counts, through the model's chat template and tokenizer, for `count_tokens` and
 * Gemini's `countTokens`. Each endpoint sits beside the server's `/v1`, at its root.
 *
 * - llama.cpp: an Anthropic client's body goes as it came to `/v1/messages/count_tokens` (`{input_tokens}`), where
 *   the server converts it and renders it itself; any other client's request is rendered as Parley sends it at
 *   `/apply-template` (`{prompt}`) and counted at `/tokenize` (`{tokens}`), special tokens parsed as the server
 *   parses them in a prompt.
 * - vLLM: `/tokenize` with the chat form (`{model, messages, tools, add_generation_prompt}`), which renders and
 *   counts in one call: `{count, max_model_len, tokens}` (vllm/entrypoints/serve/tokenize/protocol.py).
 */
export function chatTokenCounter(
  kind: TokenCountEndpoint,
  connection: Pick<UpstreamConnection, "target" | "encodeRequest">,
  baseUrl: string,
  clientApi: string,
): TokenCounter | undefined {
  const root = serverRoot(baseUrl);
  switch (kind) {
    case "none":
      return undefined;
    case "llamacpp":
      if (clientApi === "anthropic") {
        return {
          endpoint: "POST /v1/messages/count_tokens",
          async count({ request, clientBody, clientHeaders, post }) {
            const { headers } = connection.target(clientHeaders, false);
            const answer = await post(`${root}/v1/messages/count_tokens`, headers, {
              ...clientBody,
              model: request.model,
            });
            return tokenCount((answer as { input_tokens?: unknown } | null)?.input_tokens);
          },
        };
      }
      return {
        endpoint: "POST /apply-template, POST /tokenize",
        async count({ request, clientHeaders, post }) {
          const { headers } = connection.target(clientHeaders, false);
          const rendered = await post(`${root}/apply-template`, headers, connection.encodeRequest(request).value);
          const prompt = (rendered as { prompt?: unknown } | null)?.prompt;
          if (typeof prompt !== "string") return undefined;
          const answer = await post(`${root}/tokenize`, headers, {
            content: prompt,
            add_special: true,
            parse_special: true,
          });
          const tokens = (answer as { tokens?: unknown } | null)?.tokens;
          return Array.isArray(tokens) ? tokens.length : undefined;
        },
      };
    case "vllm":
      return {
        endpoint: "POST /tokenize",
        async count({ request, clientHeaders, post }) {
          const { headers } = connection.target(clientHeaders, false);
          const body = connection.encodeRequest(request).value as Record<string, unknown>;
          // vLLM refuses both at once; a prefill to continue gets no generation prompt.
          const tokenize: Record<string, unknown> = {
            model: request.model,
            add_generation_prompt: body.continue_final_message !== true,
          };
          for (const field of VLLM_TOKENIZE_FIELDS) if (body[field] !== undefined) tokenize[field] = body[field];
          const answer = await post(`${root}/tokenize`, headers, tokenize);
          return tokenCount((answer as { count?: unknown } | null)?.count);
        },
      };
    default: {
      const never: never = kind;
      throw new Error(`unknown token count endpoint ${String(never)}`);
    }
  }
}

/**
 * What vLLM's chat-form `/tokenize` takes of a chat request (`TokenizeChatRequest`): the messages and tools, and the
 * template settings a client may have given. Anything else (`max_tokens`, `stream`) is not its to read.
 */
const VLLM_TOKENIZE_FIELDS = [
  "messages",
  "tools",
  "chat_template",
  "chat_template_kwargs",
  "add_generation_prompt",
  "continue_final_message",
  "mm_processor_kwargs",
];

/** The server's root: the base URL without its `/v1`, where the servers keep their own endpoints. */
function serverRoot(baseUrl: string): string {
  return baseUrl.replace(/\/v1\/?$/, "");
}
