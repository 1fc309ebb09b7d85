import type { ConversationResponse } from "../core/conversation.js";
import { errorTypeForStatus, isRetryableStatus, UpstreamError } from "../core/errors.js";
import type { IncrementalDecoder, StreamEvent } from "../core/stream-events.js";
import { createAccumulator } from "./accumulate.js";
import { SseDecoder, type SseMessage } from "./sse.js";

/**
 * An answer's stream read as it arrives: its canonical events one by one (`for await`), and the whole answer at
 * the end (`message()`), from the bytes of an HTTP body or the events an SDK parsed.
 */
export interface AnswerStream extends AsyncIterable<StreamEvent> {
  /**
   * The finished answer, once the events were read to the end (or, without iterating, after reading them all).
   * Rejects with an `IncompleteStreamError` carrying the answer as far as it came when the stream ended in an
   * error: the upstream's, a cut (the body ended early, the connection failed), or events iterated only in part.
   */
  message(): Promise<ConversationResponse>;
}

/** What has the answer's stream: a fetch `Response`, its body, any async source of chunks, or a whole transcript. */
export type StreamSource =
  | FetchResponse
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array | string | object>
  | Iterable<Uint8Array | string>
  | string;

/** The part of a fetch `Response` read here (undici's, a browser's, node-fetch's). */
export interface FetchResponse {
  ok: boolean;
  status: number;
  body: ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
}

/**
 * Reads an answer's stream with a format's decoder (`openaiStreamDecoder()`, `anthropicStreamDecoder()`): the
 * SSE bytes of a body (cut anywhere), or the event objects an official SDK yields (each read as the SSE message it
 * was). A `Response` that is not 2xx throws an `UpstreamError` with its status and body when read. The decoder's
 * `finish()` is called at the end, so a body that stops early ends in the format's error, never in an answer that
 * looks whole. Read it once.
 */
export function readStream(source: StreamSource, decoder: IncrementalDecoder<SseMessage>): AnswerStream {
  return new DecodedStream(source, decoder);
}

class DecodedStream implements AnswerStream {
  private readonly answer = createAccumulator();
  private started = false;

  constructor(
    private readonly source: StreamSource,
    private readonly decoder: IncrementalDecoder<SseMessage>,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<StreamEvent> {
    if (this.started) throw new Error("an answer stream is read once: keep its events, or call message()");
    this.started = true;
    try {
      for await (const message of messagesOf(this.source)) yield* this.fold(this.decoder.push(message));
    } catch (error) {
      if (error instanceof UpstreamError) throw error;
      // The connection failed mid-body: what came is kept, and the answer ends in an error.
      const cause = error instanceof Error ? error.message : String(error);
      yield* this.fold([{ type: "error", error: { type: "api_error", message: `the stream was cut: ${cause}` } }]);
      return;
    }
    yield* this.fold(this.decoder.finish());
  }

  async message(): Promise<ConversationResponse> {
    if (!this.started) for await (const _ of this);
    return this.answer.result();
  }

  private fold(events: StreamEvent[]): StreamEvent[] {
    for (const event of events) if (!this.answer.ended) this.answer.push(event);
    return events;
  }
}

async function* messagesOf(source: StreamSource): AsyncGenerator<SseMessage> {
  const sse = new SseDecoder();
  for await (const chunk of chunksOf(source)) {
    if (typeof chunk === "string" || chunk instanceof Uint8Array) yield* sse.push(chunk);
    else if (chunk instanceof ArrayBuffer) yield* sse.push(new Uint8Array(chunk));
    else yield parsedEvent(chunk);
  }
  yield* sse.finish();
}

async function* chunksOf(source: StreamSource): AsyncGenerator<Uint8Array | string | object> {
  if (typeof source === "string") {
    yield source;
    return;
  }
  if (isResponse(source)) {
    if (!source.ok) throw await failedResponse(source);
    if (source.body === null) return;
    yield* readerChunks(source.body);
    return;
  }
  if (isReadableStream(source)) {
    yield* readerChunks(source);
    return;
  }
  yield* source as AsyncIterable<Uint8Array | string | object>;
}

/** A web stream through its reader: not every browser makes `ReadableStream` async-iterable. */
async function* readerChunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/** An SDK's parsed event as the SSE message it came in: its `type` the event name, the object the data. */
function parsedEvent(event: object): SseMessage {
  const type = (event as { type?: unknown }).type;
  const data = JSON.stringify(event);
  return typeof type === "string" ? { event: type, data } : { data };
}

async function failedResponse(response: FetchResponse): Promise<UpstreamError> {
  const body = await response.text().catch(() => "");
  let message = `the upstream answered ${response.status}`;
  try {
    const error = (JSON.parse(body) as { error?: { message?: unknown } } | null)?.error;
    if (typeof error?.message === "string") message += `: ${error.message}`;
  } catch {
    if (body !== "") message += `: ${body.slice(0, 200)}`;
  }
  const type = errorTypeForStatus(response.status);
  return new UpstreamError(type, message, {
    upstreamStatus: response.status,
    body,
    retryable: isRetryableStatus(response.status),
  });
}

function isResponse(source: object): source is FetchResponse {
  return (
    "ok" in source && "status" in source && "body" in source && typeof (source as FetchResponse).text === "function"
  );
}

function isReadableStream(source: object): source is ReadableStream<Uint8Array> {
  return typeof (source as ReadableStream).getReader === "function";
}
