import { formatPath, InvalidRequestError } from "../../core/index.js";
import type { ResponsesRequest } from "./wire-types.js";

type Path = Array<string | number>;

const ROLES = new Set(["user", "assistant", "system", "developer"]);

/**
 * Loose validation of a `POST /v1/responses` body: the shapes the converters rely on, each failure a 400 naming
 * its path (`input[3].content[0].text`). Unknown fields and item types are accepted; what Parley cannot do at all
 * (a background response, a server-side conversation object, a stored prompt) is refused by name.
 */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  if (!isObject(body)) fail("the request body must be a JSON object", []);
  if (typeof body.model !== "string" || body.model === "") fail("must be a non-empty string", ["model"]);
  const input = body.input;
  if (input !== undefined && typeof input !== "string") {
    if (!Array.isArray(input)) fail("must be a string or an array of input items", ["input"]);
    input.forEach((item, index) => {
      checkItem(item, ["input", index]);
    });
  }
  if (body.instructions !== undefined && body.instructions !== null && typeof body.instructions !== "string")
    fail("must be a string", ["instructions"]);
  if (body.tools !== undefined) checkTools(body.tools);
  if (body.tool_choice !== undefined) checkToolChoice(body.tool_choice);
  for (const key of ["temperature", "top_p", "max_output_tokens"]) {
    const value = body[key];
    if (value !== undefined && value !== null && (typeof value !== "number" || !Number.isFinite(value)))
      fail("must be a number", [key]);
  }
  for (const key of ["stream", "store", "parallel_tool_calls"]) {
    if (body[key] !== undefined && body[key] !== null && typeof body[key] !== "boolean")
      fail("must be a boolean", [key]);
  }
  const previous = body.previous_response_id;
  if (previous !== undefined && previous !== null && (typeof previous !== "string" || previous === ""))
    fail("must be a non-empty string", ["previous_response_id"]);
  if (body.include !== undefined && body.include !== null) {
    if (!Array.isArray(body.include) || body.include.some((item) => typeof item !== "string"))
      fail("must be an array of strings", ["include"]);
  }
  if (body.reasoning !== undefined && body.reasoning !== null && !isObject(body.reasoning))
    fail("must be an object", ["reasoning"]);
  if (body.text !== undefined && body.text !== null) checkText(body.text);
  if (body.background === true)
    fail("background responses are not supported by this gateway; send the request without it", ["background"]);
  if (body.conversation !== undefined && body.conversation !== null)
    fail("conversation objects are not supported by this gateway; use previous_response_id", ["conversation"]);
  if (body.prompt !== undefined && body.prompt !== null)
    fail("stored prompts are not supported by this gateway; send the instructions themselves", ["prompt"]);
  return body as ResponsesRequest;
}

function checkItem(item: unknown, path: Path): void {
  if (!isObject(item)) fail("must be an object", path);
  const type = item.type;
  if (type !== undefined && typeof type !== "string") fail("must be a string", [...path, "type"]);
  if (type === undefined || type === "message") {
    checkMessage(item, path);
    return;
  }
  switch (type) {
    case "function_call":
      requireString(item, "call_id", path);
      requireString(item, "name", path);
      if (typeof item.arguments !== "string") fail("must be a string (JSON text)", [...path, "arguments"]);
      return;
    case "custom_tool_call":
      requireString(item, "call_id", path);
      requireString(item, "name", path);
      if (typeof item.input !== "string") fail("must be a string", [...path, "input"]);
      return;
    case "function_call_output":
    case "custom_tool_call_output": {
      requireString(item, "call_id", path);
      const output = item.output;
      if (typeof output !== "string") {
        if (!Array.isArray(output)) fail("must be a string or an array of content parts", [...path, "output"]);
        output.forEach((part, index) => {
          checkPart(part, [...path, "output", index]);
        });
      }
      return;
    }
    case "reasoning": {
      if (item.summary !== undefined && item.summary !== null) {
        if (!Array.isArray(item.summary)) fail("must be an array of summary parts", [...path, "summary"]);
        item.summary.forEach((part, index) => {
          checkPart(part, [...path, "summary", index]);
        });
      }
      if (item.content !== undefined && item.content !== null) {
        if (!Array.isArray(item.content)) fail("must be an array of content parts", [...path, "content"]);
        item.content.forEach((part, index) => {
          checkPart(part, [...path, "content", index]);
        });
      }
      const encrypted = item.encrypted_content;
      if (encrypted !== undefined && encrypted !== null && typeof encrypted !== "string")
        fail("must be a string", [...path, "encrypted_content"]);
      return;
    }
    default:
      // Hosted tools' items (web_search_call, mcp_call...) are carried as they are.
      return;
  }
}

