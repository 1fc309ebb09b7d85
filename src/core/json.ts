/** A JSON object: not null, not an array. What every reader of untyped input asks first. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
