import type { WireFormat } from "./wire-format.js";

/** Fields of one API that a codec did not map, as they came. */
export type Fields = Record<string, unknown>;

/**
 * Fields the codecs did not map, keyed by the format they came from: `{anthropic: {cache_control: ...}}`. A
 * format's encoder writes its own key back as it came; another format's fields reach it only where it has the
 * same field (or a provider's preset lets them through), and are reported otherwise. So no encoder needs to know
 * the other APIs' field names to keep them out.
 */
export type Extra = { [Format in WireFormat]?: Fields };

/** Whether a field of `from` may go to the target as it is: the target has the same field, with that value. */
export type SharesField = (key: string, value: unknown, from: WireFormat) => boolean;

export interface FieldsFor {
  /** The target's own fields and the shared ones, in that order; undefined when there are none. */
  fields: Fields | undefined;
  /** Every other field (null ones carry nothing and are left out silently). */
  dropped: DroppedField[];
}

export interface DroppedField {
  from: WireFormat;
  key: string;
  value: unknown;
}

/**
 * Starts a key that is no field of its format's API but the codec's record of how its wire wrote what the core holds
 * (a Responses item's type, id and status): its own encoder reads it back, no other format gets it, and leaving it
 * out loses nothing, so it is not reported either.
 */
export const FORM_PREFIX = "$";

/** `format`'s fields in `extra`, or undefined. */
export function fieldsOf(extra: Extra | undefined, format: WireFormat): Fields | undefined {
  return extra?.[format];
}

/** Records `fields` as `format`'s on `value` (nothing when there are none); returns `value`. */
export function withFields<T extends object>(value: T, format: WireFormat, fields: Fields | undefined): T {
  if (fields === undefined || isEmpty(fields)) return value;
  const target = value as { extra?: Extra };
  target.extra = { ...target.extra, [format]: fields };
  return value;
}

function isEmpty(fields: Fields): boolean {
  for (const _key in fields) return false;
  return true;
}

/**
 * What of `extra` goes to a `target` API: its own fields as they came, and another format's only where `shares`
 * says the target has the same field. Cheap when there is nothing foreign: the target's own object comes back.
 */
export function fieldsFor(extra: Extra | undefined, target: WireFormat, shares?: SharesField): FieldsFor {
  const own = extra?.[target];
  let fields = own;
  const dropped: DroppedField[] = [];
  if (extra === undefined) return { fields, dropped };
  for (const from in extra) {
    if (from === target) continue;
    const foreign = extra[from as WireFormat]!;
    for (const key in foreign) {
      if (key.startsWith(FORM_PREFIX)) continue;
      const value = foreign[key];
      if (shares?.(key, value, from as WireFormat)) {
        if (fields === own) fields = { ...own };
        (fields as Fields)[key] = value;
      } else if (value !== null) dropped.push({ from: from as WireFormat, key, value });
    }
  }
  return { fields, dropped };
}

/** Two extras as one, `first`'s fields winning within each format (a merge of messages keeps the first's). */
export function mergeExtra(first: Extra | undefined, second: Extra | undefined): Extra | undefined {
  if (second === undefined) return first;
  if (first === undefined) return second;
  const merged: Extra = { ...second };
  for (const format in first) {
    const key = format as WireFormat;
    merged[key] = { ...second[key], ...first[key] };
  }
  return merged;
}
