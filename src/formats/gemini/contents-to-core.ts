import {
  type DocumentPart,
  type ImagePart,
  type LossyEntry,
  type MediaSource,
  type Message,
  NEXT_TEXT,
  type Part,
  type ReasoningOrigin,
  recordedOrigin,
  type SignatureCarrier,
  signaturePart,
  type ThinkingPart,
  type ToolResultPart,
  withFields,
} from "../../core/index.js";
import { type Rider, readClientSignature } from "./signatures.js";
import type { GeminiContent, GeminiPart } from "./wire-types.js";

/**
 * Gemini contents to core messages, in order. `user` (and the older `function`) contents are user messages, `model`
 * contents assistant messages. Each signature becomes the thinking part that carries it (see `signatures.ts`); what
 * a Gemini client sends back in a kept part's signature (Parley's envelopes, bundles) comes back as the parts it was,
 * each at its place.
 */
export interface ContentsReader {
  /** Whose contents these are: a provider's answer (its origins recorded), or a client's request. */
  from: "client" | "provider";
  provider?: string;
  model?: string;
  /** The id of a call that has none: the nth call of content `content`. */
  callId(content: number, ordinal: number): string;
}

/** What a reader keeps between contents: the calls of the last model content, for responses without ids. */
export class CallPairing {
  private pending: Array<{ id: string; name: string }> = [];

  calls(calls: Array<{ id: string; name: string }>): void {
    this.pending = calls;
  }

  /** The id a response without one answers: the first open call of its name, else the first open call. */
  answer(name: string, fallback: string): string {
    let index = this.pending.findIndex((call) => call.name === name);
    if (index === -1) index = 0;
    const [call] = this.pending.splice(index, 1);
    return call?.id ?? fallback;
  }
}

export interface ReadContents {
  messages: Message[];
  lossy: LossyEntry[];
}

export function contentsToCore(contents: readonly GeminiContent[], reader: ContentsReader, path: string): ReadContents {
  const pairing = new CallPairing();
  const lossy: LossyEntry[] = [];
  const messages = contents.map((content, index) =>
    contentToCore(content, index, reader, pairing, lossy, `${path}[${index}]`),
  );
  return { messages, lossy };
}

export function contentToCore(
  content: GeminiContent,
  index: number,
  reader: ContentsReader,
  pairing: CallPairing,
  lossy: LossyEntry[],
  path: string,
): Message {
  if (content.role === "model") {
    const parts = modelParts(content.parts, index, reader, lossy, path);
    pairing.calls(parts.flatMap((part) => (part.type === "tool_call" ? [{ id: part.id, name: part.name }] : [])));
    return withFields({ role: "assistant", parts }, "gemini", contentFields(content));
  }
  const parts = content.parts.flatMap((part, partIndex): Part[] => {
    const response = part.functionResponse;
    if (response !== undefined) return [toolResult(part, pairing.answer(response.name, `call_${index}_${partIndex}`))];
    if (isTextPart(part)) return part.text === "" ? [] : [textPart(part)];
    return [dataPart(part)];
  });
  const message: Message = { role: "user", parts };
  if (content.role === "function") withFields(message, "gemini", { $role: "function" });
  return withFields(message, "gemini", contentFields(content));
}

/** A model content's parts: kept parts in order, each signature and thought at its place. */
function modelParts(
  wire: readonly GeminiPart[],
  contentIndex: number,
  reader: ContentsReader,
  lossy: LossyEntry[],
  path: string,
): Part[] {
  const groups: Array<{ before: Part[]; part: Part; after: Part[] }> = [];
  const floating: Rider[] = [];
  const shown: ThinkingPart[] = [];
  let bundled = false;
  let calls = 0;
  const signature = (value: string, carrier: SignatureCarrier): { riders: Rider[]; part?: ThinkingPart } => {
    if (reader.from === "provider") return { riders: [], part: signaturePart(value, reader.provider, carrier) };
    const read = readClientSignature(value, carrier);
    if (read.kind === "skip") return { riders: [] };
    if (read.kind === "bundle") {
      bundled = true;
      return { riders: read.riders };
    }
    return { riders: [], part: read.part };
  };
  wire.forEach((part, partIndex) => {
    const k = groups.length;
    if (part.thought === true && isTextPart(part)) {
      const thought: ThinkingPart = { type: "thinking", thinking: part.text ?? "", origin: thoughtOrigin(reader) };
      if (thought.thinking !== "") {
        floating.push({ k, part: thought });
        if (reader.from === "client") shown.push(thought);
      }
      if (part.thoughtSignature !== undefined) {
        const read = signature(part.thoughtSignature, "text");
        floating.push(...read.riders);
        if (read.part !== undefined) floating.push({ k, part: read.part });
      }
      return;
    }
    if (isTextPart(part)) {
      const text = part.text ?? "";
      if (text === "") {
        if (part.thoughtSignature === undefined) return;
        const read = signature(part.thoughtSignature, "own-part");
        floating.push(...read.riders);
        if (read.part !== undefined) floating.push({ k, part: read.part });
        return;
      }
      const group = { before: [] as Part[], part: textPart(part) as Part, after: [] as Part[] };
      groups.push(group);
      if (part.thoughtSignature !== undefined) {
        // Gemini's own signature stands before its text (see `signatures.ts`); an envelope says where it goes.
        const read = signature(part.thoughtSignature, "next-text");
        floating.push(...read.riders);
        if (read.part !== undefined) {
          const origin = recordedOrigin(read.part);
          (origin?.field === NEXT_TEXT ? group.before : group.after).push(read.part);
        }
      }
      return;
    }
    const call = part.functionCall;
    if (call !== undefined) {
      const id = typeof call.id === "string" && call.id !== "" ? call.id : reader.callId(contentIndex, calls);
      calls++;
      const fields = { ...rest(call, ["name", "args", "id"]), ...partFields(part, ["functionCall"]) };
      const toolCall: Part = withFields(
        { type: "tool_call", id, name: call.name, input: call.args ?? {} },
        "gemini",
        Object.keys(fields).length === 0 ? undefined : fields,
      );
      const group = { before: [] as Part[], part: toolCall, after: [] as Part[] };
      groups.push(group);
      if (part.thoughtSignature !== undefined) {
        const read = signature(part.thoughtSignature, { call: id });
        floating.push(...read.riders);
        if (read.part !== undefined) group.before.push(read.part);
      }
      return;
    }
    if (part.functionResponse !== undefined) {
      lossy.push({
        code: "gemini-part-misplaced",
        message: "a functionResponse in a model content was kept as an opaque Gemini part",
        path: `${path}.parts[${partIndex}]`,
      });
    }
    groups.push({ before: [], part: dataPart(part), after: [] });
  });
  // Thoughts a Gemini client shows are copies of what rode in a bundle: the bundle is the truth.
  const ridden = new Set(
    floating.flatMap((rider) =>
      rider.part.type === "thinking" && !shown.includes(rider.part) ? [rider.part.thinking] : [],
    ),
  );
  const riders = bundled
    ? floating.filter(
        (rider) => !(shown.includes(rider.part as ThinkingPart) && ridden.has((rider.part as ThinkingPart).thinking)),
      )
    : floating;
  const out: Part[] = [];
  for (let index = 0; index <= groups.length; index++) {
    for (const rider of riders)
      if (rider.k === index || (index === groups.length && rider.k > index)) out.push(rider.part);
    const group = groups[index];
    if (group !== undefined) out.push(...group.before, group.part, ...group.after);
  }
  return out;
}

