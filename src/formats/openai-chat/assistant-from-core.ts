import {
  assertNever,
  decodeOriginSignature,
  formatPath,
  geminiSignature,
  isOriginSignature,
  type Message,
  type ReasoningField,
  type ReasoningOrigin,
  type ThinkingPart,
} from "../../core/index.js";
import type { ReasoningMode } from "./compat.js";
import { type EncodeContext, encodeContentPart, openaiFieldsOf, reportOnce } from "./encode-context.js";
import { sealedDetail } from "./sealed-reasoning.js";
import { placeSignatures, withThoughtSignature } from "./thought-signatures.js";
import type { OpenAIContentPart, OpenAIMessage, OpenAIReasoningDetail, OpenAIToolCall } from "./wire-types.js";

type SingleField = "reasoning_content" | "reasoning";

/**
 * One core assistant message -> one OpenAI assistant message. Thinking goes where it came from when it is
 * bound to this provider (`origin.provider === provider`, with a field), else where `mode` says; text and
 * inline `<think>` keep block order in `content`; tool calls follow in order. Gemini's thought signatures go in
 * `extra_content` on the call, or the message, they rode on (`thought-signatures.ts`).
 */
export function assistantToOpenAI(
  message: Message,
  index: number,
  mode: ReasoningMode,
  context: EncodeContext,
  bindToProvider: boolean,
): OpenAIMessage {
  const pieces: OpenAIContentPart[] = [];
  let arrayContent = false;
  const fields: Record<SingleField, string[]> = { reasoning_content: [], reasoning: [] };
  const lastFieldPosition: Partial<Record<SingleField, number>> = {};
  let interleaved = false;
  const details: OpenAIReasoningDetail[] = [];
  let detailsSeen = false;
  const toolCalls: OpenAIToolCall[] = [];
  let signatureDropped = false;
  /** A client's answer: reasoning another API sealed, in details that carry its envelope. */
  const sealed: OpenAIReasoningDetail[] = [];
  /** Thinking that goes back in the field it came in (see the `extra` copies below). */
  const boundTexts = new Set<string>();

  const addField = (field: SingleField, text: string, position: number) => {
    const last = lastFieldPosition[field];
    if (last !== undefined && last !== position - 1) interleaved = true;
    fields[field].push(text);
    lastFieldPosition[field] = position;
  };

  const signatures = placeSignatures(message, index, context, bindToProvider ? "provider" : "client");
  message.parts.forEach((part, partIndex) => {
    const path = formatPath(["messages", index, "content", partIndex]);
    switch (part.type) {
      case "text":
        // a text part's fields have no place in a string content; another API's are reported
        openaiFieldsOf(part.extra, "element", path, context);
        pieces.push({ type: "text", text: part.text });
        break;
      case "thinking": {
        // placed in `extra_content` (above)
        if (geminiSignature(part) !== undefined) break;
        const origin = originOf(part);
        const bound =
          bindToProvider &&
          origin?.format === "openai" &&
          isChatField(origin.field) &&
          (origin.provider === context.provider || clientFieldAsItCame(origin, context));
        // a signature of Anthropic's, or of another Anthropic-format provider's in its envelope
        if (
          (part.signature !== undefined && part.signature !== "" && !isOriginSignature(part.signature)) ||
          origin?.signature !== undefined
        )
          signatureDropped = true;
        const detail = bindToProvider || mode === "drop" ? undefined : sealedDetail(part, sealed.length);
        if (detail !== undefined) sealed.push(detail);
        else if (origin?.format === "responses" && origin.sealed !== undefined)
          reportOnce(
            context,
            "reasoning-sealed-dropped",
            "encrypted reasoning goes back only to the Responses provider that made it; its text was sent instead",
            path,
          );
        const target = bound ? (origin!.field as ReasoningMode | "content-parts") : mode;
        if (bound) boundTexts.add(part.thinking);
        else if (bindToProvider) reportFieldChange(origin, target, path, context);
        const originDetails = bound || mode === "reasoning_details" ? detailsOf(part) : undefined;
        if (originDetails === undefined && target !== "drop" && (detailsOf(part)?.length ?? 0) > 0) {
          context.lossy.push({
            code: "reasoning-details-dropped",
            message: "the provider's reasoning_details (signatures, encrypted reasoning) go back only to that provider",
            path,
          });
        }
        // Signed thinking whose text its maker left out (Anthropic's `display: "omitted"`) holds nothing to read here:
        // written, it would be an empty `<think></think>` or reasoning field.
        if (part.thinking === "" && !bound && target !== "drop") {
          context.lossy.push({
            code: "thinking-dropped",
            message: "thinking with no text (its display omitted): only its maker could read it; not sent",
            path,
          });
          break;
        }
        switch (target) {
          case "think-tags":
            pieces.push({ type: "text", text: `<think>${part.thinking}</think>` });
            break;
          case "content-parts":
            arrayContent = true;
            pieces.push({ type: "thinking", thinking: [{ type: "text", text: part.thinking }] });
            break;
          case "reasoning_content":
          case "reasoning":
            addField(target, part.thinking, partIndex);
            if (originDetails !== undefined) {
              details.push(...(originDetails as OpenAIReasoningDetail[]));
              detailsSeen = true;
            }
            break;
          case "reasoning_details":
            detailsSeen = true;
            if (originDetails !== undefined) details.push(...(originDetails as OpenAIReasoningDetail[]));
            else details.push({ type: "reasoning.text", text: part.thinking });
            break;
          case "drop":
            context.lossy.push({ code: "thinking-dropped", message: "reasoning mode 'drop': thinking not sent", path });
            break;
          default:
            assertNever(target, "reasoning target");
        }
        break;
      }
      case "redacted_thinking":
        context.lossy.push({
          code: "redacted-thinking-dropped",
          message: "an OpenAI-compatible API cannot take redacted thinking",
          path,
        });
        break;
      case "tool_call": {
        const { type: wireType, ...extra } = openaiFieldsOf(part.extra, "element", path, context) ?? {};
        const argumentsText = part.rawInput ?? JSON.stringify(part.input ?? {});
        toolCalls.push({
          id: part.id,
          type: (typeof wireType === "string" ? wireType : "function") as "function",
          function: { name: part.name, arguments: argumentsText },
          ...extra,
        });
        break;
      }
      case "image":
      case "document":
      case "opaque": {
        const encoded = encodeContentPart(part, path, context);
        if (encoded !== undefined) {
          arrayContent = true;
          pieces.push(encoded);
        }
        break;
      }
      case "tool_result":
        context.lossy.push({
          code: "misplaced-tool-result-dropped",
          message: "a tool result inside an assistant message cannot be sent",
          path,
        });
        break;
      default:
        assertNever(part, "part");
    }
  });

  const { role: _role, ...extra } =
    openaiFieldsOf(message.extra, "message", formatPath(["messages", index]), context) ?? {};
  // A reasoning field in `extra` is the copy of a thinking part a client sent in both fields (qwen-code sends
  // `reasoning_content` and `reasoning` alike): it goes along only beside that part sent back to its own field,
  // as it came; sent anywhere else, the upstream would get the reasoning twice.
  for (const field of ["reasoning_content", "reasoning"] as const) {
    const copy = extra[field];
    if (typeof copy === "string" && !boundTexts.has(copy)) delete extra[field];
  }
  const out: OpenAIMessage = { ...extra, role: "assistant" };
  if (pieces.length > 0) {
    if (arrayContent) out.content = pieces;
    else out.content = pieces.map((piece) => (piece.type === "text" ? (piece.text as string) : "")).join("");
  } else if (toolCalls.length === 0 && !("content" in out)) {
    out.content = "";
  }
  for (const field of ["reasoning_content", "reasoning"] as const) {
    const texts = fields[field];
    if (texts.length > 0) out[field] = texts.join(texts.length > 1 ? "\n\n" : "");
  }
  if (detailsSeen || sealed.length > 0) out.reasoning_details = [...details, ...sealed];
  if (interleaved) {
    context.lossy.push({
      code: "reasoning-interleaving-flattened",
      message: "thinking blocks separated by text or tool calls were joined into one reasoning field",
      path: formatPath(["messages", index]),
    });
  }
  if (signatureDropped && !context.reported.has("thinking-signature-dropped")) {
    context.reported.add("thinking-signature-dropped");
    context.lossy.push({
      code: "thinking-signature-dropped",
      message: "thinking signatures cannot be sent to an OpenAI-compatible API",
    });
  }
  if (signatures !== undefined) {
    for (const call of toolCalls) {
      const signature = signatures.calls.get(call.id);
      if (signature === undefined) continue;
      call.extra_content = withThoughtSignature(call.extra_content, signatures.key, signature);
      signatures.calls.delete(call.id);
    }
    if (signatures.calls.size > 0)
      context.lossy.push({
        code: "thought-signature-dropped",
        message: "a thought signature whose call is not in its message was left out",
        path: formatPath(["messages", index]),
      });
    if (signatures.message !== undefined)
      out.extra_content = withThoughtSignature(out.extra_content, signatures.key, signatures.message);
  }
  if (toolCalls.length > 0) out.tool_calls = toolCalls;
  return out;
}

