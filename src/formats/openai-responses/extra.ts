import { type Extra, formatFields } from "../../core/index.js";

/**
 * The one place this adapter keeps the fields the core model does not map: under the format's own key in a core
 * object's `extra`, so that a Responses target reads them back and any other target leaves them out (see
 * `core/format-extra.ts`). Everything unmapped goes through these two functions.
 */
const KEY = "responses";

/**
 * Adds `fields` (those with a value) to `target.extra`, under this format's key. An opaque part has no `extra`: it is
 * the block itself, already whole.
 */
export function keep<T extends object>(target: T, fields: Record<string, unknown>): T {
  if ((target as { type?: unknown }).type === "opaque") return target;
  const holder = target as { extra?: Extra };
  let own: Extra | undefined;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    own ??= {};
    own[key] = value;
  }
  if (own === undefined) return target;
  const existing = formatFields(holder.extra, KEY);
  holder.extra = { ...holder.extra, [KEY]: existing === undefined ? own : { ...existing, ...own } };
  return target;
}

/** What this format kept in `source.extra`, or an empty object. */
export function kept(source: object | undefined): Extra {
  return formatFields((source as { extra?: Extra } | undefined)?.extra, KEY) ?? {};
}
