import { assertNever, geminiSignature, type Part } from "../../core/index.js";
import type { BodyView, ViewedBody, ViewedMessage, ViewedPart } from "../adapter.js";
import { contentsToCore } from "./contents-to-core.js";
import { clientReader, geminiResponseToCore } from "./to-core.js";
import { isObject } from "./validate-request.js";
import type { GeminiContent, GeminiPart, GeminiResponse } from "./wire-types.js";

/**
 * Gemini bodies for a person: each content with the parts it reads as, each at the wire part it came from (a
 * signature at the part it rode on). `systemInstruction` is the request-level system prompt. Signatures stay sealed:
 * a signature part shows its length only.
 */
export const geminiView: BodyView = {
  request(body) {
    if (!isObject(body) || !Array.isArray(body.contents) || !body.contents.every(isContent)) return undefined;
    const contents = body.contents as GeminiContent[];
    let read: ReturnType<typeof contentsToCore>;
    try {
      read = contentsToCore(contents, clientReader, "contents");
    } catch {
      return undefined;
    }
    const messages: ViewedMessage[] = [];
    const system = body.systemInstruction;
    if (isContent(system)) {
      const parts = system.parts.flatMap((part, index): ViewedPart[] =>
        typeof part.text === "string"
          ? [{ part: { type: "text", text: part.text }, path: `systemInstruction.parts[${index}]` }]
          : [],
      );
      messages.push({ role: "system", path: "systemInstruction", parts });
    }
    read.messages.forEach((message, index) => {
      const path = `contents[${index}]`;
      const parts = placed(message.parts, contents[index]!.parts, path).map((viewed, partIndex) => ({
        ...viewed,
        at: [index, partIndex] as const,
      }));
      messages.push({ role: typeof contents[index]!.role === "string" ? contents[index]!.role! : "user", path, parts });
    });
    const view: ViewedBody = { messages };
    if (Array.isArray(body.tools)) {
      view.tools = body.tools.flatMap((tool) =>
        isObject(tool) && Array.isArray(tool.functionDeclarations)
          ? tool.functionDeclarations.map((declaration) => (isObject(declaration) ? String(declaration.name) : "?"))
          : [],
      );
    }
    return view;
  },
  response(body) {
    if (!isObject(body) || !Array.isArray(body.candidates)) return undefined;
    const content = (body.candidates[0] as { content?: unknown } | undefined)?.content;
    if (!isContent(content)) return undefined;
    try {
      const answer = geminiResponseToCore(body as GeminiResponse).value;
      const parts = placed(answer.message.parts, content.parts, "candidates[0].content");
      const view: ViewedBody = { messages: [{ role: "model", path: "candidates[0].content", parts }] };
      if (typeof body.modelVersion === "string") view.model = body.modelVersion;
      return view;
    } catch {
      return undefined;
    }
  },
};

function isContent(value: unknown): value is GeminiContent {
  return isObject(value) && Array.isArray(value.parts) && value.parts.every(isObject);
}

/** Each part at the wire part it came from, found in order by kind; signatures sealed. */
function placed(parts: readonly Part[], wire: readonly GeminiPart[], path: string): ViewedPart[] {
  let cursor = 0;
  const find = (test: (part: GeminiPart) => boolean): number => {
    for (let index = cursor; index < wire.length; index++) {
      if (test(wire[index]!)) {
        cursor = index;
        return index;
      }
    }
    return Math.min(cursor, Math.max(0, wire.length - 1));
  };
  return parts.map((part) => {
    const signature = geminiSignature(part);
    if (signature !== undefined) {
      const call = signature.id;
      const index =
        call !== undefined && call !== ""
          ? find((wirePart) => wirePart.functionCall?.id === call || wirePart.thoughtSignature !== undefined)
          : find((wirePart) => wirePart.thoughtSignature !== undefined);
      const sealed: Part = {
        type: "thinking",
        thinking: "",
        signature: `[sealed, ${signature.sealed.length} characters]`,
      };
      return { part: sealed, path: `${path}.parts[${index}].thoughtSignature` };
    }
    let index: number;
    switch (part.type) {
      case "text":
        index = find(
          (wirePart) => typeof wirePart.text === "string" && wirePart.thought !== true && wirePart.text !== "",
        );
        break;
      case "thinking":
        index = find((wirePart) => wirePart.thought === true || wirePart.thoughtSignature !== undefined);
        break;
      case "tool_call":
        index = find((wirePart) => wirePart.functionCall !== undefined);
        break;
      case "tool_result":
        index = find((wirePart) => wirePart.functionResponse !== undefined);
        break;
      case "redacted_thinking":
      case "image":
      case "document":
      case "opaque":
        index = find(() => true);
        break;
      default:
        return assertNever(part, "part");
    }
    let shown: Part = part;
    if (part.type === "thinking") {
      const { origin: _origin, ...rest } = part;
      shown =
        part.signature === undefined ? rest : { ...rest, signature: `[sealed, ${part.signature.length} characters]` };
    }
    const viewed: ViewedPart = { part: shown, path: `${path}.parts[${index}]` };
    cursor = index + 1;
    return viewed;
  });
}
