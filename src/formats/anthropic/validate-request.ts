import { InvalidRequestError } from "../../core/errors.js";
import { isObject } from "../../core/json.js";
import { formatPath } from "../../core/lossy.js";
import type { AnthropicCountTokensRequestBody, AnthropicMessage, AnthropicRequestBody } from "./wire-types.js";

/**
 * Loose validation of what clients send: the fields Parley reads must have the right shape, everything
 * else (unknown fields, unknown block types, beta features) passes untouched. Hand-written rather than a
 * schema because it runs on every gateway request and never copies the body.
 */

type Path = ReadonlyArray<string | number>;

const ROLES: ReadonlySet<string> = new Set(["user", "assistant", "system"]);
const TOOL_CHOICE_TYPES: ReadonlySet<string> = new Set(["auto", "any", "tool", "none"]);

function fail(message: string, path: Path): never {
  throw new InvalidRequestError(message, formatPath(path));
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing (the field is missing)";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value)}`;
}

function expectString(block: Record<string, unknown>, key: string, path: Path): void {
  if (typeof block[key] !== "string") fail(`must be a string, got ${describe(block[key])}`, [...path, key]);
}

/** The whole request body of `POST /v1/messages`, returned as is (no copy) once its shape is checked. */
export function parseAnthropicRequest(body: unknown): AnthropicRequestBody {
  const request = checkRequest(body);
  const maxTokens = request.max_tokens;
  if (typeof maxTokens !== "number" || !Number.isInteger(maxTokens) || maxTokens <= 0)
    fail(`must be a positive integer, got ${describe(maxTokens)}`, ["max_tokens"]);
  return request as AnthropicRequestBody;
}

/** The body of `POST /v1/messages/count_tokens`: a request without `max_tokens`. */
export function parseCountTokensRequest(body: unknown): AnthropicCountTokensRequestBody {
  const request = checkRequest(body);
  if (request.max_tokens !== undefined && typeof request.max_tokens !== "number")
    fail(`must be a number, got ${describe(request.max_tokens)}`, ["max_tokens"]);
  return request as AnthropicCountTokensRequestBody;
}

/** A history on its own (e.g. `{"messages":[...]}` given to `parley repair`). */
export function parseAnthropicMessages(value: unknown, path: string | Path = "messages"): AnthropicMessage[] {
  const base: Path = typeof path === "string" ? (path === "" ? [] : [path]) : path;
  if (!Array.isArray(value)) fail(`must be an array of messages, got ${describe(value)}`, base);
  for (let index = 0; index < value.length; index++) checkMessage(value[index], [...base, index]);
  return value as AnthropicMessage[];
}

function checkRequest(body: unknown): Record<string, unknown> {
  if (!isObject(body)) fail(`request body must be a JSON object, got ${describe(body)}`, []);
  if (typeof body.model !== "string" || body.model === "")
    fail(`must be a non-empty string, got ${describe(body.model)}`, ["model"]);
  const messages = parseAnthropicMessages(body.messages, "messages");
  checkNonEmpty(messages);
  if (body.system !== undefined) checkSystem(body.system);
  if (body.tools !== undefined) checkTools(body.tools);
  if (body.tool_choice !== undefined) checkToolChoice(body.tool_choice);
  if (body.thinking !== undefined) checkThinking(body.thinking);
  for (const key of ["temperature", "top_p", "top_k"] as const) {
    const value = body[key];
    if (value !== undefined && (typeof value !== "number" || !Number.isFinite(value)))
      fail(`must be a number, got ${describe(value)}`, [key]);
  }
  if (body.stream !== undefined && typeof body.stream !== "boolean")
    fail(`must be a boolean, got ${describe(body.stream)}`, ["stream"]);
  if (body.stop_sequences !== undefined) {
    const sequences = body.stop_sequences;
    if (!Array.isArray(sequences)) fail(`must be an array of strings, got ${describe(sequences)}`, ["stop_sequences"]);
    sequences.forEach((sequence, index) => {
      if (typeof sequence !== "string") fail(`must be a string, got ${describe(sequence)}`, ["stop_sequences", index]);
    });
  }
  if (body.metadata !== undefined && !isObject(body.metadata))
    fail(`must be an object, got ${describe(body.metadata)}`, ["metadata"]);
  return body;
}

/**
 * An empty list holds nothing to answer. Empty content anywhere else (`""`, `[]`, whitespace only), which the
 * Messages API refuses, is no reason to refuse a client: repair drops or merges it for the provider and reports
 * it (Claude Code's compaction request holds such messages). A history left with nothing once it is gone is
 * refused after repair, naming `messages`.
 */
function checkNonEmpty(messages: AnthropicMessage[]): void {
  if (messages.length === 0) fail("must hold at least one message", ["messages"]);
  // Repair would drop every one of them: nothing would be left to answer, and the first is where to look.
  if (messages.every(holdsNothing))
    fail("must not be empty: every message is, so nothing is left to answer", ["messages", 0, "content"]);
}

/** Content with nothing in it at all: an empty string, no blocks, or only empty text blocks. */
function holdsNothing(message: AnthropicMessage): boolean {
  const content: unknown = message.content;
  if (typeof content === "string") return content === "";
  return (
    Array.isArray(content) && content.every((block) => isObject(block) && block.type === "text" && block.text === "")
  );
}

