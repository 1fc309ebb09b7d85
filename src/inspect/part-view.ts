import type { Part, ToolResultContentPart } from "../core/index.js";
import type { ViewedPart } from "../formats/adapter.js";
import type { Block } from "./view-types.js";

/** Image types a page may show from a data URL; anything else (SVG among them) is described, not drawn. */
const SHOWN_IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
/** Larger images are described: a trace page is no gallery. */
const MAX_IMAGE_CHARS = 2 * 1024 * 1024;

/** A canonical part as a block for the page: a title, its text, an image when one can be shown safely. */
export function blockOf(viewed: ViewedPart): Block {
  return { ...describe(viewed.part), path: viewed.path, notes: [] };
}

function describe(part: Part): Omit<Block, "path" | "notes"> {
  switch (part.type) {
    case "text":
      return { kind: "text", title: "text", text: part.text };
    case "thinking":
      return {
        kind: "thinking",
        // Sealed: a provider's encrypted reasoning rides with it (a Responses item's `encrypted_content`), unshown.
        title:
          part.signature !== undefined
            ? "thinking (signed)"
            : part.origin?.sealed !== undefined
              ? "thinking (sealed)"
              : "thinking",
        text: part.thinking,
      };
    case "redacted_thinking":
      return { kind: "redacted_thinking", title: "redacted thinking", text: `${part.data.length} characters, opaque` };
    case "tool_call":
      return {
        kind: "tool_call",
        title: `tool call ${part.name} (${part.id})`,
        text: part.rawInput ?? JSON.stringify(part.input, null, 2),
      };
    case "tool_result": {
      const block: Omit<Block, "path" | "notes"> = {
        kind: "tool_result",
        title: `tool result (${part.toolCallId})${part.isError ? ", error" : ""}`,
        text: typeof part.content === "string" ? part.content : part.content.map(resultText).join("\n"),
      };
      const image = typeof part.content === "string" ? undefined : part.content.find((item) => item.type === "image");
      const shown = image === undefined ? undefined : imageOf(image.source);
      if (shown !== undefined) block.image = shown;
      return block;
    }
    case "image": {
      const block: Omit<Block, "path" | "notes"> = { kind: "image", title: "image", text: sourceText(part.source) };
      const shown = imageOf(part.source);
      if (shown !== undefined) block.image = shown;
      return block;
    }
    case "document":
      return { kind: "document", title: "document", text: sourceText(part.source) };
    case "opaque":
      return {
        kind: "opaque",
        title: `${blockType(part.block)} (carried as is)`,
        text: JSON.stringify(part.block, null, 2),
      };
    default:
      return part satisfies never;
  }
}

function resultText(item: ToolResultContentPart): string {
  switch (item.type) {
    case "text":
      return item.text;
    case "image":
    case "document":
      return `[${item.type}: ${sourceText(item.source)}]`;
    case "opaque":
      return `[${blockType(item.block)}]`;
    default:
      return item satisfies never;
  }
}

function sourceText(source: Extract<Part, { type: "image" }>["source"]): string {
  switch (source.type) {
    case "base64":
      return `${source.mediaType}, ${Math.round((source.data.length * 3) / 4).toLocaleString("en-US")} bytes`;
    case "url":
      return source.url;
    case "text":
      return source.data;
    default:
      return source satisfies never;
  }
}

function imageOf(source: Extract<Part, { type: "image" }>["source"]): Block["image"] {
  if (source.type !== "base64" || !SHOWN_IMAGES.has(source.mediaType)) return undefined;
  if (source.data.length > MAX_IMAGE_CHARS || !/^[A-Za-z0-9+/=\s]*$/.test(source.data)) return undefined;
  return { mediaType: source.mediaType, data: source.data.replace(/\s+/g, "") };
}

function blockType(block: unknown): string {
  const type = (block as { type?: unknown } | null)?.type;
  return typeof type === "string" ? type : "block";
}

/**
 * What makes two blocks the same block, whichever API carried them: their content, not their kind (thinking
 * that became text still pairs with itself), tool calls by id, name and input.
 */
export function blockKey(part: Part): string {
  switch (part.type) {
    case "text":
      return `t:${part.text}`;
    case "thinking":
      return `t:${part.thinking}`;
    case "redacted_thinking":
      return `r:${part.data}`;
    case "tool_call":
      return `c:${part.id}:${part.name}:${part.rawInput ?? stableJson(part.input)}`;
    case "tool_result":
      return `r:${part.toolCallId}:${typeof part.content === "string" ? part.content : part.content.map(resultText).join("\n")}`;
    case "image":
    case "document":
      return `m:${sourceText(part.source)}:${part.source.type === "base64" ? part.source.data.slice(0, 256) : ""}`;
    case "opaque":
      return `o:${JSON.stringify(part.block)}`;
    default:
      return part satisfies never;
  }
}

/** JSON with keys sorted, so that the same input in another key order is the same input. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value as object)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
