import type { ConversationRequest, ConversationResponse, ToolChoice, ToolDefinition } from "../../core/conversation.js";
import { type DroppedField, type Extra, type Fields, fieldsFor, type SharesField } from "../../core/extra.js";
import { type Converted, formatPath, type LossyEntry } from "../../core/lossy.js";
import { assertNever, type MediaSource, type Message, type Part, type ThinkingPart } from "../../core/parts.js";
import { encodeOriginSignature } from "../../core/reasoning-origin.js";
import type { WireFormat } from "../../core/wire-format.js";
import { anthropicStopReasonFromCore } from "./map-stop-reason.js";
import { envelopeOrigin, wrappedBy } from "./signatures.js";
import { coreUsageToAnthropic } from "./usage.js";
import type {
  AnthropicContentBlock,
  AnthropicMediaSource,
  AnthropicMessage,
  AnthropicMessageResponse,
  AnthropicRequestBody,
  AnthropicTextBlock,
  AnthropicTool,
  AnthropicToolChoice,
  AnthropicToolResultContentBlock,
  AnthropicUnknownFields,
} from "./wire-types.js";

/**
 * Core -> Anthropic wire, part by part in order. Anthropic's own fields in `extra` go back out as they came; another
 * API's reach Anthropic only where Anthropic has the same field (`sharedRequestField`, `sharedToolField`), and are
 * dropped and reported otherwise.
 */

/** Anthropic requires `max_tokens`; an OpenAI request may leave it out. */
export const DEFAULT_MAX_TOKENS = 4096;

/** Anthropic accepts only these service tiers; OpenAI's (`default`, `flex`, `priority`) do not carry over. */
const ANTHROPIC_SERVICE_TIERS: ReadonlySet<unknown> = new Set(["auto", "standard_only"]);

interface Options {
  /** Answers to Anthropic clients sign unsigned thinking so that clients keep it. */
  signUnsignedThinking: boolean;
  /**
   * Stored answers read back sign the thinking that came from another provider (it has an origin) as the
   * answer did; thinking a client stored unsigned stays unsigned.
   */
  signOriginThinking?: boolean;
  /** The provider written for, whose own signatures go back to it out of their envelopes. */
  signatureOwner?: string;
}

class Writer {
  readonly lossy: LossyEntry[] = [];

  constructor(readonly options: Options) {}

  /**
   * `target` gets Anthropic's fields of `extra` and the other APIs' that `shares` says Anthropic has; the others are
   * reported once per object. Fields the codec wrote win: an OpenAI message's `role: "developer"` is its system role.
   */
  copyExtra(
    target: AnthropicUnknownFields,
    extra: Extra | undefined,
    path: ReadonlyArray<string | number>,
    shares?: SharesField,
  ): void {
    if (extra === undefined) return;
    const { fields, dropped } = fieldsFor(extra, "anthropic", shares);
    for (const key in fields) if (!Object.hasOwn(target, key)) target[key] = fields[key];
    if (dropped.length > 0)
      this.dropped(
        dropped.filter((field) => !Object.hasOwn(target, field.key)),
        path,
      );
  }

  /** One entry per API the dropped fields came from. */
  dropped(fields: readonly DroppedField[], path: ReadonlyArray<string | number>): void {
    if (fields.length === 0) return;
    const byFormat = new Map<WireFormat, string[]>();
    for (const { from, key } of fields) byFormat.set(from, [...(byFormat.get(from) ?? []), key]);
    for (const [from, keys] of byFormat) {
      const entry: LossyEntry = {
        code: `${from}-fields-dropped`,
        message: `no Anthropic equivalent for ${keys.join(", ")}`,
      };
      if (path.length > 0) entry.path = formatPath(path);
      this.lossy.push(entry);
    }
  }

  message(message: Message, path: ReadonlyArray<string | number>): AnthropicMessage {
    const first = message.parts[0];
    const shorthand =
      message.textShorthand === true &&
      message.parts.length === 1 &&
      first?.type === "text" &&
      first.extra === undefined;
    const content: AnthropicMessage["content"] = shorthand
      ? first.text
      : this.blocks(message.parts, [...path, "content"]);
    const wire: AnthropicMessage = { role: message.role, content };
    this.copyExtra(wire, message.extra, path);
    return wire;
  }

  blocks(parts: readonly Part[], path: ReadonlyArray<string | number>): AnthropicContentBlock[] {
    const blocks: AnthropicContentBlock[] = [];
    for (let index = 0; index < parts.length; index++) {
      const block = this.block(parts[index] as Part, [...path, index]);
      if (block) blocks.push(block);
    }
    return blocks;
  }

