import {
  anthropicPromptCache,
  type CacheCounts,
  deepseekPromptCache,
  openaiChatPromptCache,
  openaiResponsesPromptCache,
  type PromptCacheServer,
  vllmPromptCache,
} from "./prefix-cache.js";
import { type AnswerShape, type ScriptedTurn, turnFrames } from "./scripted-turns.js";
import { type ScriptedUpstream, startScriptedUpstream, type UpstreamKind } from "./scripted-upstream.js";
import { strictServerFor } from "./strict-servers.js";

/**
 * Scripted upstreams that keep a prompt cache as the server they stand for does (`prefix-cache.ts`) and report it in
 * that server's usage fields. Opt-in: the other scripted upstreams keep their fixed usage numbers.
 */
export type CachingServerName = "vllm" | "deepseek" | "anthropic" | "openai-chat" | "openai-responses";

export interface CachingServer {
  /** As the tables of the benchmark name it. */
  label: string;
  api: Exclude<UpstreamKind, "gemini">;
  /** The preset of a provider in front of it (and the strict server it stands for). */
  preset?: string;
  /** The model the session asks for on it. */
  model: string;
  cache: () => PromptCacheServer;
  /** How its answers word reasoning: vLLM's `reasoning`, DeepSeek's `reasoning_content`, none from api.openai.com. */
  reasoningField?: AnswerShape["reasoningField"];
}

export const CACHING_SERVERS: Record<CachingServerName, CachingServer> = {
  vllm: {
    label: "vLLM-like Chat (16-token blocks)",
    api: "openai",
    preset: "vllm",
    model: "Qwen/Qwen3-Coder-30B-A3B-Instruct",
    cache: () => vllmPromptCache(),
    reasoningField: "reasoning",
  },
  deepseek: {
    label: "DeepSeek-like Chat (64-token units)",
    api: "openai",
    preset: "deepseek",
    model: "deepseek-chat",
    cache: () => deepseekPromptCache(),
    reasoningField: "reasoning_content",
  },
  anthropic: {
    label: "Anthropic (`cache_control`)",
    api: "anthropic",
    model: "claude-sonnet-4-5",
    cache: () => anthropicPromptCache(),
  },
  "openai-chat": {
    label: "OpenAI Chat (`prompt_cache_key`)",
    api: "openai",
    preset: "openai",
    model: "gpt-5.4-chat",
    cache: () => openaiChatPromptCache(),
    reasoningField: "none",
  },
  "openai-responses": {
    label: "OpenAI Responses (`prompt_cache_key`)",
    api: "openai-responses",
    model: "gpt-5.4",
    cache: () => openaiResponsesPromptCache(),
  },
};

export interface CachingUpstream extends ScriptedUpstream {
  cache: PromptCacheServer;
  /** What the cache did for each answered request, in order. */
  counts: CacheCounts[];
}

/** Output tokens of every scripted answer, as the Anthropic script's `message_delta` says. */
const OUTPUT_TOKENS = 20;

/** A scripted upstream of `name`'s kind with an empty cache, answering request n with `turnFor(n)`. */
export async function startCachingUpstream(
  name: CachingServerName,
  turnFor: (index: number) => ScriptedTurn,
): Promise<CachingUpstream> {
  const server = CACHING_SERVERS[name];
  const upstream = (await startScriptedUpstream(server.api)) as CachingUpstream;
  upstream.server = strictServerFor(server.api, server.preset);
  upstream.cache = server.cache();
  upstream.counts = [];
  upstream.fallback = (request) => {
    const body = request.body as Record<string, unknown>;
    if (body?.stream !== true)
      return { kind: "error", status: 400, body: { error: { message: "the caching upstream answers streams only" } } };
    const used = upstream.cache.use(body);
    if ("refusal" in used) return { kind: "error", ...used.refusal };
    const index = upstream.counts.length;
    upstream.counts.push(used);
    const shape: AnswerShape = { usage: upstream.cache.usage(used, OUTPUT_TOKENS) };
    if (server.reasoningField !== undefined) shape.reasoningField = server.reasoningField;
    return { kind: "sse", frames: turnFrames(server.api, turnFor(index), index, shape) };
  };
  return upstream;
}
