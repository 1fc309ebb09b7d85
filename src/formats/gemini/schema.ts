/**
 * Gemini's `parameters` and `responseSchema` take an OpenAPI 3.0 subset (`type: "OBJECT"`, `nullable: true`); the
 * core holds JSON Schema. This reads the subset as the JSON Schema it stands for. Going out, Parley writes full JSON
 * Schema in `parametersJsonSchema` and `responseJsonSchema`, which Gemini takes as it is, so nothing is converted back.
 */
export function schemaToJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(schemaToJsonSchema);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  const source = schema as Record<string, unknown>;
  for (const [key, value] of Object.entries(source)) {
    switch (key) {
      case "type":
        out.type = typeof value === "string" ? value.toLowerCase() : value;
        break;
      case "nullable":
        break;
      case "properties":
        out.properties =
          value !== null && typeof value === "object"
            ? Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, schemaToJsonSchema(inner)]))
            : value;
        break;
      case "items":
      case "anyOf":
      case "oneOf":
      case "allOf":
        out[key] = schemaToJsonSchema(value);
        break;
      default:
        out[key] = value;
    }
  }
  if (source.nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  return out;
}
