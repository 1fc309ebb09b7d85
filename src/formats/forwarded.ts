import type {
  ClientForwarding,
  ClientHeaders,
  ModelDiscovery,
  ProviderSettings,
  UpstreamConnection,
} from "./adapter.js";

/** The forwarded part of the client's query string ("" when none, or when the client speaks another API). */
export function forwardedQuery(query: URLSearchParams | undefined, forwarding: ClientForwarding): string {
  if (query === undefined || query.size === 0) return "";
  const kept = new URLSearchParams();
  for (const name of forwarding.queryParameters) for (const value of query.getAll(name)) kept.append(name, value);
  return kept.toString();
}

/** The forwarded headers the client sent, repeated values joined as HTTP joins them. */
export function forwardedHeaders(headers: ClientHeaders, forwarding: ClientForwarding): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of forwarding.headers) {
    const value = headers[name];
    if (value !== undefined) kept[name] = Array.isArray(value) ? value.join(",") : value;
  }
  return kept;
}

/**
 * The `target` of a provider that takes its key as a Bearer token (the OpenAI family): its own headers, the
 * client's forwarded ones, and the forwarded query appended to `endpoint`.
 */
export function bearerTarget(
  provider: Pick<ProviderSettings, "headers" | "apiKey">,
  endpoint: string,
  forwarding: ClientForwarding,
): UpstreamConnection["target"] {
  return (clientHeaders, stream, clientQuery) => {
    const headers: Record<string, string> = {
      ...provider.headers,
      "content-type": "application/json",
      accept: stream ? "text/event-stream" : "application/json",
      ...forwardedHeaders(clientHeaders, forwarding),
    };
    if (provider.apiKey !== undefined) headers.authorization = `Bearer ${provider.apiKey}`;
    const query = forwardedQuery(clientQuery, forwarding);
    return { url: query === "" ? endpoint : `${endpoint}?${query}`, headers };
  };
}

/** The model list of a provider that takes its key as a Bearer token: `GET <baseUrl>/models`, OpenAI's list. */
export function bearerDiscovery(provider: Pick<ProviderSettings, "baseUrl" | "headers" | "apiKey">): ModelDiscovery {
  const headers: Record<string, string> = { ...provider.headers };
  if (provider.apiKey !== undefined) headers.authorization = `Bearer ${provider.apiKey}`;
  return { url: `${provider.baseUrl}/models`, headers };
}
