import {
  assertNever,
  type DroppedField,
  type Extra,
  fieldsFor,
  geminiSignature,
  type LossyEntry,
  type MediaSource,
  type Message,
  NEXT_TEXT,
  type Part,
  recordedOrigin,
  SKIP_SIGNATURE,
  type ToolResultContentPart,
  type ToolResultPart,
  takesSignature,
} from "../../core/index.js";
import { isThoughtSummary, type Rider, riderSignature } from "./signatures.js";
import type { GeminiContent, GeminiPart } from "./wire-types.js";

/**
 * Core messages to Gemini contents, for one of two readers:
 *
 * - a provider (`provider`): its own signatures back on exactly the parts they rode on; a thought summary it showed
 *   back as a thought; any other thinking as text (`think-tags`) or left out (`drop`), reported, never as a
 *   signature; and Google's skip value on the first function call of a model content that has no signature;
 * - a client (`client`): thinking shown as thought parts, and everything a maker must get back riding in the
 *   signature of a part the client keeps (see `signatures.ts`).
 */
export type WriterTarget =
  | { kind: "provider"; provider?: string; reasoning: "think-tags" | "drop" }
  | { kind: "client" };

export class ContentsWriter {
  readonly lossy: LossyEntry[] = [];
  /** Calls seen so far, by id: a function response names its call's function. */
  private readonly names = new Map<string, string>();

  constructor(private readonly target: WriterTarget) {}

  /**
   * Messages as contents; system messages in place (Gemini has none in `contents`) become user text, reported.
   * `first` is the index of the first message in the history the lossy paths name.
   */
  contents(messages: readonly Message[], first = 0): GeminiContent[] {
    const out: GeminiContent[] = [];
    messages.forEach((message, offset) => {
      const index = first + offset;
      const path = `messages[${index}]`;
      let content: GeminiContent;
      if (message.role === "assistant") content = { role: "model", parts: this.modelParts(message, index) };
      else {
        if (message.role === "system")
          this.lossy.push({
            code: "system-message-as-user",
            message: "Gemini has no system messages among its contents: this one went as user text",
            path,
          });
        content = { role: "user", parts: this.userParts(message, index) };
      }
      const own = this.fields(message.extra, path);
      if (own !== undefined) Object.assign(content, withoutForm(own));
      if (message.role === "user" && message.extra?.gemini?.$role === "function") content.role = "function";
      if (content.parts.length === 0) {
        this.lossy.push({
          code: "empty-message-dropped",
          message: "a message with nothing Gemini takes was left out",
          path,
        });
        return;
      }
      out.push(content);
    });
    return out;
  }

  userParts(message: Message, index: number): GeminiPart[] {
    return message.parts.flatMap((part, partIndex) => {
      const path = `messages[${index}].content[${partIndex}]`;
      switch (part.type) {
        case "tool_result":
          return [this.functionResponse(part, path)];
        case "thinking":
          return part.thinking === "" ? [] : [{ text: part.thinking }];
        case "redacted_thinking":
          this.lossy.push({
            code: "redacted-thinking-dropped",
            message: "redacted thinking has no place in Gemini",
            path,
          });
          return [];
        case "tool_call":
          this.names.set(part.id, part.name);
          return [{ functionCall: { id: part.id, name: part.name, args: argsOf(part.input) } }];
        case "text":
        case "image":
        case "document":
        case "opaque":
          return this.dataPart(part, path);
        default:
          return assertNever(part, "part");
      }
    });
  }

  modelParts(message: Message, index: number): GeminiPart[] {
    return this.target.kind === "client"
      ? this.clientModelParts(message, index)
      : this.providerModelParts(message, index);
  }

