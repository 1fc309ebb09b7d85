import {
  assertNever,
  type ConversationRequest,
  type ConversationResponse,
  type Converted,
  formatPath,
  type Message,
  type Part,
  type ToolResultPart,
} from "../../core/index.js";
import { assistantToOpenAI } from "./assistant-from-core.js";
import type { OpenAICompat, ReasoningMode } from "./compat.js";
import { createEncodeContext, type EncodeContext, encodeContentPart, openaiFieldsOf } from "./encode-context.js";
import { finishReasonFor } from "./map-finish-reason.js";
import { requestFieldsToOpenAI } from "./request-fields.js";
import { usageToOpenAI } from "./usage.js";
import type { OpenAIChatRequest, OpenAIChatResponse, OpenAIContentPart, OpenAIMessage } from "./wire-types.js";

export interface OpenAIEncodeOptions {
  reasoning: ReasoningMode;
  compat?: OpenAICompat;
  /** The provider the request goes to; its own reasoning goes back in the field it came in. */
  provider?: string;
  /** No preset or setting chose `reasoning`: a client's own reasoning field goes back in that field. */
  reasoningAsItCame?: boolean;
}

export function coreToOpenAIRequest(
  request: ConversationRequest,
  options: OpenAIEncodeOptions,
): Converted<OpenAIChatRequest> {
  const context = createEncodeContext(options.provider, options.compat);
  if (options.reasoningAsItCame === true) context.reasoningAsItCame = true;
  const history = request.system === undefined ? request.messages : [request.system, ...request.messages];
  const messages = encodeMessages(history, options, context);
  const body = requestFieldsToOpenAI(request, messages, options.compat, context);
  return { value: body, lossy: context.lossy };
}

export function coreToOpenAIMessages(messages: Message[], options: OpenAIEncodeOptions): Converted<OpenAIMessage[]> {
  const context = createEncodeContext(options.provider, options.compat);
  return { value: encodeMessages(messages, options, context), lossy: context.lossy };
}

/** A whole answer for an OpenAI client; its reasoning goes in the `reasoning` option's field. */
export function coreToOpenAIResponse(
  response: ConversationResponse,
  options: { reasoning?: ReasoningMode } = {},
): Converted<OpenAIChatResponse> {
  const context = createEncodeContext(undefined, undefined);
  const message = assistantToOpenAI(response.message, 0, options.reasoning ?? "reasoning_content", context, false);
  if (message.content === "" && message.tool_calls !== undefined) message.content = null;
  if (!("content" in message)) message.content = null;
  const body: OpenAIChatResponse = {
    id: response.id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: response.model,
    choices: [{ index: 0, message, finish_reason: finishReasonFor(response.stopReason), logprobs: null }],
    usage: usageToOpenAI(response.usage),
  };
  const lossy = context.lossy.map((entry) =>
    entry.path === undefined ? entry : { ...entry, path: entry.path.replace(/^messages\[0\]/, "message") },
  );
  if (response.stopReason.unified === "pause_turn") {
    // The client is to send the turn back to let the server tools go on; OpenAI has no word for that.
    lossy.push({
      code: "pause-turn-as-stop",
      message: "stop_reason pause_turn has no OpenAI finish_reason; sent as stop",
    });
  }
  return { value: body, lossy };
}

function encodeMessages(
  messages: readonly Message[],
  options: OpenAIEncodeOptions,
  context: EncodeContext,
): OpenAIMessage[] {
  const out: OpenAIMessage[] = [];
  messages.forEach((message, index) => {
    switch (message.role) {
      case "system":
        out.push(
          contentMessage(
            message,
            message.extra?.openai?.role === "developer" ? "developer" : "system",
            message.parts,
            index,
            context,
          ),
        );
        break;
      case "user":
        out.push(...userToOpenAI(message, index, options, context));
        break;
      case "assistant": {
        const encoded = assistantToOpenAI(message, index, options.reasoning, context, true);
        if (options.compat?.requiresReasoningOnToolCallTurns)
          requireReasoning(encoded, index, options.reasoning, context);
        out.push(encoded);
        break;
      }
      default:
        assertNever(message.role, "role");
    }
  });
  return out;
}

/** Kimi and DeepSeek answer 400 when an earlier tool-call turn has no reasoning; `""` is rejected too. */
function requireReasoning(message: OpenAIMessage, index: number, mode: ReasoningMode, context: EncodeContext): void {
  if (message.tool_calls === undefined || message.tool_calls.length === 0) return;
  const field = mode === "reasoning" ? "reasoning" : "reasoning_content";
  const current = message[field];
  if (typeof current === "string" && current.trim() !== "") return;
  message[field] = " ";
  context.lossy.push({
    code: "reasoning-placeholder-added",
    message: `the upstream requires ${field} on tool-call turns; a single space was sent`,
    path: formatPath(["messages", index]),
  });
}

