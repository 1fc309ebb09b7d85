import type { Part, StreamEvent } from "../../core/index.js";
import { type Accumulator, createAccumulator } from "../../stream/accumulate.js";

/** A part whose stored text must be rewritten at the next flush. */
export interface PartChange {
  position: number;
  part: string;
}

/**
 * The store's side of the stream reducer: the fold every whole answer goes through (`createAccumulator`), so that
 * a streamed answer is stored as the same answer unstreamed, with the parts changed since the last flush as the
 * JSON text a backend writes. It is the reducer's lenient form: a malformed sequence (a delta for a block never
 * opened) is absorbed, never thrown, since the store must keep whatever arrived.
 */
export class PartBuilder {
  private readonly reducer: Accumulator = createAccumulator({ lenient: true, trackChanges: true });

  apply(event: StreamEvent): void {
    this.reducer.push(event);
  }

  /** The parts so far, in position order; a tool call's arguments parsed (or repaired) as far as they go. */
  parts(): Part[] {
    return this.reducer.snapshot().message.parts;
  }

  takeChanges(): PartChange[] {
    return this.reducer.takeChanges().map(({ position, part }) => ({ position, part: JSON.stringify(part) }));
  }

  /** Puts changes back after a failed write, so the next flush retries them. */
  restore(changes: readonly PartChange[]): void {
    this.reducer.restoreChanges(changes.map((change) => change.position));
  }
}
