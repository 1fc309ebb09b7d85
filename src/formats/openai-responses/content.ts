import type {
  DocumentPart,
  ImagePart,
  LossyEntry,
  MediaSource,
  Part,
  TextPart,
  ToolResultContentPart,
} from "../../core/index.js";
import { assertNever } from "../../core/index.js";
import { utf8ToBase64 } from "../../core/portable.js";
import { keep, kept } from "./extra.js";
import type { ResponsesContentPart } from "./wire-types.js";

/**
 * Content parts (`input_text`, `output_text`, `refusal`, `input_image`, `input_file`) to core parts and back.
 * Fields the core does not name stay in the part's kept fields, so a part comes back as it came.
 */
export function contentPartToCore(part: ResponsesContentPart): ToolResultContentPart {
  switch (part.type) {
    case "input_text":
    case "output_text": {
      const { text, type, ...rest } = part;
      if (typeof text !== "string") break;
      return keep<TextPart>({ type: "text", text }, { ...rest, type: type === "input_text" ? undefined : type });
    }
    case "refusal": {
      const { refusal, type, ...rest } = part;
      if (typeof refusal !== "string") break;
      return keep<TextPart>({ type: "text", text: refusal }, { ...rest, type });
    }
    case "input_image": {
      const { image_url: url, type: _type, ...rest } = part;
      if (typeof url !== "string" || rest.file_id !== undefined) break;
      return keep<ImagePart>({ type: "image", source: sourceFromUrl(url) }, rest);
    }
    case "input_file": {
      const { file_data: data, file_url: url, type: _type, ...rest } = part;
      if (rest.file_id !== undefined) break;
      if (typeof data === "string" && data.startsWith("data:"))
        return keep<DocumentPart>({ type: "document", source: sourceFromUrl(data) }, rest);
      if (typeof url === "string") return keep<DocumentPart>({ type: "document", source: { type: "url", url } }, rest);
      break;
    }
    default:
      break;
  }
  return { type: "opaque", format: "responses", block: part };
}

/** A `data:` URL becomes its bytes and media type; any other URL stays a URL. */
function sourceFromUrl(url: string): MediaSource {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (match) return { type: "base64", mediaType: match[1]!, data: match[2]! };
  return { type: "url", url };
}

function urlFromSource(source: MediaSource): string {
  switch (source.type) {
    case "url":
      return source.url;
    case "base64":
      return `data:${source.mediaType};base64,${source.data}`;
    case "text":
      return `data:${source.mediaType};base64,${utf8ToBase64(source.data)}`;
    default:
      return assertNever(source, "media source");
  }
}

/**
 * A core part as a content part of a message (`assistant` writes `output_text`, any other role `input_text`), or
 * undefined (reported) when no content part can hold it.
 */
export function contentPartFromCore(
  part: Part,
  role: "assistant" | "input",
  path: string,
  lossy: LossyEntry[],
): ResponsesContentPart | undefined {
  const own = kept(part);
  switch (part.type) {
    case "text": {
      // `item` is the message item a text part starts (see items-to-core), not a field of the part.
      if (own.type === "refusal") {
        const { type: _type, item: _item, ...rest } = own;
        return { type: "refusal", refusal: part.text, ...rest };
      }
      const { type, item: _item, ...rest } = own;
      // A part that came as output_text goes back as it came; one from another API gets what OpenAI writes.
      if (type === "output_text") return { type, text: part.text, ...rest };
      if (role === "assistant") return { type: "output_text", text: part.text, annotations: [], ...rest };
      return { type: typeof type === "string" ? type : "input_text", text: part.text, ...rest };
    }
    case "image": {
      // Chat's detail (`image_url.detail`) means the same here.
      const chatDetail = (part.extra?.openai?.image_url as { detail?: unknown } | undefined)?.detail;
      const detail = typeof chatDetail === "string" ? { detail: chatDetail } : {};
      return { type: "input_image", image_url: urlFromSource(part.source), ...detail, ...own };
    }
    case "document": {
      const source = part.source;
      // An Anthropic document's title is the file's name.
      const anthropicTitle = part.extra?.anthropic?.title;
      const title =
        typeof anthropicTitle === "string" && own.filename === undefined ? { filename: anthropicTitle } : {};
      if (source.type === "url") return { type: "input_file", file_url: source.url, ...title, ...own };
      return { type: "input_file", ...title, ...own, file_data: urlFromSource(source) };
    }
    case "opaque":
      if (part.format === "responses") return part.block as ResponsesContentPart;
      if (part.text !== undefined) {
        lossy.push({
          code: "opaque-block-as-text",
          message: `a ${part.format} block has no Responses form; sent as text`,
          path,
        });
        return role === "assistant"
          ? { type: "output_text", text: part.text, annotations: [] }
          : { type: "input_text", text: part.text };
      }
      lossy.push({
        code: "opaque-block-dropped",
        message: `a ${part.format} block has no Responses form`,
        path,
      });
      return undefined;
    case "thinking":
    case "redacted_thinking":
    case "tool_call":
    case "tool_result":
      lossy.push({ code: "part-dropped", message: `a ${part.type} part cannot go in this position`, path });
      return undefined;
    default:
      return assertNever(part, "part");
  }
}