/** The fields of a Chat Completions message reasoning can sit in (other formats' fields are not these). */
const CHAT_FIELDS: ReadonlySet<string> = new Set([
  "reasoning_content",
  "reasoning",
  "reasoning_details",
  "think-tags",
  "content-parts",
]);

/**
 * A client's own `reasoning_content` or `reasoning` (what an upstream of no known preset sent, echoed without an
 * envelope naming it) goes back in that field when no preset or setting chose the mode: the field it came in is the
 * one the server answered in.
 */
function clientFieldAsItCame(origin: ReasoningOrigin, context: EncodeContext): boolean {
  return (
    context.reasoningAsItCame === true &&
    origin.provider === undefined &&
    (origin.field === "reasoning_content" || origin.field === "reasoning")
  );
}

function isChatField(field: ReasoningField | undefined): boolean {
  return field !== undefined && CHAT_FIELDS.has(field);
}

/**
 * Reasoning that came in an OpenAI-compatible field (a client's `reasoning_content`, another provider's
 * `reasoning`) and goes to this upstream in another form, as its reasoning mode says: said once per request.
 */
function reportFieldChange(
  origin: ReasoningOrigin | undefined,
  target: ReasoningMode | "content-parts",
  path: string,
  context: EncodeContext,
): void {
  const field = origin?.format === "openai" ? origin.field : undefined;
  if (field === undefined || field === target || target === "drop") return;
  const form = target === "think-tags" ? "inline <think> tags" : target;
  reportOnce(
    context,
    "reasoning-field-changed",
    `reasoning that came in ${field === "think-tags" ? "inline <think> tags" : field} is sent as ${form}, the upstream's reasoning mode`,
    path,
  );
}

function originOf(part: ThinkingPart): ReasoningOrigin | undefined {
  return part.origin ?? decodeOriginSignature(part.signature);
}

/** Details may ride in the signature envelope only (streamed answers set them there, at block end). */
export function detailsOf(part: ThinkingPart): unknown[] | undefined {
  return part.origin?.details ?? decodeOriginSignature(part.signature)?.details;
}
