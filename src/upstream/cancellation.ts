/**
 * A one-shot "stop" for a request's upstream work: what an AbortSignal does here, without EventTarget. In Node
 * 20, creating an AbortController and adding and removing one listener costs about 7 µs, and a request needed
 * two or three of them; this costs a fraction of a microsecond.
 */
export class Cancellation {
  private listeners: Array<(reason: Error) => void> | undefined;
  /** Why it was cancelled; undefined while it was not. */
  reason: Error | undefined;

  get aborted(): boolean {
    return this.reason !== undefined;
  }

  /** Cancels (once; later calls change nothing) and tells every listener. */
  abort(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener(reason);
  }

  /** Calls `listener` on cancellation (not when already cancelled: check `aborted` first). Returns its removal. */
  onAbort(listener: (reason: Error) => void): () => void {
    if (this.reason !== undefined) return noop;
    this.listeners ??= [];
    this.listeners.push(listener);
    return () => {
      const index = this.listeners?.indexOf(listener) ?? -1;
      if (index !== -1) this.listeners!.splice(index, 1);
    };
  }
}

function noop(): void {}
