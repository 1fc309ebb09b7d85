import type { ClientForwarding, ClientHeaders } from "./adapter.js";

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
