import { formatPath, InvalidRequestError } from "../../core/index.js";
import type { GeminiContent, GeminiRequest } from "./wire-types.js";

type Path = Array<string | number>;

/** Roles of a content: `function` is the older API's word for a user turn of function responses. */
const ROLES = new Set(["user", "model", "function"]);

/**
 * Loose validation of a `generateContent` body: the shapes the converters rely on, each failure a 400 naming its
 * path (`contents[2].parts[0].functionCall.name`). Fields Parley does not know are accepted (and carried where the
 * target has them, reported where not).
 */
export function parseGeminiRequest(body: unknown): GeminiRequest {
  if (!isObject(body)) fail("the request body must be a JSON object", []);
  checkContents(body.contents, ["contents"]);
  if (body.systemInstruction !== undefined && body.systemInstruction !== null) {
    if (typeof body.systemInstruction !== "string") checkContent(body.systemInstruction, ["systemInstruction"], true);
  }
  if (body.tools !== undefined && body.tools !== null) checkTools(body.tools);
  if (body.toolConfig !== undefined && body.toolConfig !== null && !isObject(body.toolConfig))
    fail("must be an object", ["toolConfig"]);
  if (body.generationConfig !== undefined && body.generationConfig !== null) checkGeneration(body.generationConfig);
  return body as GeminiRequest;
}

/** A `countTokens` body: `contents`, or a whole request under `generateContentRequest`. */
export function parseCountTokensRequest(body: unknown): GeminiRequest {
  if (!isObject(body)) fail("the request body must be a JSON object", []);
  if (body.generateContentRequest !== undefined) {
    try {
      return parseGeminiRequest(body.generateContentRequest);
    } catch (error) {
      if (error instanceof InvalidRequestError)
        throw new InvalidRequestError(
          error.message.slice((error.path?.length ?? -2) + 2),
          formatPath(["generateContentRequest", ...(error.path ? [error.path] : [])]),
        );
      throw error;
    }
  }
  return parseGeminiRequest(body);
}

/** An array of contents: a request's `contents`, or a history. */
export function checkContents(contents: unknown, path: Path): asserts contents is GeminiContent[] {
  if (!Array.isArray(contents)) fail("must be an array of contents", path);
  contents.forEach((content, index) => {
    checkContent(content, [...path, index], false);
  });
}

function checkContent(content: unknown, path: Path, system: boolean): void {
  if (!isObject(content)) fail("must be an object", path);
  const role = content.role;
  if (!system && role !== undefined && role !== null && (typeof role !== "string" || !ROLES.has(role)))
    fail(`Please use a valid role: user, model (got ${JSON.stringify(role)})`, [...path, "role"]);
  if (!Array.isArray(content.parts)) fail("must be an array of parts", [...path, "parts"]);
  content.parts.forEach((part, index) => {
    checkPart(part, [...path, "parts", index]);
  });
}

function checkPart(part: unknown, path: Path): void {
  if (!isObject(part)) fail("must be an object", path);
  if (part.text !== undefined && typeof part.text !== "string") fail("must be a string", [...path, "text"]);
  if (part.thought !== undefined && typeof part.thought !== "boolean") fail("must be a boolean", [...path, "thought"]);
  if (part.thoughtSignature !== undefined && typeof part.thoughtSignature !== "string")
    fail("must be a string", [...path, "thoughtSignature"]);
  const call = part.functionCall;
  if (call !== undefined) {
    if (!isObject(call)) fail("must be an object", [...path, "functionCall"]);
    if (typeof call.name !== "string" || call.name === "")
      fail("must be a non-empty string", [...path, "functionCall", "name"]);
    if (call.args !== undefined && call.args !== null && !isObject(call.args))
      fail("must be an object", [...path, "functionCall", "args"]);
    if (call.id !== undefined && typeof call.id !== "string") fail("must be a string", [...path, "functionCall", "id"]);
  }
  const response = part.functionResponse;
  if (response !== undefined) {
    if (!isObject(response)) fail("must be an object", [...path, "functionResponse"]);
    if (typeof response.name !== "string" || response.name === "")
      fail("must be a non-empty string", [...path, "functionResponse", "name"]);
    if (response.response !== undefined && response.response !== null && !isObject(response.response))
      fail("must be an object", [...path, "functionResponse", "response"]);
    if (response.id !== undefined && typeof response.id !== "string")
      fail("must be a string", [...path, "functionResponse", "id"]);
  }
  const inline = part.inlineData;
  if (inline !== undefined) {
    if (!isObject(inline) || typeof inline.mimeType !== "string" || typeof inline.data !== "string")
      fail("must be an object with string mimeType and data", [...path, "inlineData"]);
  }
  const file = part.fileData;
  if (file !== undefined && (!isObject(file) || typeof file.fileUri !== "string"))
    fail("must be an object with a string fileUri", [...path, "fileData"]);
}

function checkTools(tools: unknown): void {
  if (!Array.isArray(tools)) fail("must be an array", ["tools"]);
  tools.forEach((tool, index) => {
    if (!isObject(tool)) fail("must be an object", ["tools", index]);
    const declarations = tool.functionDeclarations;
    if (declarations === undefined || declarations === null) return;
    if (!Array.isArray(declarations)) fail("must be an array", ["tools", index, "functionDeclarations"]);
    declarations.forEach((declaration, position) => {
      const path = ["tools", index, "functionDeclarations", position];
      if (!isObject(declaration)) fail("must be an object", path);
      if (typeof declaration.name !== "string" || declaration.name === "")
        fail("must be a non-empty string", [...path, "name"]);
      if (declaration.parameters !== undefined && declaration.parameters !== null && !isObject(declaration.parameters))
        fail("must be an object", [...path, "parameters"]);
    });
  });
}

function checkGeneration(config: unknown): void {
  if (!isObject(config)) fail("must be an object", ["generationConfig"]);
  for (const key of ["maxOutputTokens", "temperature", "topP", "topK"]) {
    const value = config[key];
    if (value !== undefined && value !== null && (typeof value !== "number" || !Number.isFinite(value)))
      fail("must be a number", ["generationConfig", key]);
  }
  const stops = config.stopSequences;
  if (
    stops !== undefined &&
    stops !== null &&
    (!Array.isArray(stops) || stops.some((stop) => typeof stop !== "string"))
  )
    fail("must be an array of strings", ["generationConfig", "stopSequences"]);
  const thinking = config.thinkingConfig;
  if (thinking !== undefined && thinking !== null && !isObject(thinking))
    fail("must be an object", ["generationConfig", "thinkingConfig"]);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function fail(message: string, path: Path): never {
  throw new InvalidRequestError(message, path.length === 0 ? undefined : formatPath(path));
}