function contentMessage(
  message: Message,
  role: "system" | "developer" | "user",
  parts: readonly Part[],
  index: number,
  context: EncodeContext,
  partIndexes?: readonly number[],
): OpenAIMessage {
  const { role: _role, ...extra } =
    openaiFieldsOf(message.extra, "message", formatPath(["messages", index]), context) ?? {};
  const single = parts[0];
  if (message.textShorthand && parts.length === 1 && single?.type === "text" && !single.extra) {
    return { ...extra, role, content: single.text };
  }
  const content: OpenAIContentPart[] = [];
  parts.forEach((part, position) => {
    const path = formatPath(["messages", index, "content", partIndexes?.[position] ?? position]);
    const encoded = encodeContentPart(part, path, context);
    if (encoded !== undefined) content.push(encoded);
  });
  if (content.length === 0 && parts.length === 0 && "content" in extra) return { ...extra, role } as OpenAIMessage;
  return { ...extra, role, content };
}

/**
 * A user message in block order: each tool result a `tool` message, each run of other parts a `user`
 * message. Images inside tool results move to a user message right after (tool messages hold text only).
 * With the strict rule, every tool message goes first and the move is reported.
 */
function userToOpenAI(
  message: Message,
  index: number,
  options: OpenAIEncodeOptions,
  context: EncodeContext,
): OpenAIMessage[] {
  type Segment =
    | { kind: "tool"; part: ToolResultPart; partIndex: number }
    | { kind: "user"; parts: Part[]; partIndexes: number[] };
  const segments: Segment[] = [];
  message.parts.forEach((part, partIndex) => {
    if (part.type === "tool_result") {
      segments.push({ kind: "tool", part, partIndex });
      return;
    }
    const last = segments[segments.length - 1];
    if (last?.kind === "user") {
      last.parts.push(part);
      last.partIndexes.push(partIndex);
    } else segments.push({ kind: "user", parts: [part], partIndexes: [partIndex] });
  });
  if (options.compat?.strictToolMessageOrder) {
    const tools = segments.filter((segment) => segment.kind === "tool");
    const firstUser = segments.findIndex((segment) => segment.kind === "user");
    if (tools.length > 0 && firstUser !== -1 && firstUser < segments.indexOf(tools[tools.length - 1]!)) {
      context.lossy.push({
        code: "tool-messages-moved-first",
        message:
          "the upstream requires tool messages right after the assistant's tool_calls; user content was moved after them",
        path: formatPath(["messages", index]),
      });
      segments.sort((a, b) => (a.kind === b.kind ? 0 : a.kind === "tool" ? -1 : 1));
    }
  }
  const out: OpenAIMessage[] = [];
  let movedImages: { parts: Part[]; partIndexes: number[] } | undefined;
  const flushImages = () => {
    if (movedImages === undefined) return;
    out.push(
      contentMessage({ role: "user", parts: [] }, "user", movedImages.parts, index, context, movedImages.partIndexes),
    );
    movedImages = undefined;
  };
  for (const segment of segments) {
    if (segment.kind === "user") {
      const parts = movedImages ? [...movedImages.parts, ...segment.parts] : segment.parts;
      const partIndexes = movedImages ? [...movedImages.partIndexes, ...segment.partIndexes] : segment.partIndexes;
      const shorthand = movedImages === undefined ? message : { ...message, textShorthand: false };
      movedImages = undefined;
      out.push(contentMessage(shorthand, "user", parts, index, context, partIndexes));
      continue;
    }
    const { message: tool, images } = toolResultToOpenAI(segment.part, index, segment.partIndex, context);
    out.push(tool);
    if (images.length > 0) {
      movedImages ??= { parts: [], partIndexes: [] };
      for (const image of images) {
        movedImages.parts.push(image);
        movedImages.partIndexes.push(segment.partIndex);
      }
      context.lossy.push({
        code: "tool-result-image-moved",
        message:
          "tool messages hold text only: the result's images were moved to a user message after the tool messages",
        path: formatPath(["messages", index, "content", segment.partIndex]),
      });
    }
  }
  flushImages();
  return out;
}

function toolResultToOpenAI(
  part: ToolResultPart,
  index: number,
  partIndex: number,
  context: EncodeContext,
): { message: OpenAIMessage; images: Part[] } {
  const path = formatPath(["messages", index, "content", partIndex]);
  const extra = openaiFieldsOf(part.extra, "message", path, context) ?? {};
  const images: Part[] = [];
  if (part.isError) reportToolError(context, path);
  if (typeof part.content === "string")
    return { message: { ...extra, role: "tool", tool_call_id: part.toolCallId, content: part.content }, images };
  const content: OpenAIContentPart[] = [];
  part.content.forEach((item, itemIndex) => {
    if (item.type === "image") {
      images.push(item);
      return;
    }
    const encoded = encodeContentPart(item, `${path}.content[${itemIndex}]`, context);
    if (encoded !== undefined) content.push(encoded);
  });
  return { message: { ...extra, role: "tool", tool_call_id: part.toolCallId, content }, images };
}

function reportToolError(context: EncodeContext, path: string): void {
  context.lossy.push({
    code: "tool-error-flag-dropped",
    message: "OpenAI tool messages have no error flag; the result text is sent as is",
    path,
  });
}
