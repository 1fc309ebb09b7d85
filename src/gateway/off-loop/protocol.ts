import type { ConversationRequest, LossyEntry } from "../../core/index.js";
import type { AnswerState } from "../../formats/adapter.js";
import type { PreviousView } from "../../inspect/view-types.js";
import type { RepairEntry } from "../../repair/index.js";
import type { TraceRecord, TraceSummary } from "../../store/traces/trace-store.js";

/** What crosses between the event loop and a prepare thread (`prepare-pool.ts`, `prepare-worker.ts`). */

/** What reading a request needs: its text, and where it came (as `RequestPlace`, in a form a thread can take). */
export interface ReadInput {
  format: string;
  /** The route's index in its format's `client.routes`. */
  route: number;
  params: Record<string, string>;
  query: string;
  text: string;
  /** The headers a prompt-cache key is taken from. */
  sessionHeaders: Record<string, string>;
  /** Whether the gateway has a store (a stored answer's `store` then keeps it, which the thread does not do). */
  hasStore: boolean;
}

/**
 * What the event loop keeps of a read request: everything but its history. The history stays with the thread,
 * which plans it; the answer's decoders and encoders read the tools and settings, never the messages.
 */
export interface ReadSummary {
  clientModel: string;
  stream: boolean;
  /** The canonical request with `messages` empty. */
  slim: ConversationRequest;
  lossy: LossyEntry[];
  includeUsage?: boolean;
  state?: AnswerState;
  cacheKey: string;
  /** `conversationStart` of the whole request: `slim` has no messages. */
  conversationStart: string;
  inputEstimate: number;
}

/** A request the thread leaves to the event loop: it needs the store (stored history, a kept answer) or compaction. */
export interface NotOffLoop {
  onLoop: true;
}

export interface PlanInput {
  provider: string;
  /** The provider's preset as the event loop's connection has it now (a server recognised from its model list). */
  preset: string | undefined;
  upstreamModel: string;
  maxTokens: number | undefined;
  cacheKey: string | undefined;
  reasoningAsText: boolean;
}

/** The plan as the exchange reads it, its body already serialised. */
export interface PlannedBody {
  bodyText: string;
  lossy: LossyEntry[];
  repair: RepairEntry[];
}

/**
 * An inspector view of a large trace, built on a thread (`src/gateway/inspector/build-view.ts`): the trace (and for
 * the previous exchange's, the one before it) and the keys to keep out of the view. It comes back as the JSON the
 * route sends, in UTF-8.
 */
export type ViewInput = { secrets: readonly string[] } & (
  | { view: "exchange"; trace: TraceRecord; upstreamFormat: string | undefined }
  | {
      view: "previous";
      trace: TraceRecord;
      previous: TraceSummary;
      earlier: TraceRecord;
      by: NonNullable<PreviousView["by"]>;
    }
);

export type PrepareJob =
  | ({ kind: "read"; id: number } & ReadInput)
  | ({ kind: "plan"; id: number } & PlanInput)
  | { kind: "count"; id: number }
  | { kind: "release"; id: number }
  | ({ kind: "view"; id: number } & ViewInput);

/** An error as it crosses to the event loop, to be thrown there as the same class. */
export interface ThreadError {
  name: string;
  type?: string;
  message: string;
  status?: number;
  path?: string;
  details?: Record<string, unknown>;
}
