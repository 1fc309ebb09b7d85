import { randomUUID } from "node:crypto";

/**
 * `prefix` and 32 hex digits, the first 12 the time in milliseconds, the rest random. Ids that grow with time
 * keep each new entry of a store's index on that index's newest page: random ids dirtied a page of their own on
 * every trace written (the request id index alone was most of a trace's commit).
 */
export function timeOrderedId(prefix: string): string {
  return `${prefix}${Date.now().toString(16).padStart(12, "0")}${randomUUID().replaceAll("-", "").slice(12)}`;
}
