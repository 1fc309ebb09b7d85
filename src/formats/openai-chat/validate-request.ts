import { formatPath, InvalidRequestError } from "../../core/index.js";
import type { OpenAIChatRequest } from "./wire-types.js";

type Path = Array<string | number>;

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);

/**
 * Loose validation of an incoming OpenAI request: the shapes the converters rely on, each failure a 400
 * naming its path (`messages[3].tool_calls[0].function.arguments`). Unknown fields are accepted.
 */
export function parseOpenAIRequest(body: unknown): OpenAIChatRequest {
  if (!isObject(body)) fail("the request body must be a JSON object", []);
  if (typeof body.model !== "string" || body.model === "") fail("must be a non-empty string", ["model"]);
  if (!Array.isArray(body.messages)) fail("must be an array", ["messages"]);
  if (body.messages.length === 0) fail("must hold at least one message", ["messages"]);
  body.messages.forEach((message, index) => {
    checkMessage(message, ["messages", index]);
  });
  if (body.tools !== undefined) checkTools(body.tools);
  if (body.tool_choice !== undefined) checkToolChoice(body.tool_choice);
  for (const key of ["temperature", "top_p", "max_tokens", "max_completion_tokens"]) {
    const value = body[key];
    if (value !== undefined && value !== null && (typeof value !== "number" || !Number.isFinite(value))) {
      fail("must be a number", [key]);
    }
  }
  for (const key of ["stream", "parallel_tool_calls"]) {
    if (body[key] !== undefined && body[key] !== null && typeof body[key] !== "boolean")
      fail("must be a boolean", [key]);
  }
  if (body.stop !== undefined && body.stop !== null && typeof body.stop !== "string") {
    if (!Array.isArray(body.stop) || body.stop.some((item) => typeof item !== "string")) {
      fail("must be a string or an array of strings", ["stop"]);
    }
  }
  return body as OpenAIChatRequest;
}

function checkMessage(message: unknown, path: Path): void {
  if (!isObject(message)) fail("must be an object", path);
  const role = message.role;
  if (typeof role !== "string" || !ROLES.has(role)) {
    fail(`unknown role ${JSON.stringify(role)} (expected system, developer, user, assistant or tool)`, [
      ...path,
      "role",
    ]);
  }
  const content = message.content;
  const contentPath = [...path, "content"];
  if (content === undefined || content === null) {
    if (role !== "assistant") fail("is required", contentPath);
  } else if (typeof content !== "string") {
    if (!Array.isArray(content)) fail("must be a string or an array of content parts", contentPath);
    content.forEach((part, index) => {
      checkContentPart(part, [...contentPath, index]);
    });
  }
  if (role === "tool" && (typeof message.tool_call_id !== "string" || message.tool_call_id === "")) {
    fail("a tool message needs a non-empty string tool_call_id", [...path, "tool_call_id"]);
  }
  if (role === "assistant" && message.tool_calls !== undefined && message.tool_calls !== null) {
    if (!Array.isArray(message.tool_calls)) fail("must be an array", [...path, "tool_calls"]);
    message.tool_calls.forEach((call, index) => {
      checkToolCall(call, [...path, "tool_calls", index]);
    });
  }
}

function checkContentPart(part: unknown, path: Path): void {
  if (!isObject(part) || typeof part.type !== "string") fail("must be an object with a string type", path);
  if (part.type === "text" && typeof part.text !== "string") fail("must be a string", [...path, "text"]);
  if (part.type === "image_url") {
    const image = part.image_url;
    if (!isObject(image) || typeof image.url !== "string")
      fail("must be an object with a string url", [...path, "image_url"]);
  }
}

function checkToolCall(call: unknown, path: Path): void {
  if (!isObject(call)) fail("must be an object", path);
  if (typeof call.id !== "string" || call.id === "") fail("must be a non-empty string", [...path, "id"]);
  if (call.type !== undefined && call.type !== "function") fail('must be "function"', [...path, "type"]);
  const fn = call.function;
  if (!isObject(fn)) fail("must be an object", [...path, "function"]);
  if (typeof fn.name !== "string" || fn.name === "") fail("must be a non-empty string", [...path, "function", "name"]);
  if (typeof fn.arguments !== "string") fail("must be a string (JSON text)", [...path, "function", "arguments"]);
}

function checkTools(tools: unknown): void {
  if (!Array.isArray(tools)) fail("must be an array", ["tools"]);
  tools.forEach((tool, index) => {
    const path = ["tools", index];
    if (!isObject(tool)) fail("must be an object", path);
    if (tool.type !== "function") fail('only "function" tools are supported', [...path, "type"]);
    const fn = tool.function;
    if (!isObject(fn)) fail("must be an object", [...path, "function"]);
    if (typeof fn.name !== "string" || fn.name === "")
      fail("must be a non-empty string", [...path, "function", "name"]);
    if (fn.parameters !== undefined && !isObject(fn.parameters))
      fail("must be a JSON Schema object", [...path, "function", "parameters"]);
  });
}

function checkToolChoice(choice: unknown): void {
  if (choice === "none" || choice === "auto" || choice === "required") return;
  if (isObject(choice) && choice.type === "function") {
    if (!isObject(choice.function) || typeof choice.function.name !== "string") {
      fail("must name a function", ["tool_choice", "function", "name"]);
    }
    return;
  }
  if (isObject(choice) && typeof choice.type === "string" && choice.type !== "function") return;
  fail('must be "none", "auto", "required" or {"type":"function","function":{"name":...}}', ["tool_choice"]);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function fail(message: string, path: Path): never {
  throw new InvalidRequestError(message, path.length === 0 ? undefined : formatPath(path));
}
