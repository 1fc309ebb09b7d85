import { createParser, type EventSourceMessage, type ParseError } from "eventsource-parser";
import { ParleyError } from "../core/index.js";

/** One Server-Sent Event: `event:` name (if any) and its `data:` text. */
export interface SseMessage {
  event?: string;
  data: string;
}

/**
 * Bytes or text in, whole SSE events out, however the input is cut (mid-line, mid-character).
 * Comments (`: OPENROUTER PROCESSING`) and `retry:` lines are dropped by the parser. An event (or a line) longer
 * than `maxEventCharacters` is an error, thrown by `push`: a broken server's endless line must not take the
 * memory.
 */
export class SseDecoder {
  private readonly decoder = new TextDecoder("utf-8");
  private pending: SseMessage[] = [];
  private tooLarge: ParseError | undefined;
  private readonly parser;

  constructor(private readonly maxEventCharacters?: number) {
    this.parser = createParser({
      onEvent: (message: EventSourceMessage) => {
        this.pending.push(
          message.event === undefined ? { data: message.data } : { event: message.event, data: message.data },
        );
      },
      onError: (error) => {
        if (error.type === "max-buffer-size-exceeded") this.tooLarge = error;
      },
      ...(maxEventCharacters === undefined ? {} : { maxBufferSize: maxEventCharacters }),
    });
  }

  push(chunk: Uint8Array | string): SseMessage[] {
    if (this.tooLarge === undefined) {
      this.parser.feed(typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true }));
    }
    if (this.tooLarge !== undefined) {
      throw new ParleyError(
        "api_error",
        `an event of the upstream's stream is larger than the limit of ${this.maxEventCharacters} characters (limits.maxEventBytes)`,
        { status: 502 },
      );
    }
    return this.take();
  }

  /** Flushes a final event that lacked its blank line (some servers end the body without one). */
  finish(): SseMessage[] {
    const rest = this.decoder.decode();
    if (rest) this.parser.feed(rest);
    this.parser.feed("\n\n");
    return this.take();
  }

  private take(): SseMessage[] {
    if (this.pending.length === 0) return EMPTY;
    const out = this.pending;
    this.pending = [];
    return out;
  }
}

const EMPTY: SseMessage[] = [];

/** Parses a whole SSE transcript. */
export function parseSse(text: string): SseMessage[] {
  const decoder = new SseDecoder();
  return [...decoder.push(text), ...decoder.finish()];
}

/** Formats one event. `data` must not contain newlines (JSON.stringify output never does). */
export function formatSse(event: string | undefined, data: string): string {
  return event === undefined ? `data: ${data}\n\n` : `event: ${event}\ndata: ${data}\n\n`;
}
