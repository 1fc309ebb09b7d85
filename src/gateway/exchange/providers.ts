import type { IncomingHttpHeaders } from "node:http";
import { ConfigError } from "../config/load.js";
import type { GatewayConfig, ProviderConfig } from "../config/types.js";
import { forwardedHeaders } from "../http/forwarded.js";
import { type OpenAICompat, PRESETS, type ReasoningMode, resolveCompat } from "./codecs.js";

/** A configured provider, ready to call: its endpoint, its quirks, how to authenticate. */
export interface ProviderRuntime {
  config: ProviderConfig;
  /** The OpenAI-compatible quirks (preset from config or guessed from the base URL, plus overrides). */
  compat: OpenAICompat;
  /** How thinking in the history is sent: the provider's `reasoning` setting, else its preset's mode. */
  reasoning: ReasoningMode;
  /** The full URL requests are POSTed to. */
  endpoint: string;
  headers(
    clientHeaders: IncomingHttpHeaders,
    stream: boolean,
    query: string,
  ): { url: string; headers: Record<string, string> };
}

export function buildProviders(config: GatewayConfig): Record<string, ProviderRuntime> {
  const runtimes: Record<string, ProviderRuntime> = {};
  for (const provider of Object.values(config.providers)) {
    if (provider.preset !== undefined && !(provider.preset in PRESETS)) {
      throw new ConfigError(
        `providers.${provider.name}.preset`,
        `unknown preset '${provider.preset}' (known: ${Object.keys(PRESETS).join(", ")})`,
      );
    }
    const known = new Set([...Object.keys(PRESETS.generic ?? {}), "maxTokensCap", "textToolCallFormat"]);
    for (const key of Object.keys(provider.compat)) {
      if (!known.has(key)) throw new ConfigError(`providers.${provider.name}.compat.${key}`, "unknown setting");
    }
    let compat: OpenAICompat;
    try {
      compat = resolveCompat(provider.preset, provider.baseUrl, provider.compat as Partial<OpenAICompat>);
    } catch (error) {
      throw new ConfigError(`providers.${provider.name}.compat`, (error as Error).message);
    }
    runtimes[provider.name] =
      provider.type === "anthropic" ? anthropicRuntime(provider, compat) : openaiRuntime(provider, compat);
  }
  return runtimes;
}

function openaiRuntime(provider: ProviderConfig, compat: OpenAICompat): ProviderRuntime {
  const endpoint = `${provider.baseUrl}/chat/completions`;
  return {
    config: provider,
    compat,
    reasoning: provider.reasoning ?? compat.reasoningMode,
    endpoint,
    headers: (_clientHeaders, stream) => {
      const headers: Record<string, string> = {
        ...provider.headers,
        "content-type": "application/json",
        accept: stream ? "text/event-stream" : "application/json",
      };
      if (provider.apiKey !== undefined) headers.authorization = `Bearer ${provider.apiKey}`;
      return { url: endpoint, headers };
    },
  };
}

function anthropicRuntime(provider: ProviderConfig, compat: OpenAICompat): ProviderRuntime {
  const endpoint = provider.baseUrl.endsWith("/v1")
    ? `${provider.baseUrl}/messages`
    : `${provider.baseUrl}/v1/messages`;
  return {
    config: provider,
    compat,
    reasoning: provider.reasoning ?? compat.reasoningMode,
    endpoint,
    headers: (clientHeaders, stream, query) => {
      const headers: Record<string, string> = {
        ...provider.headers,
        "content-type": "application/json",
        accept: stream ? "text/event-stream" : "application/json",
        "anthropic-version": provider.anthropicVersion,
      };
      // Only what `forwarded.ts` lists comes from the client; its key never does (the provider's key is used).
      Object.assign(headers, forwardedHeaders(clientHeaders));
      if (provider.apiKey !== undefined) headers["x-api-key"] = provider.apiKey;
      return { url: query === "" ? endpoint : `${endpoint}?${query}`, headers };
    },
  };
}
