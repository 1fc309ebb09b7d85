import { InvalidRequestError } from "../../core/index.js";
import { ownerOf } from "../owner.js";
import type { ListConversationsOptions, MetadataValue } from "./conversation-store.js";

/**
 * What listing conversations takes, checked once for every backend: the owner it acts for, the metadata filter as
 * key and value pairs (each value a JSON scalar, compared with its type: `1` matches `1`, never `"1"` or `true`),
 * and the limit.
 */
export interface ListQuery {
  owner: string;
  filters: Array<[string, MetadataValue]>;
  limit: number;
}

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

export function listQuery(options: ListConversationsOptions | undefined): ListQuery {
  const limit = options?.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)
    throw new InvalidRequestError(`must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${String(limit)}`, "limit");
  const metadata = options?.metadata ?? {};
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata))
    throw new InvalidRequestError("must be an object of metadata values to match", "metadata");
  const filters = Object.entries(metadata).map(([key, value]): [string, MetadataValue] => {
    if (value !== null && typeof value !== "string" && typeof value !== "boolean" && !Number.isFinite(value))
      throw new InvalidRequestError("must be a string, a number, a boolean or null", `metadata.${key}`);
    return [key, value as MetadataValue];
  });
  return { owner: ownerOf(options), filters, limit };
}

/** Whether stored metadata holds every filter's value under its key (the memory store's filter). */
export function metadataMatches(metadata: Record<string, unknown>, filters: ListQuery["filters"]): boolean {
  return filters.every(([key, value]) => Object.hasOwn(metadata, key) && metadata[key] === value);
}

/** The metadata a conversation was created with, checked: it is stored as JSON and given back as an object. */
export function checkMetadata(metadata: unknown): Record<string, unknown> {
  if (metadata === undefined) return {};
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata))
    throw new InvalidRequestError("must be an object", "metadata");
  return metadata as Record<string, unknown>;
}