function checkSystem(system: unknown): void {
  if (typeof system === "string") return;
  if (!Array.isArray(system)) fail(`must be a string or an array of text blocks, got ${describe(system)}`, ["system"]);
  system.forEach((block, index) => {
    const path = ["system", index];
    if (!isObject(block)) fail(`must be a text block, got ${describe(block)}`, path);
    if (block.type !== "text") fail(`must be "text" in system, got ${describe(block.type)}`, [...path, "type"]);
    expectString(block, "text", path);
  });
}

function checkMessage(message: unknown, path: Path): void {
  if (!isObject(message)) fail(`must be a message object, got ${describe(message)}`, path);
  if (typeof message.role !== "string" || !ROLES.has(message.role))
    fail(`must be "user", "assistant" or "system", got ${describe(message.role)}`, [...path, "role"]);
  const content = message.content;
  if (typeof content === "string") return;
  if (!Array.isArray(content))
    fail(`must be a string or an array of content blocks, got ${describe(content)}`, [...path, "content"]);
  for (let index = 0; index < content.length; index++) checkBlock(content[index], [...path, "content", index]);
}

/** Known block types are checked field by field; unknown types only need a `type`. */
function checkBlock(block: unknown, path: Path): void {
  if (!isObject(block)) fail(`must be a content block object, got ${describe(block)}`, path);
  if (typeof block.type !== "string")
    fail(`must be a string naming the block type, got ${describe(block.type)}`, [...path, "type"]);
  switch (block.type) {
    case "text":
      expectString(block, "text", path);
      return;
    case "thinking":
      expectString(block, "thinking", path);
      if (block.signature !== undefined) expectString(block, "signature", path);
      return;
    case "redacted_thinking":
      expectString(block, "data", path);
      return;
    case "tool_use":
      expectString(block, "id", path);
      expectString(block, "name", path);
      if (!isObject(block.input)) fail(`must be an object, got ${describe(block.input)}`, [...path, "input"]);
      return;
    case "tool_result":
      checkToolResult(block, path);
      return;
    case "image":
    case "document":
      checkSource(block.source, [...path, "source"]);
      return;
    default:
      return;
  }
}

function checkToolResult(block: Record<string, unknown>, path: Path): void {
  expectString(block, "tool_use_id", path);
  if (block.is_error !== undefined && typeof block.is_error !== "boolean")
    fail(`must be a boolean, got ${describe(block.is_error)}`, [...path, "is_error"]);
  const content = block.content;
  if (content === undefined || typeof content === "string") return;
  if (!Array.isArray(content))
    fail(`must be a string or an array of content blocks, got ${describe(content)}`, [...path, "content"]);
  for (let index = 0; index < content.length; index++) checkBlock(content[index], [...path, "content", index]);
}

function checkSource(source: unknown, path: Path): void {
  if (!isObject(source)) fail(`must be a source object, got ${describe(source)}`, path);
  if (typeof source.type !== "string") fail(`must be a string, got ${describe(source.type)}`, [...path, "type"]);
  switch (source.type) {
    case "base64":
    case "text":
      expectString(source, "media_type", path);
      expectString(source, "data", path);
      return;
    case "url":
      expectString(source, "url", path);
      return;
    default:
      // file ids, content-block sources and future kinds pass untouched
      return;
  }
}

function checkTools(tools: unknown): void {
  if (!Array.isArray(tools)) fail(`must be an array of tools, got ${describe(tools)}`, ["tools"]);
  tools.forEach((tool, index) => {
    if (!isObject(tool)) fail(`must be a tool object, got ${describe(tool)}`, ["tools", index]);
    if (typeof tool.name !== "string" || tool.name === "")
      fail(`must be a non-empty string, got ${describe(tool.name)}`, ["tools", index, "name"]);
  });
}

function checkToolChoice(choice: unknown): void {
  if (!isObject(choice)) fail(`must be an object, got ${describe(choice)}`, ["tool_choice"]);
  if (typeof choice.type !== "string" || !TOOL_CHOICE_TYPES.has(choice.type))
    fail(`must be "auto", "any", "tool" or "none", got ${describe(choice.type)}`, ["tool_choice", "type"]);
  if (choice.type === "tool" && typeof choice.name !== "string")
    fail(`must be a string, got ${describe(choice.name)}`, ["tool_choice", "name"]);
  if (choice.disable_parallel_tool_use !== undefined && typeof choice.disable_parallel_tool_use !== "boolean")
    fail(`must be a boolean, got ${describe(choice.disable_parallel_tool_use)}`, [
      "tool_choice",
      "disable_parallel_tool_use",
    ]);
}

function checkThinking(thinking: unknown): void {
  if (!isObject(thinking)) fail(`must be an object, got ${describe(thinking)}`, ["thinking"]);
  if (typeof thinking.type !== "string") fail(`must be a string, got ${describe(thinking.type)}`, ["thinking", "type"]);
  if (thinking.budget_tokens !== undefined && typeof thinking.budget_tokens !== "number")
    fail(`must be a number, got ${describe(thinking.budget_tokens)}`, ["thinking", "budget_tokens"]);
}
