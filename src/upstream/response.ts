import type { Dispatcher } from "undici";
import { isParleyError, UpstreamError } from "../core/index.js";
import type { Cancellation } from "./cancellation.js";
import { upstreamErrorForFailure } from "./errors.js";

export type ResponseHeaders = Record<string, string | string[] | undefined>;

/** What a dispatched request resolves to once the upstream's status line and headers are in. */
export interface RawUpstreamResponse {
  statusCode: number;
  headers: ResponseHeaders;
  body: UpstreamBody;
}

/** Bytes an unread body may hold before the upstream socket is paused (the reader is behind). */
const HIGH_WATER_BYTES = 64 * 1024;

/** What bounds one response body: its size, and the secrets its failures' messages must not carry. */
export interface BodyLimits {
  /** The most bytes a body may have: past it the request ends and the body fails with a 502. */
  maxBytes: number;
  secrets: readonly string[];
}

const UNLIMITED: BodyLimits = { maxBytes: Number.POSITIVE_INFINITY, secrets: [] };

/**
 * An upstream response body, read once: whole (`text`, `json`) or chunk by chunk (`for await`). Reading is
 * pulled: while the reader is behind by more than `HIGH_WATER_BYTES`, the socket is paused, so a slow client
 * slows the upstream instead of filling memory. Chunks arrive from undici's handler callbacks and go to the
 * reader with no stream machinery in between, which is most of what a streamed frame costs in Node. A body larger
 * than `limits.maxBytes` ends the request, and a failure (reset, idle timeout) reaches the reader as an
 * `UpstreamError`, so that whatever reads it answers with the documented status.
 */
export class UpstreamBody implements AsyncIterable<Uint8Array> {
  private readonly queue: Buffer[] = [];
  private queuedBytes = 0;
  private paused = false;
  private ended = false;
  private failure: unknown;
  private waiting: { resolve(result: IteratorResult<Uint8Array>): void; reject(error: unknown): void } | undefined;
  /** Set by `text`: every chunk is kept until the end. */
  private whole: { resolve(text: string): void; reject(error: unknown): void } | undefined;
  /** Set by `text(maxBytes)`: the text is complete once it has this many bytes, and the rest is not read. */
  private wholeCap = Number.POSITIVE_INFINITY;
  private read = false;
  private received = 0;

  constructor(
    private readonly resume: () => void,
    private readonly abort: (reason: Error) => void,
    private readonly limits: BodyLimits = UNLIMITED,
  ) {}

  /** The handler's side: a chunk arrived. False pauses the socket until the reader catches up. */
  push(chunk: Buffer): boolean {
    if (this.ended) return true;
    this.received += chunk.length;
    if (this.received > this.limits.maxBytes) {
      const error = new UpstreamError(
        "api_error",
        `upstream answer is larger than the limit of ${this.limits.maxBytes} bytes (limits.maxAnswerBytes)`,
        { retryable: false, status: 502 },
      );
      this.fail(error);
      this.abort(error);
      return true;
    }
    if (this.whole !== undefined && this.queuedBytes + chunk.length >= this.wholeCap) {
      this.queue.push(chunk.subarray(0, this.wholeCap - this.queuedBytes));
      this.queuedBytes = this.wholeCap;
      this.end();
      this.abort(new Error("the rest of the response body is not wanted"));
      return true;
    }
    const waiting = this.waiting;
    if (waiting !== undefined) {
      this.waiting = undefined;
      waiting.resolve({ value: chunk, done: false });
      return true;
    }
    this.queue.push(chunk);
    this.queuedBytes += chunk.length;
    if (this.whole !== undefined || this.queuedBytes < HIGH_WATER_BYTES) return true;
    this.paused = true;
    return false;
  }

  /** The handler's side: the body is complete. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.settleReader();
  }

  /** The handler's side: the connection failed, timed out or was aborted mid-body. */
  fail(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = isParleyError(error) ? error : upstreamErrorForFailure(error, this.limits.secrets);
    this.discardQueue();
    this.settleReader(this.failure);
  }

