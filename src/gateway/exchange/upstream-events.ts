import type { IncrementalDecoder, StreamEvent } from "../../core/index.js";
import { SseDecoder, type SseMessage } from "../../stream/sse.js";

/**
 * The upstream body as batches of canonical events, one batch per network chunk (so the per-event cost is a
 * loop, not an await). Reading is pulled by the consumer: while it waits for a slow client, nothing is read.
 */
export async function* upstreamEventBatches(
  body: AsyncIterable<Uint8Array>,
  decoder: IncrementalDecoder<SseMessage>,
  onChunk?: (chunk: Uint8Array) => void,
): AsyncGenerator<StreamEvent[]> {
  const sse = new SseDecoder();
  for await (const chunk of body) {
    onChunk?.(chunk);
    const messages = sse.push(chunk);
    if (messages.length === 0) continue;
    const events = decodeAll(decoder, messages);
    if (events.length > 0) yield events;
  }
  const events = [...decodeAll(decoder, sse.finish()), ...decoder.finish()];
  if (events.length > 0) yield events;
}

function decodeAll(decoder: IncrementalDecoder<SseMessage>, messages: SseMessage[]): StreamEvent[] {
  if (messages.length === 1) return decoder.push(messages[0]!);
  const out: StreamEvent[] = [];
  for (const message of messages) for (const event of decoder.push(message)) out.push(event);
  return out;
}