  private providerModelParts(message: Message, index: number): GeminiPart[] {
    const target = this.target as Extract<WriterTarget, { kind: "provider" }>;
    const out: GeminiPart[] = [];
    const forCall = new Map<string, string>();
    let lastText: GeminiPart | undefined;
    let forNext: string | undefined;
    message.parts.forEach((part, partIndex) => {
      const path = `messages[${index}].content[${partIndex}]`;
      const signature = geminiSignature(part);
      if (signature !== undefined) {
        if (!takesSignature(signature, target.provider)) {
          this.lossy.push({
            code: "thought-signature-dropped",
            message: `a thought signature of provider '${signature.provider}' cannot go to ${target.provider === undefined ? "this provider" : `provider '${target.provider}'`}`,
            path,
          });
          return;
        }
        if (signature.id === "") out.push({ text: "", thoughtSignature: signature.sealed });
        else if (signature.id !== undefined) forCall.set(signature.id, signature.sealed);
        else if (signature.field === NEXT_TEXT) forNext = signature.sealed;
        else if (lastText !== undefined && lastText.thoughtSignature === undefined)
          lastText.thoughtSignature = signature.sealed;
        else forNext = signature.sealed;
        return;
      }
      let written: GeminiPart | undefined;
      switch (part.type) {
        case "thinking": {
          const origin = recordedOrigin(part);
          if (isThoughtSummary(part) && origin !== undefined && takesSignature(origin, target.provider)) {
            written = { text: part.thinking, thought: true };
          } else if (target.reasoning === "think-tags" && part.thinking.trim() !== "") {
            written = { text: `<think>${part.thinking}</think>` };
            this.lossy.push({
              code: "thinking-to-text",
              message: "thinking Gemini did not make cannot go back as a thought: sent as text in <think> tags",
              path,
            });
          } else {
            this.lossy.push({ code: "thinking-dropped", message: "thinking Gemini did not make was left out", path });
          }
          break;
        }
        case "redacted_thinking":
          this.lossy.push({
            code: "redacted-thinking-dropped",
            message: "redacted thinking has no place in Gemini",
            path,
          });
          break;
        case "text":
          written = { text: part.text, ...withoutForm(this.fields(part.extra, path)) };
          lastText = written;
          break;
        case "tool_call": {
          this.names.set(part.id, part.name);
          written = { functionCall: { id: part.id, name: part.name, args: argsOf(part.input) } };
          Object.assign(written, withoutForm(this.fields(part.extra, path)));
          const sealed = forCall.get(part.id);
          if (sealed !== undefined) written.thoughtSignature = sealed;
          this.rawArguments(part, path);
          break;
        }
        case "tool_result":
        case "image":
        case "document":
        case "opaque":
          [written] = this.dataPart(part, path);
          break;
        default:
          assertNever(part, "part");
      }
      if (written === undefined) return;
      if (forNext !== undefined && written.thoughtSignature === undefined) {
        written.thoughtSignature = forNext;
        forNext = undefined;
      }
      out.push(written);
    });
    if (forNext !== undefined) out.push({ text: "", thoughtSignature: forNext });
    const firstCall = out.find((part) => part.functionCall !== undefined);
    if (firstCall !== undefined && firstCall.thoughtSignature === undefined) {
      firstCall.thoughtSignature = SKIP_SIGNATURE;
      this.lossy.push({
        code: "thought-signature-skipped",
        message: "a model turn Gemini did not sign: its first function call carries Google's documented skip value",
        path: `messages[${index}]`,
      });
    }
    return out;
  }

  /** Kept parts, thoughts shown, and every rider in the signature of a kept part (see `signatures.ts`). */
  private clientModelParts(message: Message, index: number): GeminiPart[] {
    const out: GeminiPart[] = [];
    const kept: GeminiPart[] = [];
    const riders: Array<Rider & { carrier?: GeminiPart }> = [];
    for (const [partIndex, part] of message.parts.entries()) {
      const path = `messages[${index}].content[${partIndex}]`;
      if (part.type === "thinking" || part.type === "redacted_thinking") {
        if (part.type === "thinking" && part.thinking !== "") out.push({ text: part.thinking, thought: true });
        if (isThoughtSummary(part)) continue;
        const rider: Rider & { carrier?: GeminiPart } = { k: kept.length, part };
        const signature = geminiSignature(part);
        // A signature of a text part, or of a part of its own, goes on a part of its own at its place.
        if (signature !== undefined && (signature.id === "" || signature.id === undefined)) {
          const own: GeminiPart = { text: "" };
          out.push(own);
          rider.carrier = own;
        }
        riders.push(rider);
        continue;
      }
      let written: GeminiPart | undefined;
      if (part.type === "text") written = { text: part.text, ...withoutForm(this.fields(part.extra, path)) };
      else if (part.type === "tool_call") {
        this.names.set(part.id, part.name);
        written = { functionCall: { id: part.id, name: part.name, args: argsOf(part.input) } };
        this.rawArguments(part, path);
      } else [written] = this.dataPart(part, path);
      if (written === undefined) continue;
      out.push(written);
      kept.push(written);
    }
    for (const rider of riders) {
      if (rider.carrier !== undefined) continue;
      const signature = geminiSignature(rider.part);
      const call =
        signature?.id === undefined ? undefined : kept.find((part) => part.functionCall?.id === signature.id);
      let carrier =
        call ??
        kept.find((part) => part.functionCall !== undefined) ??
        kept.findLast((part) => part.text !== undefined);
      if (carrier === undefined) {
        carrier = { text: "" };
        out.push(carrier);
      }
      rider.carrier = carrier;
    }
    const byCarrier = new Map<GeminiPart, Rider[]>();
    for (const rider of riders) {
      const list = byCarrier.get(rider.carrier!) ?? [];
      list.push({ k: rider.k, part: rider.part });
      byCarrier.set(rider.carrier!, list);
    }
    for (const [carrier, list] of byCarrier) carrier.thoughtSignature = riderSignature(list);
    return out;
  }

