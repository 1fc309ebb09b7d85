import { type IncrementalDecoder, type StreamEvent, UpstreamError } from "../../core/index.js";
import { coalesceDeltas } from "../../stream/coalesce.js";
import { SseDecoder, type SseMessage } from "../../stream/sse.js";
import { Utf8Stream } from "../../upstream/utf8-stream.js";

/**
 * The upstream body as batches of canonical events, one batch per network chunk (so the per-event cost is a
 * loop, not an await), each batch's runs of deltas joined (`coalesceDeltas`): they leave in one write anyway. Reading is pulled by the consumer: while it waits for a slow client, nothing is read.
 * A plain iterator rather than an async generator: one await per chunk instead of a generator's queue of
 * promises, which is felt when every frame arrives in its own read. `return` ends the upstream body.
 * Each chunk is decoded to text once, for the events and for `onChunk` (the trace's copy) alike.
 */
export function upstreamEventBatches(
  body: AsyncIterable<Uint8Array>,
  decoder: IncrementalDecoder<SseMessage>,
  onChunk?: (text: string) => void,
  maxEventCharacters?: number,
  quietLimitMs = Number.POSITIVE_INFINITY,
): AsyncIterator<StreamEvent[]> {
  return new EventBatches(
    body[Symbol.asyncIterator](),
    decoder,
    onChunk,
    new SseDecoder(maxEventCharacters),
    quietLimitMs,
  );
}

class EventBatches implements AsyncIterator<StreamEvent[]> {
  private done = false;
  private readonly utf8 = new Utf8Stream();
  /** When the last SSE message came: bytes that hold none (keep-alive comments) do not count. */
  private lastMessageAt = performance.now();

  constructor(
    private readonly source: AsyncIterator<Uint8Array>,
    private readonly decoder: IncrementalDecoder<SseMessage>,
    private readonly onChunk: ((text: string) => void) | undefined,
    private readonly sse: SseDecoder,
    /**
     * How long an upstream may send bytes that hold no message (only `: keep-alive` comments): the socket's idle
     * timeout never fires while they come, so without this such an upstream would hold the stream open forever.
     */
    private readonly quietLimitMs: number,
  ) {}

  async next(): Promise<IteratorResult<StreamEvent[]>> {
    while (!this.done) {
      const read = await this.source.next();
      if (read.done) {
        this.done = true;
        const rest = this.utf8.end();
        if (rest !== "") this.onChunk?.(rest);
        const tail = rest === "" ? this.sse.finish() : [...this.sse.push(rest), ...this.sse.finish()];
        const events = [...decodeAll(this.decoder, tail), ...this.decoder.finish()];
        if (events.length > 0) return { value: coalesceDeltas(events), done: false };
        break;
      }
      const text = this.utf8.write(read.value);
      if (text === "") continue;
      this.onChunk?.(text);
      const messages = this.sse.push(text);
      if (messages.length === 0) {
        this.checkQuiet();
        continue;
      }
      this.lastMessageAt = performance.now();
      const events = decodeAll(this.decoder, messages);
      if (events.length > 0) return { value: coalesceDeltas(events), done: false };
    }
    return { value: undefined, done: true };
  }

  private checkQuiet(): void {
    const quietMs = performance.now() - this.lastMessageAt;
    if (quietMs <= this.quietLimitMs) return;
    throw new UpstreamError(
      "timeout_error",
      `upstream sent nothing but keep-alive comments for ${Math.round(quietMs)} ms (timeouts.idleMs)`,
      { retryable: false },
    );
  }

  async return(): Promise<IteratorResult<StreamEvent[]>> {
    if (!this.done) {
      this.done = true;
      await this.source.return?.();
    }
    return { value: undefined, done: true };
  }
}

function decodeAll(decoder: IncrementalDecoder<SseMessage>, messages: SseMessage[]): StreamEvent[] {
  if (messages.length === 1) return decoder.push(messages[0]!);
  const out: StreamEvent[] = [];
  for (const message of messages) for (const event of decoder.push(message)) out.push(event);
  return out;
}
