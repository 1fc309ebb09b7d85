import type {
  ConversationRequest,
  ConversationResponse,
  ThinkingConfig,
  ToolChoice,
  ToolDefinition,
} from "../../core/conversation.js";
import { type Fields, withFields } from "../../core/extra.js";
import { isObject } from "../../core/json.js";
import type { Converted } from "../../core/lossy.js";
import {
  assertNever,
  type MediaSource,
  type Message,
  type Part,
  type Role,
  type ToolResultContentPart,
  type ToolResultPart,
} from "../../core/parts.js";
import { decodeOriginSignature } from "../../core/reasoning-origin.js";
import { mapAnthropicStopReason } from "./map-stop-reason.js";
import { anthropicUsageToCore } from "./usage.js";
import type {
  AnthropicContentBlock,
  AnthropicMessage,
  AnthropicMessageResponse,
  AnthropicRequestBody,
  AnthropicThinkingConfig,
  AnthropicTool,
  AnthropicToolChoice,
  AnthropicUnknownFields,
} from "./wire-types.js";

/**
 * Anthropic wire -> core. Every field the core model does not name lands in `extra` and every block type it
 * does not model becomes an opaque part, so that `from-core` gives back the same JSON.
 */

/** The fields of `source` other than `known`, or undefined when there are none. */
function restOf(source: AnthropicUnknownFields, known: ReadonlySet<string>): Fields | undefined {
  let rest: Fields | undefined;
  for (const key in source) {
    if (known.has(key)) continue;
    rest ??= {};
    rest[key] = source[key];
  }
  return rest;
}

/** `part` with the block's unmapped fields recorded as Anthropic's. */
function withExtra<T extends object>(part: T, fields: Fields | undefined): T {
  return withFields(part, "anthropic", fields);
}

const TEXT_KEYS = new Set(["type", "text"]);
const THINKING_KEYS = new Set(["type", "thinking", "signature"]);
const REDACTED_KEYS = new Set(["type", "data"]);
const TOOL_USE_KEYS = new Set(["type", "id", "name", "input"]);
const TOOL_RESULT_KEYS = new Set(["type", "tool_use_id", "content", "is_error"]);
const MEDIA_KEYS = new Set(["type", "source"]);

/** A media source the core can hold exactly; anything else (file ids, extra keys) keeps its block opaque. */
function mediaSourceToCore(source: unknown): MediaSource | undefined {
  if (!isObject(source)) return undefined;
  const keys = Object.keys(source).length;
  if ((source.type === "base64" || source.type === "text") && keys === 3) {
    if (typeof source.media_type === "string" && typeof source.data === "string")
      return { type: source.type, mediaType: source.media_type, data: source.data };
  }
  if (source.type === "url" && keys === 2 && typeof source.url === "string") return { type: "url", url: source.url };
  return undefined;
}

/** One content block. Also used by the stream decoder for `content_block_start`. */
export function anthropicBlockToCore(block: AnthropicContentBlock): Part {
  // upstream answers are not validated: a stray non-object is carried, not thrown on
  if (!isObject(block)) return { type: "opaque", format: "anthropic", block };
  const wire = block as AnthropicUnknownFields;
  switch (block.type) {
    case "text":
      if (typeof wire.text !== "string") break;
      return withExtra({ type: "text", text: wire.text }, restOf(wire, TEXT_KEYS));
    case "thinking": {
      if (typeof wire.thinking !== "string") break;
      const part: Part = { type: "thinking", thinking: wire.thinking };
      if (typeof wire.signature === "string") {
        part.signature = wire.signature;
        // a Parley envelope tells where OpenAI-side reasoning came from; any other signature is Anthropic's
        part.origin = decodeOriginSignature(wire.signature) ?? { format: "anthropic" };
      } else if (wire.signature !== undefined) {
        break;
      }
      return withExtra(part, restOf(wire, THINKING_KEYS));
    }
    case "redacted_thinking":
      if (typeof wire.data !== "string") break;
      return withExtra({ type: "redacted_thinking", data: wire.data }, restOf(wire, REDACTED_KEYS));
    case "tool_use":
      if (typeof wire.id !== "string" || typeof wire.name !== "string") break;
      return withExtra(
        { type: "tool_call", id: wire.id, name: wire.name, input: wire.input },
        restOf(wire, TOOL_USE_KEYS),
      );
    case "tool_result":
      return toolResultToCore(wire) ?? { type: "opaque", format: "anthropic", block };
    case "image":
    case "document": {
      const source = mediaSourceToCore(wire.source);
      if (!source) break;
      return withExtra({ type: block.type, source }, restOf(wire, MEDIA_KEYS));
    }
    default: {
      const text = OPAQUE_AS_TEXT[String(block.type)]?.(wire);
      if (text !== undefined) return { type: "opaque", format: "anthropic", block, text };
      break;
    }
  }
  return { type: "opaque", format: "anthropic", block };
}

