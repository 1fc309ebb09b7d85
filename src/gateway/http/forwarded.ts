import type { IncomingHttpHeaders } from "node:http";

/**
 * What of the client's own request reaches an Anthropic upstream, on purpose, and nothing else: the upstream's
 * request is built from the provider's settings, and only these are copied from the client's. Never its
 * credentials (`x-api-key`, `authorization`, a key in the query string), cookies, hop-by-hop headers or anything
 * a proxy added.
 */
export const FORWARDED_QUERY_PARAMETERS: readonly string[] = [
  // Anthropic's SDK marks beta calls with `?beta=true`.
  "beta",
];

export const FORWARDED_HEADERS: readonly string[] = [
  // The client's betas are its own business with Anthropic.
  "anthropic-beta",
];

/** The forwarded part of the client's query string ("" when none). */
export function forwardedQuery(query: URLSearchParams): string {
  if (query.size === 0) return "";
  const kept = new URLSearchParams();
  for (const name of FORWARDED_QUERY_PARAMETERS) for (const value of query.getAll(name)) kept.append(name, value);
  return kept.toString();
}

/** The forwarded headers the client sent, repeated values joined as HTTP joins them. */
export function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = headers[name];
    if (value !== undefined) kept[name] = Array.isArray(value) ? value.join(",") : value;
  }
  return kept;
}
