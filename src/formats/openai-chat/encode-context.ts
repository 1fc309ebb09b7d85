import { type Extra, formatPath, type LossyEntry, type Part } from "../../core/index.js";
import type { OpenAICompat } from "./compat.js";
import type { OpenAIContentPart } from "./wire-types.js";

/** State shared by one conversion: the lossy list, and which once-per-request entries were made. */
export interface EncodeContext {
  lossy: LossyEntry[];
  reported: Set<string>;
  provider: string | undefined;
  compat: OpenAICompat | undefined;
}

export function createEncodeContext(provider: string | undefined, compat: OpenAICompat | undefined): EncodeContext {
  return { lossy: [], reported: new Set(), provider, compat };
}

/** Anthropic-only block fields no OpenAI-compatible API takes. */
const ANTHROPIC_BLOCK_FIELDS = ["cache_control", "citations", "caller"];

/** A part's extra without Anthropic-only fields; `cache_control` is reported once per request. */
export function stripAnthropicExtra(extra: Extra | undefined, path: string, context: EncodeContext): Extra | undefined {
  if (extra === undefined || !ANTHROPIC_BLOCK_FIELDS.some((key) => key in extra)) return extra;
  const kept: Extra = {};
  for (const [key, value] of Object.entries(extra)) {
    if (!ANTHROPIC_BLOCK_FIELDS.includes(key)) kept[key] = value;
    else if (key === "cache_control" && context.compat?.supportsCacheControl) kept[key] = value;
    else
      reportOnce(
        context,
        `${key}-stripped`,
        `Anthropic '${key}' cannot be sent to an OpenAI-compatible API (first at ${path})`,
      );
  }
  return kept;
}

/**
 * Message fields only Anthropic has: Claude Code sends a turn's `output_config` on a message (per-turn control).
 * An OpenAI-compatible server would refuse them or read them as its own.
 */
const ANTHROPIC_MESSAGE_FIELDS = ["output_config", "cache_control"];

/** A message's extra fields for an OpenAI message: without `role` (set by the codec) and Anthropic-only fields. */
export function messageExtraForOpenAI(extra: Extra | undefined, index: number, context: EncodeContext): Extra {
  const { role: _role, ...rest } = extra ?? {};
  for (const key of ANTHROPIC_MESSAGE_FIELDS) {
    if (!(key in rest) || (key === "cache_control" && context.compat?.supportsCacheControl)) continue;
    delete rest[key];
    reportOnce(
      context,
      `message-${key}-dropped`,
      `Anthropic '${key}' on a message has no OpenAI equivalent and was dropped`,
      formatPath(["messages", index]),
    );
  }
  return rest;
}

export function reportOnce(context: EncodeContext, code: string, message: string, path?: string): void {
  if (context.reported.has(code)) return;
  context.reported.add(code);
  context.lossy.push(path === undefined ? { code, message } : { code, message, path });
}

/** A text, image, document or opaque part as an OpenAI content part; undefined (reported) when it cannot go. */
export function encodeContentPart(part: Part, path: string, context: EncodeContext): OpenAIContentPart | undefined {
  switch (part.type) {
    case "text":
      return { ...stripAnthropicExtra(part.extra, path, context), type: "text", text: part.text };
    case "image": {
      if (context.compat !== undefined && !context.compat.supportsImages) {
        context.lossy.push({ code: "image-dropped", message: "the upstream does not take images", path });
        return undefined;
      }
      const { image_url: imageExtra, ...extra } = stripAnthropicExtra(part.extra, path, context) ?? {};
      const source = part.source;
      const url =
        source.type === "url"
          ? source.url
          : `data:${source.mediaType};base64,${source.type === "base64" ? source.data : Buffer.from(source.data).toString("base64")}`;
      return { ...extra, type: "image_url", image_url: { url, ...(imageExtra as Extra | undefined) } };
    }
    case "document": {
      const source = part.source;
      if (source.type === "text") return { type: "text", text: source.data };
      if (source.type === "base64") {
        const { file: fileExtra, ...extra } = part.extra ?? {};
        const known = new Set(["title", "context", "citations", "cache_control"]);
        const kept = Object.fromEntries(Object.entries(extra).filter(([key]) => !known.has(key)));
        const title = typeof part.extra?.title === "string" ? { filename: part.extra.title } : {};
        if (part.extra && "cache_control" in part.extra) stripAnthropicExtra(part.extra, path, context);
        return {
          ...kept,
          type: "file",
          file: {
            ...title,
            ...(fileExtra as Extra | undefined),
            file_data: `data:${source.mediaType};base64,${source.data}`,
          },
        };
      }
      context.lossy.push({
        code: "document-dropped",
        message: "a document given by URL cannot be sent as an OpenAI file part",
        path,
      });
      return undefined;
    }
    case "opaque":
      if (part.format === "openai") return part.block as OpenAIContentPart;
      context.lossy.push({
        code: "opaque-block-dropped",
        message: `an Anthropic block of type '${blockType(part.block)}' has no OpenAI form`,
        path,
      });
      return undefined;
    default:
      context.lossy.push({ code: "part-dropped", message: `a ${part.type} part cannot go in this position`, path });
      return undefined;
  }
}

function blockType(block: unknown): string {
  return block !== null && typeof block === "object" && typeof (block as { type?: unknown }).type === "string"
    ? (block as { type: string }).type
    : "unknown";
}