function thoughtOrigin(reader: ContentsReader): ReasoningOrigin {
  const origin: ReasoningOrigin = { format: "gemini" };
  if (reader.from === "provider") {
    if (reader.provider !== undefined) origin.provider = reader.provider;
    if (reader.model !== undefined) origin.model = reader.model;
  }
  return origin;
}

/** A part whose data is text (a text part, a thought), with nothing else of substance. */
export function isTextPart(part: GeminiPart): boolean {
  return (
    typeof part.text === "string" &&
    part.functionCall === undefined &&
    part.functionResponse === undefined &&
    part.inlineData === undefined &&
    part.fileData === undefined
  );
}

function textPart(part: GeminiPart): Part {
  return withFields({ type: "text", text: part.text ?? "" }, "gemini", partFields(part, ["text"]));
}

/** Media as image or document parts; anything else Parley does not model as an opaque Gemini part. */
function dataPart(part: GeminiPart): Part {
  const inline = part.inlineData;
  if (inline !== undefined) {
    const source: MediaSource = { type: "base64", mediaType: inline.mimeType, data: inline.data };
    return media(source, inline.mimeType, part, "inlineData");
  }
  const file = part.fileData;
  if (file !== undefined) {
    const source: MediaSource = { type: "url", url: file.fileUri };
    const fields = {
      ...partFields(part, ["fileData"]),
      ...(file.mimeType === undefined ? {} : { $mimeType: file.mimeType }),
    };
    const value: ImagePart | DocumentPart = (file.mimeType ?? "").startsWith("image/")
      ? { type: "image", source }
      : { type: "document", source };
    return withFields(value, "gemini", Object.keys(fields).length === 0 ? undefined : fields);
  }
  return { type: "opaque", format: "gemini", block: part };
}

function media(source: MediaSource, mimeType: string, part: GeminiPart, field: string): Part {
  const value: ImagePart | DocumentPart = mimeType.startsWith("image/")
    ? { type: "image", source }
    : { type: "document", source };
  return withFields(value, "gemini", partFields(part, [field]));
}

/**
 * A function response as a tool result: `{output: "..."}` as its text, `{error: "..."}` as an error's text, any other
 * object as its JSON (the object itself kept, so that a Gemini provider gets it back as it came).
 */
function toolResult(part: GeminiPart, id: string): ToolResultPart {
  const response = part.functionResponse!;
  const body = response.response ?? {};
  const keys = Object.keys(body);
  const result: ToolResultPart = { type: "tool_result", toolCallId: id, content: "" };
  if (keys.length === 1 && keys[0] === "output" && typeof body.output === "string") result.content = body.output;
  else if (keys.length === 1 && keys[0] === "error" && typeof body.error === "string") {
    result.content = body.error;
    result.isError = true;
  } else {
    result.content = JSON.stringify(body);
    withFields(result, "gemini", { $response: body });
  }
  const fields = { ...rest(response, ["name", "response", "id"]), ...partFields(part, ["functionResponse"]) };
  return withFields(result, "gemini", { ...result.extra?.gemini, ...fields, $name: response.name });
}

/** A part's fields beside its data (and beside the flags Parley reads), or undefined. */
function partFields(part: GeminiPart, data: readonly string[]): Record<string, unknown> | undefined {
  return rest(part, [...data, "thought", "thoughtSignature"]);
}

function contentFields(content: GeminiContent): Record<string, unknown> | undefined {
  return rest(content as unknown as Record<string, unknown>, ["role", "parts"]);
}

export function rest(object: object, known: readonly string[]): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(object)) {
    if (known.includes(key) || value === undefined) continue;
    out ??= {};
    out[key] = value;
  }
  return out;
}
