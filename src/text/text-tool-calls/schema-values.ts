import type { ToolDefinition } from "../../core/conversation.js";
import { isObject } from "../../core/json.js";
import { parseLenientJson } from "./json-text.js";

/**
 * XML-ish formats (Qwen3-Coder, GLM, MiniMax) write every argument as bare text; the tool's JSON
 * schema says what it was meant to be. A value that does not fit its declared type stays a string:
 * the text is never lost to a failed conversion.
 */

export type ToolLookup = (name: string) => ToolDefinition | undefined;

export function createToolLookup(tools: readonly ToolDefinition[] | undefined): ToolLookup {
  const byName = new Map<string, ToolDefinition>();
  for (const tool of tools ?? []) if (!byName.has(tool.name)) byName.set(tool.name, tool);
  return (name) => byName.get(name);
}

/** The schema of one parameter of a tool, or `undefined` when the tool or the parameter is unknown. */
export function parameterSchema(tool: ToolDefinition | undefined, parameter: string): unknown {
  const schema = tool?.inputSchema;
  if (!isObject(schema) || !isObject(schema.properties)) return undefined;
  return Object.hasOwn(schema.properties, parameter) ? schema.properties[parameter] : undefined;
}

/** Converts the bare text of one argument by its schema. */
export function typeParameterValue(raw: string, schema: unknown): unknown {
  const text = stripOneNewline(raw);
  const types = schemaTypes(schema);
  const trimmed = text.trim();
  if (types.size === 0) {
    // Unknown parameter or untyped schema: JSON when the text is JSON, else the string.
    try {
      return JSON.parse(trimmed);
    } catch {
      return text;
    }
  }
  if (types.has("null") && trimmed === "null") return null;
  // A string type accepts any text; converting would change it (a zip code "01234", a version "1.10").
  if (types.has("string")) return text;
  if (types.has("integer") || types.has("number")) {
    const number = trimmed === "" ? Number.NaN : Number(trimmed);
    if (Number.isFinite(number) && (types.has("number") || Number.isInteger(number))) return number;
  }
  if (types.has("boolean")) {
    const lower = trimmed.toLowerCase();
    if (lower === "true" || lower === "false") return lower === "true";
  }
  if (types.has("object") || types.has("array")) {
    const parsed = parseLenientJson(trimmed);
    if (parsed !== undefined) {
      const value = parsed.value;
      if ((types.has("object") && isObject(value)) || (types.has("array") && Array.isArray(value))) return value;
    }
  }
  return text;
}

/** The JSON types a schema allows, following `type` (string or list), `anyOf`/`oneOf`, `enum` and `const`. */
export function schemaTypes(schema: unknown, into = new Set<string>(), depth = 0): Set<string> {
  if (!isObject(schema) || depth > 8) return into;
  const type = schema.type;
  if (typeof type === "string") into.add(type);
  else if (Array.isArray(type)) for (const entry of type) if (typeof entry === "string") into.add(entry);
  for (const key of ["anyOf", "oneOf", "allOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options)) for (const option of options) schemaTypes(option, into, depth + 1);
  }
  if (into.size === 0) {
    const values = Array.isArray(schema.enum) ? schema.enum : "const" in schema ? [schema.const] : [];
    for (const value of values) into.add(jsonType(value));
    if (isObject(schema.properties)) into.add("object");
    if (schema.items !== undefined) into.add("array");
  }
  return into;
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** Templates put each value on its own line (`<parameter=k>\nvalue\n</parameter>`): drop those two newlines. */
export function stripOneNewline(text: string): string {
  let start = 0;
  let end = text.length;
  if (text.startsWith("\r\n")) start = 2;
  else if (text.startsWith("\n")) start = 1;
  if (end - start >= 2 && text.endsWith("\r\n")) end -= 2;
  else if (end > start && text.endsWith("\n")) end -= 1;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}
