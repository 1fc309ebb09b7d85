import type { StreamEvent } from "../core/index.js";
import type { FormatAdapter, ViewedMessage } from "../formats/adapter.js";
import { createAccumulator } from "../stream/accumulate.js";
import type { StreamView } from "./view-types.js";

/** Listing more events than this would only slow the page; the assembled answer has them all. */
const LISTED_EVENTS = 1_000;
const EVENT_DATA_CHARS = 600;

interface RawEvent {
  offset: number;
  event?: string;
  data: string;
  comment?: boolean;
}

/** An event stream's text as its events, each where it starts in the text. */
export function splitEvents(text: string): RawEvent[] {
  const events: RawEvent[] = [];
  const pattern = /\r?\n\r?\n/g;
  let start = 0;
  for (;;) {
    const match = pattern.exec(text);
    const end = match === null ? text.length : match.index;
    const block = text.slice(start, end);
    if (block.trim() !== "") {
      const event: RawEvent = { offset: start, data: "" };
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
        else if (line.startsWith("event:")) event.event = line.slice(6).trim();
        else if (line.startsWith(":")) data.push(line);
      }
      event.data = data.join("\n");
      if (event.event === undefined && data.every((line) => line.startsWith(":"))) event.comment = true;
      events.push(event);
    }
    if (match === null) break;
    start = match.index + match[0].length;
  }
  return events;
}

/** The events with the time each arrived (from the trace's offset-and-ms pairs), the first ones listed. */
export function streamView(text: string, arrivals: readonly number[] | undefined): StreamView {
  const events = splitEvents(text);
  let piece = 0;
  const listed = events.slice(0, LISTED_EVENTS).map((event) => {
    const view: StreamView["events"][number] = {
      data: event.data.length > EVENT_DATA_CHARS ? `${event.data.slice(0, EVENT_DATA_CHARS)}…` : event.data,
    };
    if (event.event !== undefined) view.event = event.event;
    else if (event.comment) view.event = "comment";
    if (arrivals !== undefined && arrivals.length >= 2) {
      // The piece an event starts in is the last one that began at or before it.
      while (piece + 2 < arrivals.length && arrivals[piece + 2]! <= event.offset) piece += 2;
      view.ms = Math.round(arrivals[piece + 1]! * 10) / 10;
    }
    return view;
  });
  return { events: listed, more: Math.max(0, events.length - LISTED_EVENTS) };
}

/** The answer a stream of this API adds up to, by its own decoder and the reducer every answer goes through. */
export function assembledAnswer(format: FormatAdapter, text: string): ViewedMessage | undefined {
  const decoder = format.upstream.streamDecoder();
  const answer = createAccumulator({ lenient: true });
  const add = (events: StreamEvent[]) => {
    for (const event of events) answer.push(event);
  };
  let decoded = 0;
  try {
    for (const event of splitEvents(text)) {
      if (event.comment || event.data === format.upstream.streamEndMarker) continue;
      add(decoder.push(event.event === undefined ? { data: event.data } : { event: event.event, data: event.data }));
      decoded++;
    }
    add(decoder.finish());
  } catch {
    if (decoded === 0) return undefined;
  }
  if (decoded === 0) return undefined;
  const message = answer.snapshot().message;
  return {
    role: "assistant",
    path: "",
    parts: message.parts.map((part, index) => ({ part, path: `content[${index}]` })),
  };
}
