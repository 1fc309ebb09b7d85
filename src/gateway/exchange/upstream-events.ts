import type { IncrementalDecoder, StreamEvent } from "../../core/index.js";
import { coalesceDeltas } from "../../stream/coalesce.js";
import { SseDecoder, type SseMessage } from "../../stream/sse.js";

/**
 * The upstream body as batches of canonical events, one batch per network chunk (so the per-event cost is a
 * loop, not an await), each batch's runs of deltas joined (`coalesceDeltas`): they leave in one write anyway. Reading is pulled by the consumer: while it waits for a slow client, nothing is read.
 * A plain iterator rather than an async generator: one await per chunk instead of a generator's queue of
 * promises, which is felt when every frame arrives in its own read. `return` ends the upstream body.
 */
export function upstreamEventBatches(
  body: AsyncIterable<Uint8Array>,
  decoder: IncrementalDecoder<SseMessage>,
  onChunk?: (chunk: Uint8Array) => void,
  maxEventCharacters?: number,
): AsyncIterator<StreamEvent[]> {
  return new EventBatches(body[Symbol.asyncIterator](), decoder, onChunk, new SseDecoder(maxEventCharacters));
}

class EventBatches implements AsyncIterator<StreamEvent[]> {
  private done = false;

  constructor(
    private readonly source: AsyncIterator<Uint8Array>,
    private readonly decoder: IncrementalDecoder<SseMessage>,
    private readonly onChunk: ((chunk: Uint8Array) => void) | undefined,
    private readonly sse: SseDecoder,
  ) {}

  async next(): Promise<IteratorResult<StreamEvent[]>> {
    while (!this.done) {
      const read = await this.source.next();
      if (read.done) {
        this.done = true;
        const events = [...decodeAll(this.decoder, this.sse.finish()), ...this.decoder.finish()];
        if (events.length > 0) return { value: coalesceDeltas(events), done: false };
        break;
      }
      this.onChunk?.(read.value);
      const messages = this.sse.push(read.value);
      if (messages.length === 0) continue;
      const events = decodeAll(this.decoder, messages);
      if (events.length > 0) return { value: coalesceDeltas(events), done: false };
    }
    return { value: undefined, done: true };
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
