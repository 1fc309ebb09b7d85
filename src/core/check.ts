import type { ConversationRequest, ConversationResponse } from "./conversation.js";
import { InvalidRequestError } from "./errors.js";
import { isObject } from "./json.js";
import { formatPath } from "./lossy.js";
import { type Message, type Part, WIRE_FORMATS } from "./parts.js";

/**
 * Checks that a value from outside the type system (JSON from another process, another language, an older store)
 * is what the canonical model says, before a library function reads it: an `InvalidRequestError` naming the field
 * (`messages[2].parts[0].text`), as the formats' validators and the CLI give, instead of a `TypeError` deep inside.
 * The value is returned as it is, never copied; fields the model does not name pass untouched.
 */

type Path = ReadonlyArray<string | number>;

const ROLES: ReadonlySet<string> = new Set(["system", "user", "assistant"]);
const PART_TYPES = ["text", "thinking", "redacted_thinking", "tool_call", "tool_result", "image", "document", "opaque"];
const RESULT_PART_TYPES = ["text", "image", "document", "opaque"];
const STOP_REASONS: ReadonlySet<string> = new Set([
  "end_turn",
  "max_tokens",
  "stop_sequence",
  "tool_use",
  "pause_turn",
  "refusal",
  "model_context_window_exceeded",
  "other",
]);
const TOOL_CHOICES: ReadonlySet<string> = new Set(["auto", "any", "tool", "none"]);
const FORMATS: ReadonlySet<string> = new Set(WIRE_FORMATS);

function fail(message: string, path: Path): never {
  throw new InvalidRequestError(message, formatPath(path));
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing (the field is missing)";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value)?.slice(0, 40)}`;
}

function object(value: unknown, path: Path, what: string): Record<string, unknown> {
  if (!isObject(value)) fail(`must be ${what}, got ${describe(value)}`, path);
  return value;
}

function string(record: Record<string, unknown>, key: string, path: Path, optional = false): void {
  const value = record[key];
  if (optional && value === undefined) return;
  if (typeof value !== "string") fail(`must be a string, got ${describe(value)}`, [...path, key]);
}

function number(record: Record<string, unknown>, key: string, path: Path): void {
  const value = record[key];
  if (value !== undefined && (typeof value !== "number" || !Number.isFinite(value)))
    fail(`must be a number, got ${describe(value)}`, [...path, key]);
}

function boolean(record: Record<string, unknown>, key: string, path: Path): void {
  const value = record[key];
  if (value !== undefined && typeof value !== "boolean")
    fail(`must be a boolean, got ${describe(value)}`, [...path, key]);
}

function extra(record: Record<string, unknown>, path: Path): void {
  const value = record.extra;
  if (value === undefined) return;
  const fields = object(value, [...path, "extra"], "an object of fields by format ({anthropic: {...}})");
  for (const key in fields) {
    if (fields[key] !== undefined) object(fields[key], [...path, "extra", key], "an object of fields");
  }
}

/** A history: an array of canonical messages. */
export function checkMessages(value: unknown, path: string | Path = "messages"): Message[] {
  const base: Path = typeof path === "string" ? (path === "" ? [] : [path]) : path;
  if (!Array.isArray(value)) fail(`must be an array of messages, got ${describe(value)}`, base);
  for (let index = 0; index < value.length; index++) checkMessage(value[index], [...base, index]);
  return value as Message[];
}

export function checkMessage(value: unknown, path: Path): Message {
  const message = object(value, path, "a message {role, parts}");
  if (typeof message.role !== "string" || !ROLES.has(message.role))
    fail(`must be system, user or assistant, got ${describe(message.role)}`, [...path, "role"]);
  if (!Array.isArray(message.parts)) {
    // The usual mistake: a wire message (Anthropic's, OpenAI's) where a canonical one belongs.
    const hint =
      "content" in message
        ? ": this message has `content`, as an API's messages do; read them with their format's reader (fromAnthropicMessages, fromOpenAIMessages) or with normalize first"
        : "";
    fail(`must be an array of parts, got ${describe(message.parts)}${hint}`, [...path, "parts"]);
  }
  message.parts.forEach((part, index) => {
    checkPart(part, [...path, "parts", index], PART_TYPES);
  });
  boolean(message, "textShorthand", path);
  extra(message, path);
  return message as unknown as Message;
}

