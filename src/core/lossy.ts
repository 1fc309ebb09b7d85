import type { WireFormat } from "./wire-format.js";

/**
 * Every code a conversion reports, each listed with its meaning in docs/repair-and-normalize.md ("Lossy codes"),
 * which a test holds to this list. Two are families: `<format>-fields-dropped` (`LOSSY_CODE_FAMILIES`).
 */
export const LOSSY_CODES = [
  "annotations-dropped",
  "cache_control-stripped",
  "candidates-dropped",
  "document-dropped",
  "empty-message-dropped",
  "extra-choices-dropped",
  "fields-dropped",
  "function-name-unknown",
  "gemini-part-misplaced",
  "image-dropped",
  "logprobs-dropped",
  "max-tokens-capped",
  "max_tokens-lowered",
  "media-dropped",
  "misplaced-tool-result-dropped",
  "opaque-block-as-text",
  "opaque-block-dropped",
  "part-dropped",
  "pause-turn-as-completed",
  "pause-turn-as-stop",
  "reasoning-details-dropped",
  "reasoning-effort-dropped",
  "reasoning-field-changed",
  "reasoning-interleaving-flattened",
  "reasoning-placeholder-added",
  "reasoning-refused-resent",
  "reasoning-sealed-dropped",
  "redacted-thinking-dropped",
  "refusal-as-text",
  "response-format-dropped",
  "sdk-fields-dropped",
  "server-tool-dropped",
  "stop-sequences-dropped",
  "system-message-as-user",
  "system-part-dropped",
  "thinking-config-dropped",
  "thinking-dropped",
  "thinking-signature-dropped",
  "thinking-to-text",
  "thought-signature-dropped",
  "thought-signature-skipped",
  "tool-arguments-not-json",
  "tool-arguments-repaired",
  "tool-choice-dropped",
  "tool-error-flag-dropped",
  "tool-fields-dropped",
  "tool-input-wrapped",
  "tool-messages-moved-first",
  "tool-result-image-moved",
  "tool-result-media-dropped",
  "unknown-role",
] as const;

/** The codes that name what they dropped: `anthropic-fields-dropped`, `field-dropped-top_k`. */
export const LOSSY_CODE_FAMILIES = ["<format>-fields-dropped", "field-dropped-<field>"] as const;

export type LossyCode = (typeof LOSSY_CODES)[number] | `${WireFormat}-fields-dropped` | `field-dropped-${string}`;

/**
 * What a conversion could not carry. Every conversion returns these beside its result; the gateway puts
 * them in `x-parley-lossy` and its trace, the CLI in its report. `Code` is `string` only for entries read back
 * from where they were kept (a trace written by an earlier release keeps the codes it was written with).
 */
export interface LossyEntry<Code extends string = LossyCode> {
  /** A stable, kebab-case identifier, e.g. `reasoning-interleaving-flattened`. */
  code: Code;
  /** What happened, for a person. */
  message: string;
  /** Where, e.g. `messages[3].content[1]`. */
  path?: string;
}

export interface Converted<T> {
  value: T;
  lossy: LossyEntry[];
}

/** Formats a path as the CLI and error messages show it: `messages[5].content[3]`. */
export function formatPath(path: ReadonlyArray<string | number>): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? segment : `.${segment}`;
  }
  return out;
}
