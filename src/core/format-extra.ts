import type { Extra, WireFormat } from "./parts.js";
import { WIRE_FORMATS } from "./parts.js";

/**
 * A format may keep the fields it does not map under its own id in `extra` (`extra.responses`): a target of the
 * same format reads them back for an exact round trip, any other target leaves them out. Request-level fields
 * kept this way are a client's settings, so a target that leaves them out says so (`foreignFieldNames`); lower
 * down (item ids, statuses) they are bookkeeping of the source's wire and go quietly.
 */
const FORMAT_KEYS: ReadonlySet<string> = new Set(WIRE_FORMATS);

export function isFormatKey(key: string): boolean {
  return FORMAT_KEYS.has(key);
}

/** The fields `format` kept for itself in `extra`, or undefined. */
export function formatFields(extra: Extra | undefined, format: WireFormat): Extra | undefined {
  const own = extra?.[format];
  return own !== null && typeof own === "object" && !Array.isArray(own) ? (own as Extra) : undefined;
}

/** `extra` without any format's own fields; the same object when it holds none. */
export function withoutFormatFields(extra: Extra | undefined): Extra | undefined {
  if (extra === undefined) return undefined;
  let found = false;
  for (const key in extra) {
    if (FORMAT_KEYS.has(key)) {
      found = true;
      break;
    }
  }
  if (!found) return extra;
  const rest: Extra = {};
  for (const key in extra) if (!FORMAT_KEYS.has(key)) rest[key] = extra[key];
  return rest;
}

/**
 * What other formats kept for themselves in a request's `extra`, as `format.field` names (a list of typed objects
 * names its types: `responses.tools (web_search)`), for the report of a `target` that leaves them out.
 */
export function foreignFieldNames(extra: Extra | undefined, target: WireFormat): string[] {
  const names: string[] = [];
  for (const format of WIRE_FORMATS) {
    if (format === target) continue;
    const fields = formatFields(extra, format);
    if (fields === undefined) continue;
    for (const [key, value] of Object.entries(fields)) {
      if (value === null || value === undefined) continue;
      const types = Array.isArray(value)
        ? value.flatMap((item) => {
            const type = (item as { type?: unknown } | null)?.type;
            return typeof type === "string" ? [type] : [];
          })
        : [];
      names.push(types.length > 0 ? `${format}.${key} (${types.join(", ")})` : `${format}.${key}`);
    }
  }
  return names;
}
