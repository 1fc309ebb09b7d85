import {
  assertNever,
  type DocumentPart,
  type Fields,
  type ImagePart,
  type OpaquePart,
  type Part,
  type TextPart,
  type ToolResultContentPart,
  withFields,
} from "../../core/index.js";
import type { OpenAIContentPart } from "./wire-types.js";

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

/** One OpenAI content part -> a core part; what Parley does not model stays an opaque OpenAI block. */
export function contentPartToCore(part: OpenAIContentPart): Part {
  const { type, ...rest } = part;
  if (type === "text" && typeof rest.text === "string") {
    const { text, ...extra } = rest;
    return withExtra<TextPart>({ type: "text", text }, extra);
  }
  if (type === "image_url" && isRecord(rest.image_url) && typeof rest.image_url.url === "string") {
    const { image_url, ...extra } = rest;
    const { url, ...imageExtra } = image_url as { url: string; [key: string]: unknown };
    if (Object.keys(imageExtra).length > 0) extra.image_url = imageExtra;
    const match = DATA_URL.exec(url);
    const image: ImagePart = match
      ? { type: "image", source: { type: "base64", mediaType: match[1]!, data: match[2]! } }
      : { type: "image", source: { type: "url", url } };
    return withExtra(image, extra);
  }
  if (type === "file" && isRecord(rest.file) && typeof rest.file.file_data === "string") {
    const { file, ...extra } = rest;
    const { file_data, ...fileExtra } = file as { file_data: string; [key: string]: unknown };
    const match = DATA_URL.exec(file_data);
    if (match) {
      if (Object.keys(fileExtra).length > 0) extra.file = fileExtra;
      return withExtra<DocumentPart>(
        { type: "document", source: { type: "base64", mediaType: match[1]!, data: match[2]! } },
        extra,
      );
    }
  }
  return opaque(part);
}

/** Tool message content: the parts a tool result may hold; anything else is opaque. */
export function toolContentPartToCore(part: OpenAIContentPart): ToolResultContentPart {
  const converted = contentPartToCore(part);
  switch (converted.type) {
    case "text":
    case "image":
    case "document":
    case "opaque":
      return converted;
    case "thinking":
    case "redacted_thinking":
    case "tool_call":
    case "tool_result":
      return opaque(part);
    default:
      return assertNever(converted, "part");
  }
}

function opaque(block: unknown): OpaquePart {
  return { type: "opaque", format: "openai", block };
}

/** `value` with the wire object's unmapped fields recorded as OpenAI's. */
export function withExtra<T extends object>(value: T, fields: Fields): T {
  return withFields(value, "openai", fields);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