function checkPart(value: unknown, path: Path, types: readonly string[]): Part {
  const part = object(value, path, "a part {type, ...}");
  if (typeof part.type !== "string" || !types.includes(part.type))
    fail(`must be one of ${types.join(", ")}, got ${describe(part.type)}`, [...path, "type"]);
  switch (part.type) {
    case "text":
      string(part, "text", path);
      break;
    case "thinking":
      string(part, "thinking", path);
      string(part, "signature", path, true);
      if (part.origin !== undefined) {
        const origin = object(part.origin, [...path, "origin"], "an object {format, ...}");
        if (typeof origin.format !== "string" || !FORMATS.has(origin.format))
          fail(`must be one of ${WIRE_FORMATS.join(", ")}, got ${describe(origin.format)}`, [
            ...path,
            "origin",
            "format",
          ]);
      }
      break;
    case "redacted_thinking":
      string(part, "data", path);
      break;
    case "tool_call":
      string(part, "id", path);
      string(part, "name", path);
      if (!("input" in part))
        fail("must be the call's arguments, got nothing (the field is missing)", [...path, "input"]);
      string(part, "rawInput", path, true);
      break;
    case "tool_result":
      string(part, "toolCallId", path);
      if (Array.isArray(part.content)) {
        part.content.forEach((inner, index) => {
          checkPart(inner, [...path, "content", index], RESULT_PART_TYPES);
        });
      } else if (typeof part.content !== "string") {
        fail(`must be a string or an array of parts, got ${describe(part.content)}`, [...path, "content"]);
      }
      boolean(part, "isError", path);
      break;
    case "image":
    case "document": {
      const source = object(part.source, [...path, "source"], "a source {type: base64, url or text, ...}");
      if (source.type === "url") string(source, "url", [...path, "source"]);
      else if (source.type === "base64" || source.type === "text") {
        string(source, "mediaType", [...path, "source"]);
        string(source, "data", [...path, "source"]);
      } else fail(`must be base64, url or text, got ${describe(source.type)}`, [...path, "source", "type"]);
      break;
    }
    case "opaque":
      if (typeof part.format !== "string" || !FORMATS.has(part.format))
        fail(`must be one of ${WIRE_FORMATS.join(", ")}, got ${describe(part.format)}`, [...path, "format"]);
      string(part, "text", path, true);
      break;
  }
  if (part.type !== "opaque") extra(part, path);
  return part as unknown as Part;
}

/** A canonical request (what a format's `toRequest` takes). */
export function checkRequest(value: unknown): ConversationRequest {
  const request = object(value, [], "a request {model, messages, ...}");
  string(request, "model", []);
  checkMessages(request.messages, "messages");
  if (request.system !== undefined) checkMessage(request.system, ["system"]);
  if (request.tools !== undefined) {
    if (!Array.isArray(request.tools)) fail(`must be an array of tools, got ${describe(request.tools)}`, ["tools"]);
    request.tools.forEach((value, index) => {
      const tool = object(value, ["tools", index], "a tool {name, inputSchema, ...}");
      string(tool, "name", ["tools", index]);
      string(tool, "description", ["tools", index], true);
      extra(tool, ["tools", index]);
    });
  }
  if (request.toolChoice !== undefined) {
    const choice = object(request.toolChoice, ["toolChoice"], "a tool choice {type}");
    if (typeof choice.type !== "string" || !TOOL_CHOICES.has(choice.type))
      fail(`must be auto, any, tool or none, got ${describe(choice.type)}`, ["toolChoice", "type"]);
    if (choice.type === "tool") string(choice, "name", ["toolChoice"]);
  }
  for (const key of ["maxTokens", "temperature", "topP", "topK"]) number(request, key, []);
  if (request.stopSequences !== undefined) {
    const sequences = request.stopSequences;
    if (!Array.isArray(sequences) || sequences.some((sequence) => typeof sequence !== "string"))
      fail(`must be an array of strings, got ${describe(sequences)}`, ["stopSequences"]);
  }
  boolean(request, "stream", []);
  if (request.thinking !== undefined)
    string(object(request.thinking, ["thinking"], "an object {type}"), "type", ["thinking"]);
  string(request, "reasoningEffort", [], true);
  string(request, "userId", [], true);
  string(request, "cacheKey", [], true);
  extra(request, []);
  return request as unknown as ConversationRequest;
}

/** A canonical answer (what a format's `toResponse` takes). */
export function checkResponse(value: unknown): ConversationResponse {
  const response = object(value, [], "an answer {id, model, message, stopReason, usage}");
  string(response, "id", []);
  string(response, "model", []);
  const message = checkMessage(response.message, ["message"]);
  if (message.role !== "assistant") fail(`must be assistant, got ${describe(message.role)}`, ["message", "role"]);
  const stopReason = object(response.stopReason, ["stopReason"], "a stop reason {unified, raw}");
  if (typeof stopReason.unified !== "string" || !STOP_REASONS.has(stopReason.unified))
    fail(`must be one of ${[...STOP_REASONS].join(", ")}, got ${describe(stopReason.unified)}`, [
      "stopReason",
      "unified",
    ]);
  if (stopReason.raw !== null) string(stopReason, "raw", ["stopReason"]);
  const usage = object(response.usage, ["usage"], "usage {inputTokens, outputTokens}");
  for (const key of ["inputTokens", "outputTokens"]) {
    if (typeof usage[key] !== "number") fail(`must be a number, got ${describe(usage[key])}`, ["usage", key]);
  }
  extra(response, []);
  return response as unknown as ConversationResponse;
}