  block(part: Part, path: ReadonlyArray<string | number>): AnthropicContentBlock | undefined {
    let block: AnthropicUnknownFields & { type: string };
    switch (part.type) {
      case "text":
        block = { type: "text", text: part.text };
        break;
      case "thinking":
        block = { type: "thinking", thinking: part.thinking };
        {
          const signature = this.signatureOf(part);
          if (signature !== undefined) block.signature = signature;
        }
        break;
      case "redacted_thinking":
        block = { type: "redacted_thinking", data: part.data };
        break;
      case "tool_call":
        block = { type: "tool_use", id: part.id, name: part.name, input: this.toolInput(part.input, path) };
        break;
      case "tool_result":
        block = {
          type: "tool_result",
          tool_use_id: part.toolCallId,
          content: this.toolResultContent(part.content, path),
        };
        if (part.isError !== undefined) block.is_error = part.isError;
        break;
      case "image":
      case "document":
        block = { type: part.type, source: mediaSourceToAnthropic(part.source) };
        break;
      case "opaque":
        if (part.format === "anthropic") return part.block as AnthropicContentBlock;
        this.lossy.push({
          code: "opaque-block-dropped",
          message: `a ${part.format} block Anthropic cannot take was left out`,
          path: formatPath(path),
        });
        return undefined;
      default:
        return assertNever(part, "part");
    }
    this.copyExtra(block, part.extra, path);
    return block;
  }

  signatureOf(part: ThinkingPart): string | undefined {
    const owner = this.options.signatureOwner;
    if (owner !== undefined) {
      const own = wrappedBy(envelopeOrigin(part), owner);
      if (own !== undefined) return own;
    }
    if (part.signature !== undefined) return part.signature;
    if (this.options.signUnsignedThinking) return encodeOriginSignature(part.origin ?? { format: "openai" });
    if (this.options.signOriginThinking && part.origin !== undefined) return encodeOriginSignature(part.origin);
    return undefined;
  }

  toolInput(input: unknown, path: ReadonlyArray<string | number>): unknown {
    if (typeof input === "object" && input !== null && !Array.isArray(input)) return input;
    // Anthropic's `input` is always an object; keep a stray value rather than lose it
    this.lossy.push({
      code: "tool-input-wrapped",
      message: 'tool call arguments were not a JSON object; sent as {"value": ...}',
      path: formatPath([...path, "input"]),
    });
    return { value: input };
  }

  toolResultContent(
    content: string | Part[],
    path: ReadonlyArray<string | number>,
  ): string | AnthropicToolResultContentBlock[] {
    if (typeof content === "string") return content;
    return this.blocks(content, [...path, "content"]) as AnthropicToolResultContentBlock[];
  }
}

/** `stream_options: {include_usage}` asks for what an Anthropic stream always carries: nothing is lost. */
function carriedAnyway({ key, value }: DroppedField): boolean {
  if (key !== "stream_options" || typeof value !== "object" || value === null) return false;
  return Object.keys(value).every((name) => name === "include_usage");
}

/**
 * Request fields of another API that Anthropic has under the same name and meaning: `top_k`, and `service_tier`
 * where the value is one Anthropic takes (OpenAI's `default`, `flex` and `priority` are not).
 */
const sharedRequestField: SharesField = (key, value) =>
  (key === "top_k" && typeof value === "number") || (key === "service_tier" && ANTHROPIC_SERVICE_TIERS.has(value));

/** Tool fields Anthropic has too: `strict` (the input must match the schema). */
const sharedToolField: SharesField = (key, value) => key === "strict" && typeof value === "boolean";

function mediaSourceToAnthropic(source: MediaSource): AnthropicMediaSource {
  switch (source.type) {
    case "base64":
    case "text":
      return { type: source.type, media_type: source.mediaType, data: source.data };
    case "url":
      return { type: "url", url: source.url };
    default:
      return assertNever(source, "media source");
  }
}

export function coreToAnthropicMessages(
  messages: Message[],
  options: { signOriginThinking?: boolean; signatureOwner?: string } = {},
): Converted<AnthropicMessage[]> {
  const writer = new Writer({ signUnsignedThinking: false, ...options });
  const value = messages.map((message, index) => writer.message(message, ["messages", index]));
  return { value, lossy: writer.lossy };
}