function checkMessage(item: Record<string, unknown>, path: Path): void {
  const role = item.role;
  if (typeof role !== "string" || !ROLES.has(role)) {
    fail(`unknown role ${JSON.stringify(role)} (expected user, assistant, system or developer)`, [...path, "role"]);
  }
  const content = item.content;
  if (typeof content === "string") return;
  if (!Array.isArray(content)) fail("must be a string or an array of content parts", [...path, "content"]);
  content.forEach((part, index) => {
    checkPart(part, [...path, "content", index]);
  });
}

function checkPart(part: unknown, path: Path): void {
  if (!isObject(part) || typeof part.type !== "string") fail("must be an object with a string type", path);
  switch (part.type) {
    case "input_text":
    case "output_text":
    case "summary_text":
    case "reasoning_text":
      if (typeof part.text !== "string") fail("must be a string", [...path, "text"]);
      return;
    case "refusal":
      if (typeof part.refusal !== "string") fail("must be a string", [...path, "refusal"]);
      return;
    case "input_image":
      if (typeof part.image_url !== "string" && typeof part.file_id !== "string")
        fail("an input_image needs an image_url or a file_id", path);
      return;
    default:
      return;
  }
}

function checkTools(tools: unknown): void {
  if (!Array.isArray(tools)) fail("must be an array", ["tools"]);
  tools.forEach((tool, index) => {
    checkTool(tool, ["tools", index]);
  });
}

function checkTool(tool: unknown, path: Path): void {
  if (!isObject(tool) || typeof tool.type !== "string") fail("must be an object with a string type", path);
  switch (tool.type) {
    case "function":
      requireString(tool, "name", path);
      if (tool.parameters !== undefined && tool.parameters !== null && !isObject(tool.parameters))
        fail("must be a JSON Schema object", [...path, "parameters"]);
      return;
    case "custom":
      requireString(tool, "name", path);
      return;
    case "namespace":
      requireString(tool, "name", path);
      if (!Array.isArray(tool.tools)) fail("must be an array of tools", [...path, "tools"]);
      tool.tools.forEach((inner, index) => {
        if (!isObject(inner) || inner.type !== "function") fail('must be a "function" tool', [...path, "tools", index]);
        checkTool(inner, [...path, "tools", index]);
      });
      return;
    default:
      return;
  }
}

function checkToolChoice(choice: unknown): void {
  if (choice === "none" || choice === "auto" || choice === "required") return;
  if (isObject(choice) && typeof choice.type === "string") {
    if ((choice.type === "function" || choice.type === "custom") && typeof choice.name !== "string")
      fail("must name the tool", ["tool_choice", "name"]);
    return;
  }
  fail('must be "none", "auto", "required" or an object with a type', ["tool_choice"]);
}

function checkText(text: unknown): void {
  if (!isObject(text)) fail("must be an object", ["text"]);
  const format = text.format;
  if (format === undefined || format === null) return;
  if (!isObject(format) || typeof format.type !== "string")
    fail("must be an object with a string type", ["text", "format"]);
  if (format.type === "json_schema") {
    if (typeof format.name !== "string" || format.name === "")
      fail("must be a non-empty string", ["text", "format", "name"]);
    if (!isObject(format.schema)) fail("must be a JSON Schema object", ["text", "format", "schema"]);
  }
}

function requireString(object: Record<string, unknown>, key: string, path: Path): void {
  if (typeof object[key] !== "string" || object[key] === "") fail("must be a non-empty string", [...path, key]);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function fail(message: string, path: Path): never {
  throw new InvalidRequestError(message, path.length === 0 ? undefined : formatPath(path));
}
