import type { LossyEntry } from "../core/index.js";
import type { RepairEntry } from "../repair/index.js";

/** One entry of `x-parley-lossy`: a conversion loss, or a change repair made (`code` starts with `repair:`). */
export interface LossyHeaderEntry {
  code: string;
  message: string;
  path?: string;
}

/** Header values past this size are cut (proxies commonly refuse headers over 8-16 KB). */
const MAX_HEADER_BYTES = 6_000;

export function lossyHeaderEntries(
  lossy: readonly LossyEntry<string>[],
  repair: readonly RepairEntry[],
): LossyHeaderEntry[] {
  const entries: LossyHeaderEntry[] = lossy.map((entry) =>
    entry.path === undefined
      ? { code: entry.code, message: entry.message }
      : { code: entry.code, message: entry.message, path: entry.path },
  );
  for (const entry of repair) {
    const path =
      entry.partIndex === undefined
        ? `messages[${entry.messageIndex}]`
        : `messages[${entry.messageIndex}].content[${entry.partIndex}]`;
    entries.push({ code: `repair:${entry.action}`, message: entry.reason, path });
  }
  return entries;
}

/**
 * What converting the upstream's answer reported, as header entries: paths are the answer's, under `response`
 * (`response.choices[0].message.refusal`), so that they cannot be read as paths in the client's request.
 */
export function responseLossyEntries(lossy: readonly LossyEntry<string>[]): LossyHeaderEntry[] {
  return lossy.map((entry) => ({
    code: entry.code,
    message: entry.message,
    path: entry.path === undefined || entry.path === "" ? "response" : `response.${entry.path}`,
  }));
}

/**
 * The `x-parley-lossy` value: compact JSON, non-ASCII escaped (header values must be ASCII), cut to whole
 * entries with a final `truncated` entry saying how many were left out. Undefined when there is nothing to say.
 */
export function formatLossyHeader(entries: readonly LossyHeaderEntry[]): string | undefined {
  if (entries.length === 0) return undefined;
  const encoded = entries.map((entry) => asciiJson(shorten(entry)));
  let out = "";
  for (let index = 0; index < encoded.length; index++) {
    const next = encoded[index]!;
    const rest = encoded.length - index;
    const marker = asciiJson({ code: "truncated", message: `${rest} more entries left out; see the trace` });
    if (out.length + next.length + marker.length + 3 > MAX_HEADER_BYTES) return `[${out},${marker}]`.replace("[,", "[");
    out = out === "" ? next : `${out},${next}`;
  }
  return `[${out}]`;
}

function shorten(entry: LossyHeaderEntry): LossyHeaderEntry {
  return entry.message.length > 300 ? { ...entry, message: `${entry.message.slice(0, 300)}…` } : entry;
}

function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
