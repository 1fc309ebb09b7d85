import {
  assertNever,
  type Extra,
  type Fields,
  fieldsFor,
  type LossyCode,
  type LossyEntry,
  type Part,
  type SharesField,
} from "../../core/index.js";
import { utf8ToBase64 } from "../../core/portable.js";
import type { OpenAICompat } from "./compat.js";
import { MESSAGE_FIELDS, REQUEST_FIELDS } from "./fields.js";
import type { OpenAIContentPart } from "./wire-types.js";

/** State shared by one conversion: the lossy list, and which once-per-request entries were made. */
export interface EncodeContext {
  lossy: LossyEntry[];
  reported: Set<string>;
  provider: string | undefined;
  compat: OpenAICompat | undefined;
  /** No preset or setting chose the reasoning mode: a client's own reasoning field goes back in that field. */
  reasoningAsItCame?: boolean;
}

export function createEncodeContext(provider: string | undefined, compat: OpenAICompat | undefined): EncodeContext {
  return { lossy: [], reported: new Set(), provider, compat };
}

/** Where a field sits: the request, a message (the two a strict server checks for fields it knows), or inside one. */
export type FieldLevel = "request" | "message" | "element";

/** Whether the provider's preset takes a client's field Chat Completions does not have (by name, or `any`). */
export function presetTakes(compat: OpenAICompat | undefined, key: string): boolean {
  const extra = compat?.extraFields;
  return extra === "any" || (extra?.includes(key) ?? false);
}

/**
 * Whether the preset takes another API's field: only by name. A server that ignores what it does not know would
 * ignore that field too, so sending it would lose it all the same, only unreported.
 */
function presetNames(compat: OpenAICompat | undefined, key: string): boolean {
  const extra = compat?.extraFields;
  return Array.isArray(extra) && extra.includes(key);
}

/**
 * The fields of a core object's `extra` its OpenAI object gets (spread before what the codec writes). Chat
 * Completions' own fields go as they came; a client's extension (a field Chat Completions has not, at the request
 * or message level) only to a provider whose preset takes it (by name, or `any`); another API's field only where
 * OpenAI has it too (`shared`) or the preset names it. Each field left out is reported once per request, where it
 * was first met.
 */
export function openaiFieldsOf(
  extra: Extra | undefined,
  level: FieldLevel,
  path: string,
  context: EncodeContext,
  shared?: SharesField,
): Fields | undefined {
  if (extra === undefined) return undefined;
  const { compat } = context;
  const { fields, dropped } = fieldsFor(
    extra,
    "openai",
    (key, value, from) =>
      shared?.(key, value, from) === true ||
      (key === "cache_control" && compat?.supportsCacheControl === true) ||
      presetNames(compat, key),
  );
  for (const { from, key } of dropped) {
    if (key === "cache_control") reportOnce(context, "cache_control-stripped", CACHE_CONTROL_STRIPPED, path);
    else {
      const message = `${from} field '${key}' has no OpenAI equivalent and was dropped`;
      reportOnce(context, `field-dropped-${key}`, message, fieldPath(path, key));
    }
  }
  const own = extra.openai;
  // Without a provider in view (a conversion on its own) a client's fields of this API go as they came.
  if (level === "element" || compat === undefined || fields === undefined) return fields;
  const known = level === "request" ? REQUEST_FIELDS : MESSAGE_FIELDS;
  let kept = fields;
  const drop = (key: string, message: string) => {
    if (kept === fields) kept = { ...kept };
    const value = kept[key];
    delete kept[key];
    if (value !== null) reportOnce(context, `field-dropped-${key}`, message, fieldPath(path, key));
  };
  if (own !== undefined)
    for (const key in own) {
      if (known.has(key) || presetTakes(compat, key)) continue;
      drop(key, `'${key}' is not a Chat Completions field and the upstream's preset does not take it; dropped`);
    }
  for (const key of compat.refusedFields)
    if (key in kept) drop(key, `the upstream refuses '${key}' (its preset says it answers 400 to it); dropped`);
  return kept;
}

function fieldPath(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

const CACHE_CONTROL_STRIPPED = "Anthropic 'cache_control' cannot be sent to this OpenAI-compatible API";

export function reportOnce(context: EncodeContext, code: LossyCode, message: string, path?: string): void {
  if (context.reported.has(code)) return;
  context.reported.add(code);
  context.lossy.push(path === undefined ? { code, message } : { code, message, path });
}

/** A text, image, document or opaque part as an OpenAI content part; undefined (reported) when it cannot go. */
export function encodeContentPart(part: Part, path: string, context: EncodeContext): OpenAIContentPart | undefined {
  switch (part.type) {
    case "text":
      return { ...openaiFieldsOf(part.extra, "element", path, context), type: "text", text: part.text };
    case "image": {
      if (context.compat !== undefined && !context.compat.supportsImages) {
        context.lossy.push({ code: "image-dropped", message: "the upstream does not take images", path });
        return undefined;
      }
      const { image_url: imageExtra, ...extra } = openaiFieldsOf(part.extra, "element", path, context) ?? {};
      const source = part.source;
      const url =
        source.type === "url"
          ? source.url
          : `data:${source.mediaType};base64,${source.type === "base64" ? source.data : utf8ToBase64(source.data)}`;
      return { ...extra, type: "image_url", image_url: { url, ...(imageExtra as Fields | undefined) } };
    }
    case "document": {
      const source = part.source;
      if (source.type === "text") return { type: "text", text: source.data };
      if (source.type === "base64") {
        // An Anthropic document's title is the file's name; its other fields go by the usual rule.
        const { title, ...anthropic } = part.extra?.anthropic ?? {};
        const extra = part.extra === undefined ? undefined : { ...part.extra, anthropic };
        const { file: fileExtra, ...kept } = openaiFieldsOf(extra, "element", path, context) ?? {};
        return {
          ...kept,
          type: "file",
          file: {
            ...(typeof title === "string" ? { filename: title } : {}),
            ...(fileExtra as Fields | undefined),
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
      if (part.text !== undefined) {
        context.lossy.push({
          code: "opaque-block-as-text",
          message: `an Anthropic block of type '${blockType(part.block)}' has no OpenAI form; sent as text`,
          path,
        });
        return { type: "text", text: part.text };
      }
      context.lossy.push({
        code: "opaque-block-dropped",
        message: `an Anthropic block of type '${blockType(part.block)}' has no OpenAI form`,
        path,
      });
      return undefined;
    case "thinking":
    case "redacted_thinking":
    case "tool_call":
    case "tool_result":
      context.lossy.push({ code: "part-dropped", message: `a ${part.type} part cannot go in this position`, path });
      return undefined;
    default:
      return assertNever(part, "part");
  }
}

function blockType(block: unknown): string {
  return block !== null && typeof block === "object" && typeof (block as { type?: unknown }).type === "string"
    ? (block as { type: string }).type
    : "unknown";
}
