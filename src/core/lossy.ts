/**
 * What a conversion could not carry. Every conversion returns these beside its result; the gateway puts
 * them in `x-parley-lossy` and its trace, the CLI in its report.
 */
export interface LossyEntry {
  /** A stable, kebab-case identifier, e.g. `reasoning-interleaving-flattened`. */
  code: string;
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
