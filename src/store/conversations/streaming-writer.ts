import type { Role, StreamEvent } from "../../core/index.js";
import type { StoredMessage, StreamingMessageWriter } from "./conversation-store.js";
import { PartBuilder, type PartChange } from "./part-builder.js";

/** What a backend gives the writer: one transaction that upserts parts and, at the end, marks completion. */
export interface MessageSink {
  writeParts(changes: readonly PartChange[], complete: boolean): Promise<void>;
}

export interface FlushPolicy {
  /** Longest time an event waits in memory before it is written. */
  intervalMs: number;
  /** Events that trigger a write without waiting for the timer. */
  maxEvents: number;
}

/** A crash loses at most the last ~50 ms or 64 events; a long answer costs a few transactions per second. */
export const DEFAULT_FLUSH_POLICY: FlushPolicy = { intervalMs: 50, maxEvents: 64 };

/**
 * The backend-independent streaming writer. `push` is synchronous and only folds the event; writes happen
 * in batches on a timer or an event count, one at a time (a chain of promises), so they never reorder.
 * A failed background write is kept and rethrown by the next `flush`, `complete` or `abort`.
 */
export function createStreamingWriter(options: {
  seq: number;
  role: Role;
  createdAt: string;
  sink: MessageSink;
  policy?: FlushPolicy;
}): StreamingMessageWriter {
  const { seq, role, createdAt, sink } = options;
  const policy = options.policy ?? DEFAULT_FLUSH_POLICY;
  const builder = new PartBuilder();
  let chain: Promise<void> = Promise.resolve();
  let pendingEvents = 0;
  let timer: NodeJS.Timeout | undefined;
  let failure: unknown;
  let finished = false;

  const write = async (complete: boolean): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    pendingEvents = 0;
    const changes = builder.takeChanges();
    if (changes.length === 0 && !complete) return;
    try {
      await sink.writeParts(changes, complete);
    } catch (error) {
      builder.restore(changes);
      throw error;
    }
  };

  const enqueue = (complete: boolean): Promise<void> => {
    const next = chain.then(() => write(complete));
    chain = next.catch((error: unknown) => {
      failure ??= error;
    });
    return next;
  };

  const background = (): void => {
    void enqueue(false).catch(() => {});
  };

  const rethrowFailure = (): void => {
    if (failure === undefined) return;
    const error = failure;
    failure = undefined;
    throw error;
  };

  return {
    seq,
    push(event: StreamEvent): void {
      if (finished) return;
      builder.apply(event);
      pendingEvents++;
      if (pendingEvents >= policy.maxEvents) {
        // Count from here: the write runs later and takes everything pushed until then.
        pendingEvents = 0;
        background();
      } else if (timer === undefined) {
        timer = setTimeout(background, policy.intervalMs);
        // A pending flush must not keep a process alive; complete/abort write what is left.
        timer.unref();
      }
    },
    async flush(): Promise<void> {
      await chain;
      rethrowFailure();
      await enqueue(false);
    },
    async complete(): Promise<StoredMessage> {
      finished = true;
      await chain;
      rethrowFailure();
      await enqueue(true);
      return { seq, message: { role, parts: builder.parts() }, complete: true, createdAt };
    },
    async abort(): Promise<void> {
      finished = true;
      await chain;
      rethrowFailure();
      await enqueue(false);
    },
  };
}