  /**
   * The whole body as UTF-8 text (invalid sequences replaced, as a browser would); with `maxBytes`, its first
   * `maxBytes` bytes at most, and the rest is not read (an error body is wanted for its message only).
   */
  text(maxBytes = Number.POSITIVE_INFINITY): Promise<string> {
    this.claim();
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve(this.drain());
    if (this.queuedBytes >= maxBytes) {
      const text = Buffer.concat(this.queue, this.queuedBytes).subarray(0, maxBytes).toString();
      this.ended = true;
      this.discardQueue();
      this.abort(new Error("the rest of the response body is not wanted"));
      return Promise.resolve(text);
    }
    this.wholeCap = maxBytes;
    this.resumeIfPaused();
    return new Promise((resolve, reject) => {
      this.whole = { resolve, reject };
    });
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    this.claim();
    return {
      next: () => this.next(),
      return: () => {
        // The reader stopped early: the rest of the answer is not wanted, so the request ends here.
        if (!this.ended) this.abort(new Error("the response body was not read to the end"));
        this.ended = true;
        this.discardQueue();
        this.settleReader();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private next(): Promise<IteratorResult<Uint8Array>> {
    const chunk = this.queue.shift();
    if (chunk !== undefined) {
      this.queuedBytes -= chunk.length;
      if (this.queuedBytes < HIGH_WATER_BYTES) this.resumeIfPaused();
      return Promise.resolve({ value: chunk, done: false });
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    this.resumeIfPaused();
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  private claim(): void {
    if (this.read) throw new Error("the response body has already been read");
    this.read = true;
  }

  private resumeIfPaused(): void {
    if (!this.paused) return;
    this.paused = false;
    this.resume();
  }

  /** Answers whoever waits for the body (`text`, or a pending `next`): with what it is owed, or with `error`. */
  private settleReader(error?: unknown): void {
    const { whole, waiting } = this;
    this.whole = undefined;
    this.waiting = undefined;
    if (error !== undefined) {
      whole?.reject(error);
      waiting?.reject(error);
    } else {
      whole?.resolve(this.drain());
      waiting?.resolve({ value: undefined, done: true });
    }
  }

  private discardQueue(): void {
    this.queue.length = 0;
    this.queuedBytes = 0;
  }

  private drain(): string {
    const text =
      this.queue.length === 1
        ? this.queue[0]!.toString("utf8")
        : Buffer.concat(this.queue, this.queuedBytes).toString();
    this.discardQueue();
    return text;
  }
}

/**
 * One request's callbacks for undici's `dispatch` (the handler interface undici's own `request` is built on,
 * without its Readable and async-resource wrapping). Resolves at the response headers; the body follows
 * through `UpstreamBody`. `cancel` aborts the request at any point.
 */
export class ResponseHandler implements Dispatcher.DispatchHandler {
  private abortRequest: ((reason: Error) => void) | undefined;
  private body: UpstreamBody | undefined;
  private settled = false;
  private readonly stopListening: (() => void) | undefined;

  constructor(
    private readonly resolve: (response: RawUpstreamResponse) => void,
    private readonly reject: (error: unknown) => void,
    private readonly cancel: Cancellation | undefined,
    private readonly limits: BodyLimits = UNLIMITED,
  ) {
    this.stopListening = cancel?.onAbort((reason) => this.abortRequest?.(reason));
  }

  onConnect(abort: (reason?: Error) => void): void {
    if (this.cancel?.reason !== undefined) {
      abort(this.cancel.reason);
      return;
    }
    this.abortRequest = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true;
    const abort = (reason: Error) => this.abortRequest?.(reason);
    this.body = new UpstreamBody(resume, abort, this.limits);
    this.settled = true;
    this.resolve({ statusCode, headers: parseRawHeaders(rawHeaders), body: this.body });
    return true;
  }

  onData(chunk: Buffer): boolean {
    return this.body === undefined ? true : this.body.push(chunk);
  }

  onComplete(): void {
    this.cleanUp();
    this.body?.end();
  }

  onError(error: Error): void {
    this.cleanUp();
    if (this.settled) this.body?.fail(error);
    else {
      this.settled = true;
      this.reject(error);
    }
  }

  private cleanUp(): void {
    this.stopListening?.();
  }
}

/** undici's raw header list (name, value, name, value...) as an object: names lower-cased, repeats as arrays. */
export function parseRawHeaders(raw: Buffer[]): ResponseHeaders {
  // No prototype: a header named `__proto__` is a header like any other.
  const headers: ResponseHeaders = Object.create(null);
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index]!.toString("latin1").toLowerCase();
    const value = raw[index + 1]!.toString("latin1");
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else headers[name] = [existing, value];
  }
  return headers;
}