/**
 * Blocks Parley does not model whose meaning a model of another API still needs, in words: a `tool_reference` (in
 * the result of Claude Code's tool search) says which deferred tool was loaded, and without it the result is empty.
 */
const OPAQUE_AS_TEXT: Readonly<Record<string, (block: AnthropicUnknownFields) => string | undefined>> = {
  tool_reference: (block) => (typeof block.tool_name === "string" ? `Tool loaded: ${block.tool_name}` : undefined),
};

function toolResultToCore(wire: AnthropicUnknownFields): ToolResultPart | undefined {
  if (typeof wire.tool_use_id !== "string") return undefined;
  if (wire.is_error !== undefined && typeof wire.is_error !== "boolean") return undefined;
  let content: ToolResultPart["content"];
  // an absent content means an empty result; it comes back as ""
  if (wire.content === undefined || typeof wire.content === "string") content = wire.content ?? "";
  else if (Array.isArray(wire.content)) content = wire.content.map(toolResultItemToCore);
  else return undefined;
  const part: ToolResultPart = { type: "tool_result", toolCallId: wire.tool_use_id, content };
  if (typeof wire.is_error === "boolean") part.isError = wire.is_error;
  return withExtra(part, restOf(wire, TOOL_RESULT_KEYS));
}

function toolResultItemToCore(block: AnthropicContentBlock): ToolResultContentPart {
  if (!isObject(block)) return { type: "opaque", format: "anthropic", block };
  const part = anthropicBlockToCore(block);
  switch (part.type) {
    case "text":
    case "image":
    case "document":
    case "opaque":
      return part;
    case "thinking":
    case "redacted_thinking":
    case "tool_call":
    case "tool_result":
      return { type: "opaque", format: "anthropic", block };
    default:
      return assertNever(part, "part");
  }
}

const MESSAGE_KEYS = new Set(["role", "content"]);

export function anthropicMessageToCore(message: AnthropicMessage): Message {
  const role: Role = message.role;
  const core: Message =
    typeof message.content === "string"
      ? { role, parts: [{ type: "text", text: message.content }], textShorthand: true }
      : { role, parts: message.content.map(anthropicBlockToCore) };
  return withExtra(core, restOf(message, MESSAGE_KEYS));
}

export function anthropicMessagesToCore(messages: AnthropicMessage[]): Message[] {
  return messages.map(anthropicMessageToCore);
}

const REQUEST_KEYS = new Set([
  "model",
  "max_tokens",
  "messages",
  "system",
  "tools",
  "tool_choice",
  "thinking",
  "stop_sequences",
  "temperature",
  "top_p",
  "top_k",
  "stream",
  "metadata",
  "output_config",
]);

