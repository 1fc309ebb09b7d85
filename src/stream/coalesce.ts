import type { StreamEvent, TextDeltaEvent, ThinkingDeltaEvent, ToolInputDeltaEvent } from "../core/stream-events.js";

type MergeableDelta = TextDeltaEvent | ThinkingDeltaEvent | ToolInputDeltaEvent;

/**
 * Joins runs of deltas of the same kind for the same block: `[text "a", text "b"]` becomes `[text "ab"]`.
 * Folding the result with `accumulate` gives exactly what the input gives; only the number of events
 * changes. The gateway applies it to each upstream read, whose events reach the client in one socket write
 * anyway: a fast upstream's 64 one-token frames then cost one encoded event instead of 64, and nothing
 * arrives later than it would have. Signatures (which replace, not append) and every other event pass
 * untouched and in place. The input is returned as it is when nothing merges; it is never modified.
 */
export function coalesceDeltas(events: StreamEvent[]): StreamEvent[] {
  if (events.length < 2) return events;
  let out: StreamEvent[] | undefined;
  // The run being built: its first event stays as given until a second one joins it.
  let run: MergeableDelta | undefined;
  let runOwned = false;
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!;
    if (run !== undefined && event.type === run.type && event.index === run.index) {
      out ??= events.slice(0, index);
      if (!runOwned) {
        run = { ...run };
        out[out.length - 1] = run;
        runOwned = true;
      }
      append(run, event as MergeableDelta);
      continue;
    }
    out?.push(event);
    run = isMergeable(event) ? event : undefined;
    runOwned = false;
  }
  return out ?? events;
}

function isMergeable(event: StreamEvent): event is MergeableDelta {
  return event.type === "text-delta" || event.type === "thinking-delta" || event.type === "tool-input-delta";
}

/** Appends `next` to `run`, an event of the same type this module made and owns. */
function append(run: MergeableDelta, next: MergeableDelta): void {
  switch (run.type) {
    case "text-delta":
      run.text += (next as TextDeltaEvent).text;
      return;
    case "thinking-delta":
      run.thinking += (next as ThinkingDeltaEvent).thinking;
      return;
    case "tool-input-delta":
      run.partialJson += (next as ToolInputDeltaEvent).partialJson;
      return;
    default: {
      const unreachable: never = run;
      throw new Error(`not a mergeable delta: ${JSON.stringify(unreachable)}`);
    }
  }
}