  private functionResponse(part: ToolResultPart, path: string): GeminiPart {
    const own = part.extra?.gemini;
    const name = this.names.get(part.toolCallId) ?? (typeof own?.$name === "string" ? own.$name : undefined);
    if (name === undefined)
      this.lossy.push({
        code: "function-name-unknown",
        message: "a tool result answers no call in the history: named 'unknown'",
        path,
      });
    let response: Record<string, unknown>;
    if (own?.$response !== undefined && typeof own.$response === "object" && own.$response !== null)
      response = own.$response as Record<string, unknown>;
    else {
      const text = resultText(part.content, () =>
        this.lossy.push({
          code: "tool-result-media-dropped",
          message: "media in a tool result cannot go in a functionResponse",
          path,
        }),
      );
      response = part.isError === true ? { error: text } : { output: text };
    }
    const fields = withoutForm(this.fields(part.extra, path));
    return { functionResponse: { id: part.toolCallId, name: name ?? "unknown", response }, ...fields };
  }

  private dataPart(part: Part, path: string): GeminiPart[] {
    switch (part.type) {
      case "text":
        return [{ text: part.text, ...withoutForm(this.fields(part.extra, path)) }];
      case "image":
      case "document":
        return mediaPart(part.source, part.extra, (entry) => this.lossy.push({ ...entry, path }));
      case "opaque":
        if (part.format === "gemini") return [part.block as GeminiPart];
        this.lossy.push({
          code: "opaque-block-dropped",
          message: `a ${part.format} block Gemini cannot take was left out`,
          path,
        });
        return [];
      case "thinking":
      case "redacted_thinking":
      case "tool_call":
      case "tool_result":
        this.lossy.push({ code: "part-dropped", message: `a ${part.type} part cannot go in this position`, path });
        return [];
      default:
        return assertNever(part, "part");
    }
  }

  private rawArguments(part: Extract<Part, { type: "tool_call" }>, path: string): void {
    if (part.rawInput === undefined) return;
    this.lossy.push({
      code: "tool-arguments-repaired",
      message: `tool call '${part.name}' arguments were not valid JSON; the parsed repair was sent`,
      path,
    });
  }

  /** Gemini's own fields of a value, and a report of any other format's that cannot come. */
  fields(extra: Extra | undefined, path: string): Record<string, unknown> | undefined {
    const { fields, dropped } = fieldsFor(extra, "gemini");
    reportDropped(dropped, path, this.lossy);
    return fields;
  }
}

export function reportDropped(dropped: readonly DroppedField[], path: string, lossy: LossyEntry[]): void {
  if (dropped.length === 0) return;
  lossy.push({
    code: "fields-dropped",
    message: `fields Gemini does not have were left out: ${dropped.map((field) => `${field.from} ${field.key}`).join(", ")}`,
    path,
  });
}

/** A value's fields without the form keys (`$...`), which are Parley's record and no field of the API. */
export function withoutForm(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  if (fields === undefined) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (!key.startsWith("$")) out[key] = value;
  return out;
}

function mediaPart(source: MediaSource, extra: Extra | undefined, report: (entry: LossyEntry) => void): GeminiPart[] {
  switch (source.type) {
    case "base64":
      return [{ inlineData: { mimeType: source.mediaType, data: source.data } }];
    case "text":
      return [{ text: source.data }];
    case "url": {
      const mimeType = extra?.gemini?.$mimeType;
      if (typeof mimeType === "string") return [{ fileData: { mimeType, fileUri: source.url } }];
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(source.url);
      if (data !== null) return [{ inlineData: { mimeType: data[1]!, data: data[2]! } }];
      if (/^https?:\/\//.test(source.url)) return [{ fileData: { fileUri: source.url } }];
      report({ code: "media-dropped", message: "media at a URL Gemini cannot read was left out" });
      return [];
    }
    default:
      return assertNever(source, "media source");
  }
}

/** A call's arguments: Gemini's `args` is an object. */
function argsOf(input: unknown): Record<string, unknown> {
  if (input !== null && typeof input === "object" && !Array.isArray(input)) return input as Record<string, unknown>;
  return input === undefined ? {} : { value: input };
}

function resultText(content: string | ToolResultContentPart[], dropped: () => void): string {
  if (typeof content === "string") return content;
  const texts: string[] = [];
  let lost = false;
  for (const part of content) {
    if (part.type === "text") texts.push(part.text);
    else lost = true;
  }
  if (lost) dropped();
  return texts.join("\n");
}