export function coreToAnthropicRequest(
  request: ConversationRequest,
  options: { signatureOwner?: string } = {},
): Converted<AnthropicRequestBody> {
  const writer = new Writer({ signUnsignedThinking: false, ...options });
  const thinkingBudget = request.thinking?.budgetTokens ?? 0;
  const body: AnthropicRequestBody = {
    model: request.model,
    max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS + thinkingBudget,
    messages: request.messages.map((message, index) => writer.message(message, ["messages", index])),
  };
  if (request.system !== undefined) body.system = systemToAnthropic(request.system, writer);
  if (request.tools !== undefined)
    body.tools = request.tools.map((tool, index) => toolToAnthropic(tool, index, writer));
  if (request.toolChoice !== undefined) body.tool_choice = toolChoiceToAnthropic(request.toolChoice);
  if (request.thinking !== undefined) {
    const { type, budgetTokens, display, extra } = request.thinking;
    const thinking: AnthropicRequestBody["thinking"] & object = { type };
    if (budgetTokens !== undefined) thinking.budget_tokens = budgetTokens;
    if (display !== undefined) thinking.display = display;
    writer.copyExtra(thinking, extra, ["thinking"]);
    body.thinking = thinking;
  }
  if (request.stopSequences !== undefined) body.stop_sequences = request.stopSequences;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.topK !== undefined) body.top_k = request.topK;
  if (request.stream !== undefined) body.stream = request.stream;
  const { fields, dropped } = fieldsFor(request.extra, "anthropic", sharedRequestField);
  const extra: Fields = fields ?? {};
  for (const key in extra) if (key !== "metadata" && key !== "output_config") body[key] = extra[key];
  writer.dropped(
    dropped.filter((field) => !carriedAnyway(field)),
    [],
  );
  const metadata = extra.metadata;
  if (request.userId !== undefined || metadata !== undefined) {
    body.metadata = { ...(metadata as object | undefined) };
    if (request.userId !== undefined) body.metadata.user_id = request.userId;
  }
  const outputConfig = extra.output_config;
  if (request.reasoningEffort !== undefined)
    body.output_config = { ...(outputConfig as object | undefined), effort: request.reasoningEffort };
  else if (outputConfig !== undefined)
    body.output_config = outputConfig as AnthropicRequestBody["output_config"] & object;
  const format = request.responseFormat;
  if (format?.type === "json_schema") {
    body.output_config = { ...body.output_config, format: { type: "json_schema", schema: format.schema } };
  } else if (format?.type === "json_object") {
    writer.lossy.push({
      code: "response-format-dropped",
      message: "Anthropic has no JSON mode without a schema; the answer's format was not asked for",
      path: "response_format",
    });
  }
  return { value: body, lossy: writer.lossy };
}

function systemToAnthropic(system: Message, writer: Writer): string | AnthropicTextBlock[] {
  const first = system.parts[0];
  if (system.textShorthand === true && system.parts.length === 1 && first?.type === "text" && first.extra === undefined)
    return first.text;
  const blocks: AnthropicTextBlock[] = [];
  system.parts.forEach((part, index) => {
    if (part.type === "text") blocks.push(writer.block(part, ["system", index]) as AnthropicTextBlock);
    else
      writer.lossy.push({
        code: "system-part-dropped",
        message: `the system prompt takes only text; a ${part.type} part was left out`,
        path: formatPath(["system", index]),
      });
  });
  return blocks;
}

function toolToAnthropic(tool: ToolDefinition, index: number, writer: Writer): AnthropicTool {
  const wire: AnthropicTool = { name: tool.name };
  if (tool.description !== undefined) wire.description = tool.description;
  if (tool.inputSchema !== undefined) wire.input_schema = tool.inputSchema;
  writer.copyExtra(wire, tool.extra, ["tools", index], sharedToolField);
  return wire;
}

function toolChoiceToAnthropic(choice: ToolChoice): AnthropicToolChoice {
  switch (choice.type) {
    case "none":
      return { type: "none" };
    case "auto":
    case "any": {
      const wire: { type: "auto" | "any"; disable_parallel_tool_use?: boolean } = { type: choice.type };
      if (choice.disableParallelToolUse !== undefined) wire.disable_parallel_tool_use = choice.disableParallelToolUse;
      return wire;
    }
    case "tool": {
      const wire: AnthropicToolChoice = { type: "tool", name: choice.name };
      if (choice.disableParallelToolUse !== undefined) wire.disable_parallel_tool_use = choice.disableParallelToolUse;
      return wire;
    }
    default:
      return assertNever(choice, "tool choice");
  }
}

/**
 * An answer for an Anthropic client. Thinking without a signature is signed with a Parley envelope: Claude
 * Code drops unsigned thinking, and the envelope later tells where that reasoning may be sent back.
 */
export function coreToAnthropicResponse(response: ConversationResponse): Converted<AnthropicMessageResponse> {
  const writer = new Writer({ signUnsignedThinking: true });
  // Anthropic's usage fields the core does not name (cache_creation, service_tier...) travel under `usage`.
  const { usage: usageRest, ...rest } = response.extra?.anthropic ?? {};
  const body: AnthropicMessageResponse = {
    id: response.id,
    type: "message",
    role: "assistant",
    model: response.model,
    content: writer.blocks(response.message.parts, ["content"]),
    stop_reason: anthropicStopReasonFromCore(response.stopReason),
    stop_sequence: response.stopSequence ?? null,
    usage: coreUsageToAnthropic(
      response.usage,
      typeof usageRest === "object" && usageRest !== null ? (usageRest as AnthropicUnknownFields) : {},
    ),
  };
  writer.copyExtra(body, { ...response.extra, anthropic: rest }, []);
  return { value: body, lossy: writer.lossy };
}
