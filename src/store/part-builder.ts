import { assertNever, decodeOriginSignature, type Part, type StreamEvent, type ToolCallPart } from "../core/index.js";

/** A part whose stored text must be rewritten at the next flush. */
export interface PartChange {
  position: number;
  part: string;
}

/**
 * Folds stream events into parts, position = block index, and remembers which positions changed since
 * the last `takeChanges`. Builder state (tool argument text) lives in its own map, never on the parts.
 * Malformed sequences (a delta for a block never opened) are absorbed, never thrown: the store must keep
 * whatever arrived.
 */
export class PartBuilder {
  private readonly partsByPosition: Array<Part | undefined> = [];
  private readonly toolJson = new Map<number, string>();
  private readonly dirty = new Set<number>();

  apply(event: StreamEvent): void {
    switch (event.type) {
      case "block-start":
        this.partsByPosition[event.index] = structuredClone(event.part);
        if (event.part.type === "tool_call") this.toolJson.set(event.index, "");
        this.dirty.add(event.index);
        return;
      case "text-delta": {
        const part = this.partAt(event.index, () => ({ type: "text", text: "" }));
        if (part.type === "text") part.text += event.text;
        this.dirty.add(event.index);
        return;
      }
      case "thinking-delta": {
        const part = this.partAt(event.index, () => ({ type: "thinking", thinking: "" }));
        if (part.type === "thinking") part.thinking += event.thinking;
        this.dirty.add(event.index);
        return;
      }
      case "signature": {
        const part = this.partAt(event.index, () => ({ type: "thinking", thinking: "" }));
        if (part.type === "thinking") {
          // as the reducer does: an origin envelope says where the thinking came from
          part.signature = event.signature;
          const origin = decodeOriginSignature(event.signature);
          if (origin) part.origin = origin;
        }
        this.dirty.add(event.index);
        return;
      }
      case "tool-input-delta":
        this.toolJson.set(event.index, (this.toolJson.get(event.index) ?? "") + event.partialJson);
        this.dirty.add(event.index);
        return;
      case "opaque-delta": {
        // Anthropic's `citations_delta` adds one citation to a text block; other unknown deltas are kept
        // beside the part so nothing received is lost.
        const part = this.partsByPosition[event.index];
        if (part === undefined || part.type === "opaque") return;
        const delta = event.delta as { type?: unknown; citation?: unknown } | null;
        // opaque deltas are Anthropic's (its decoder is the one that makes them)
        const extra = { ...part.extra?.anthropic };
        part.extra = { ...part.extra, anthropic: extra };
        if (part.type === "text" && delta?.type === "citations_delta" && delta.citation !== undefined) {
          extra.citations = [...(Array.isArray(extra.citations) ? extra.citations : []), delta.citation];
        } else {
          extra.unknownDeltas = [...(Array.isArray(extra.unknownDeltas) ? extra.unknownDeltas : []), event.delta];
        }
        this.dirty.add(event.index);
        return;
      }
      case "block-end":
        this.dirty.add(event.index);
        return;
      case "message-start":
      case "finish":
      case "error":
        return;
      default:
        assertNever(event, "stream event");
    }
  }

  /** The parts so far, in position order; a tool call's arguments parsed as far as they go. */
  parts(): Part[] {
    const out: Part[] = [];
    this.partsByPosition.forEach((_, position) => {
      const part = this.partSnapshot(position);
      if (part !== undefined) out.push(part);
    });
    return out;
  }

  takeChanges(): PartChange[] {
    const changes: PartChange[] = [];
    for (const position of [...this.dirty].sort((a, b) => a - b)) {
      const part = this.partSnapshot(position);
      if (part !== undefined) changes.push({ position, part: JSON.stringify(part) });
    }
    this.dirty.clear();
    return changes;
  }

  /** Puts changes back after a failed write, so the next flush retries them. */
  restore(changes: readonly PartChange[]): void {
    for (const change of changes) this.dirty.add(change.position);
  }

  private partAt(index: number, create: () => Part): Part {
    const existing = this.partsByPosition[index];
    if (existing !== undefined) return existing;
    const part = create();
    this.partsByPosition[index] = part;
    return part;
  }

  private partSnapshot(position: number): Part | undefined {
    const part = this.partsByPosition[position];
    if (part === undefined || part.type !== "tool_call") return part;
    return withArguments(part, this.toolJson.get(position) ?? "");
  }
}

/** A tool call with its argument text applied: parsed when it parses, otherwise kept raw beside `input`. */
function withArguments(part: ToolCallPart, json: string): ToolCallPart {
  if (json === "") return part;
  try {
    const { rawInput: _, ...rest } = part;
    return { ...rest, input: JSON.parse(json) };
  } catch {
    return { ...part, rawInput: json };
  }
}