export function anthropicRequestToCore(body: AnthropicRequestBody): Converted<ConversationRequest> {
  const request: ConversationRequest = { model: body.model, messages: anthropicMessagesToCore(body.messages) };
  const extra: Fields = restOf(body, REQUEST_KEYS) ?? {};
  if (body.system !== undefined) {
    request.system =
      typeof body.system === "string"
        ? { role: "system", parts: [{ type: "text", text: body.system }], textShorthand: true }
        : { role: "system", parts: body.system.map(anthropicBlockToCore) };
  }
  if (body.tools !== undefined) request.tools = body.tools.map(toolToCore);
  if (body.tool_choice !== undefined) request.toolChoice = toolChoiceToCore(body.tool_choice);
  if (body.max_tokens !== undefined) request.maxTokens = body.max_tokens;
  if (body.temperature !== undefined) request.temperature = body.temperature;
  if (body.top_p !== undefined) request.topP = body.top_p;
  if (body.top_k !== undefined) request.topK = body.top_k;
  if (body.stop_sequences !== undefined) request.stopSequences = body.stop_sequences;
  if (body.stream !== undefined) request.stream = body.stream;
  if (body.thinking !== undefined) {
    const thinking = thinkingToCore(body.thinking);
    if (thinking) request.thinking = thinking;
    else extra.thinking = body.thinking;
  }
  if (body.metadata !== undefined) {
    const { user_id: userId, ...rest } = body.metadata;
    if (typeof userId === "string") {
      request.userId = userId;
      if (Object.keys(rest).length > 0) extra.metadata = rest;
    } else {
      extra.metadata = body.metadata;
    }
  }
  if (body.output_config !== undefined) {
    const outputConfig = body.output_config;
    if (isObject(outputConfig) && typeof outputConfig.effort === "string") {
      const { effort, ...rest } = outputConfig;
      request.reasoningEffort = effort;
      if (Object.keys(rest).length > 0) extra.output_config = rest;
    } else {
      extra.output_config = outputConfig;
    }
  }
  withExtra(request, extra);
  return { value: request, lossy: [] };
}

function toolToCore(tool: AnthropicTool): ToolDefinition {
  const known = new Set(["name", "input_schema"]);
  const core: ToolDefinition = { name: tool.name, inputSchema: tool.input_schema };
  if (typeof tool.description === "string") {
    core.description = tool.description;
    known.add("description");
  }
  return withExtra(core, restOf(tool, known));
}

function toolChoiceToCore(choice: AnthropicToolChoice): ToolChoice {
  if (choice.type === "none") return { type: "none" };
  const core: Exclude<ToolChoice, { type: "none" }> =
    choice.type === "tool" ? { type: "tool", name: choice.name } : { type: choice.type };
  if (choice.disable_parallel_tool_use !== undefined) core.disableParallelToolUse = choice.disable_parallel_tool_use;
  return core;
}

const THINKING_CONFIG_KEYS = new Set(["type", "budget_tokens", "display"]);

function thinkingToCore(thinking: AnthropicThinkingConfig): ThinkingConfig | undefined {
  const type = thinking.type;
  if (type !== "enabled" && type !== "adaptive" && type !== "disabled") return undefined;
  if (thinking.display !== undefined && typeof thinking.display !== "string") return undefined;
  const core: ThinkingConfig = { type };
  if (thinking.budget_tokens !== undefined) core.budgetTokens = thinking.budget_tokens;
  if (thinking.display !== undefined) core.display = thinking.display;
  return withExtra(core, restOf(thinking, THINKING_CONFIG_KEYS));
}

const RESPONSE_KEYS = new Set(["id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"]);

export function anthropicResponseToCore(body: AnthropicMessageResponse): ConversationResponse {
  const { usage, rest: usageRest } = anthropicUsageToCore(body.usage);
  const response: ConversationResponse = {
    id: typeof body.id === "string" ? body.id : "",
    model: typeof body.model === "string" ? body.model : "",
    message: { role: "assistant", parts: Array.isArray(body.content) ? body.content.map(anthropicBlockToCore) : [] },
    stopReason: mapAnthropicStopReason(body.stop_reason),
    usage,
  };
  if (body.stop_sequence !== undefined) response.stopSequence = body.stop_sequence;
  const extra = restOf(body, RESPONSE_KEYS) ?? {};
  // the usage fields the core does not name (cache_creation, service_tier...) travel under `usage`
  if (Object.keys(usageRest).length > 0) extra.usage = usageRest;
  return withExtra(response, extra);
}
