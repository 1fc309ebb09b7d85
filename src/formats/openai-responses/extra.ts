import { type Extra, type Fields, FORM_PREFIX, fieldsOf, withFields } from "../../core/index.js";

/**
 * The one place this adapter keeps what the core model does not map: under this format's key in a core object's
 * `extra` (see `core/extra.ts`), so that a Responses target reads it back and another reaches it only by its own
 * rule. Everything unmapped goes through these two functions.
 *
 * Two kinds of things are kept. The API's own fields (a client's settings, a part's annotations, an image's
 * detail) are fields like any format's: another API gets one where it has the same field, else it is reported.
 * How an item was written (its type, id, status and phase, the message item a text starts, the reasoning item a
 * thinking part came in, the namespace a function sat in, a custom tool's
 * grammar, the summary setting, an output text's empty annotations) is this format's record of its own wire, which no other API has a field for and
 * loses nothing by leaving out: it is kept under the form prefix (`$type`), which `fieldsFor` passes over.
 */
const FORMAT = "responses";

/** Keys that record how an item was written, not fields another API could take. */
const FORM_KEYS: ReadonlySet<string> = new Set([
  "type",
  "id",
  "status",
  "phase",
  "role",
  "item",
  "namespace",
  "namespaceTool",
  "name",
  "format",
  "summary",
  "compaction",
]);

/** Lists an output text always has: empty, they say nothing another API could lose. */
const EMPTY_AS_FORM: ReadonlySet<string> = new Set(["annotations", "logprobs"]);

function isForm(key: string, value: unknown): boolean {
  return FORM_KEYS.has(key) || (EMPTY_AS_FORM.has(key) && Array.isArray(value) && value.length === 0);
}

/**
 * Adds `fields` (those with a value) to `target.extra`, under this format's key. An opaque part has no `extra`: it is
 * the block itself, already whole.
 */
export function keep<T extends object>(target: T, fields: Record<string, unknown>): T {
  if ((target as { type?: unknown }).type === "opaque") return target;
  let own: Fields | undefined;
  for (const key in fields) {
    const value = fields[key];
    if (value === undefined) continue;
    own ??= {};
    own[isForm(key, value) ? FORM_PREFIX + key : key] = value;
  }
  if (own === undefined) return target;
  const existing = fieldsOf((target as { extra?: Extra }).extra, FORMAT);
  return withFields(target, FORMAT, existing === undefined ? own : { ...existing, ...own });
}

/** What this format kept in `source.extra` (form records under their own names), or an empty object. */
export function kept(source: object | undefined): Fields {
  const stored = fieldsOf((source as { extra?: Extra } | undefined)?.extra, FORMAT);
  if (stored === undefined) return {};
  let named: Fields | undefined;
  for (const key in stored) {
    if (!key.startsWith(FORM_PREFIX)) continue;
    named ??= {};
    named[key.slice(FORM_PREFIX.length)] = stored[key];
  }
  if (named === undefined) return stored;
  for (const key in stored) if (!key.startsWith(FORM_PREFIX)) named[key] = stored[key];
  return named;
}
