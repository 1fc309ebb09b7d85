import type { OpenAIReasoningDetail } from "./wire-types.js";

/** Text fields of a `reasoning_details` item that arrive in fragments and concatenate. */
const CONCATENATED = new Set(["text", "summary", "data"]);

/**
 * Folds streamed `reasoning_details` fragments into whole items, the shape a non-stream response has:
 * a fragment continues the last item of the same `type` and `index`; text fields concatenate, and a
 * later non-null value (the signature, which arrives last) sets the others.
 */
export function mergeReasoningDetails(into: OpenAIReasoningDetail[], fragments: readonly unknown[]): void {
  for (const fragment of fragments) {
    if (fragment === null || typeof fragment !== "object") continue;
    const item = fragment as OpenAIReasoningDetail;
    const last = into[into.length - 1];
    if (last !== undefined && typeof item.index === "number" && last.index === item.index && last.type === item.type) {
      for (const [key, value] of Object.entries(item)) {
        const existing = last[key];
        if (CONCATENATED.has(key) && typeof value === "string" && typeof existing === "string") {
          last[key] = existing + value;
        } else if (!(key in last) || (value !== null && value !== undefined)) {
          last[key] = value;
        }
      }
    } else {
      into.push({ ...item });
    }
  }
}

/** The readable reasoning in items: `reasoning.text` text and `reasoning.summary` summaries, in order. */
export function reasoningDetailsText(details: readonly unknown[]): string {
  let text = "";
  for (const item of details) {
    if (item === null || typeof item !== "object") continue;
    const detail = item as OpenAIReasoningDetail;
    if (typeof detail.text === "string") text += detail.text;
    else if (typeof detail.summary === "string") text += detail.summary;
  }
  return text;
}
