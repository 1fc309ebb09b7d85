import type { IncomingHttpHeaders } from "node:http";
import type { UpstreamConnection } from "../../formats/adapter.js";
import { findUpstreamType } from "../../formats/registry.js";
import { ConfigError } from "../config/load.js";
import type { GatewayConfig, ProviderConfig } from "../config/types.js";
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
  /** The provider as its API's adapter connected it. */
  connection: UpstreamConnection;
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
    const runtime =
      provider.type === "anthropic" ? anthropicRuntime(provider, compat) : openaiRuntime(provider, compat);
    runtimes[provider.name] = { ...runtime, connection: findUpstreamType(provider.type)!.upstream.connect(provider) };
  }
  return runtimes;
}

function openaiRuntime(provider: ProviderConfig, compat: OpenAICompat): Omit<ProviderRuntime, "connection"> {
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

function anthropicRuntime(provider: ProviderConfig, compat: OpenAICompat): Omit<ProviderRuntime, "connection"> {
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
      // The client's betas are its own business with Anthropic; its key is not (the provider's key is used).
      const beta = clientHeaders["anthropic-beta"];
      if (beta !== undefined) headers["anthropic-beta"] = Array.isArray(beta) ? beta.join(",") : beta;
      if (provider.apiKey !== undefined) headers["x-api-key"] = provider.apiKey;
      return { url: query === "" ? endpoint : `${endpoint}?${query}`, headers };
    },
  };
}
