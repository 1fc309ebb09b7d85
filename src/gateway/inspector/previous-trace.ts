import type { PreviousView } from "../../inspect/view-types.js";
import type { TraceQuery, TraceRecord, TraceStore, TraceSummary } from "../../store/traces/trace-store.js";

/** What finding the previous exchange reads of the trace store. */
type Traces = Pick<TraceStore, "list" | "get">;

/** How many of the newest matching traces are searched for the exchange and the one before it. */
const SEARCHED = 1_000;
const PAGE = 200;

/** The exchange before another, as its view (`previousView`) reads it. */
export interface PreviousExchange {
  previous: TraceSummary;
  earlier: TraceRecord;
  by: NonNullable<PreviousView["by"]>;
}

/**
 * The exchange before this one: in the same conversation, or (a client that keeps its own history, as Claude Code
 * does) the previous exchange of the same tenant, route and model. Undefined when there is none.
 */
export async function findPrevious(
  store: Traces,
  trace: TraceRecord,
  tenant: string | undefined,
): Promise<PreviousExchange | undefined> {
  const by = trace.conversationId === undefined ? "session" : "conversation";
  const query: TraceQuery = { limit: PAGE };
  if (trace.conversationId !== undefined) query.conversationId = trace.conversationId;
  else if (trace.clientModel !== undefined) query.model = trace.clientModel;
  if (tenant !== undefined) query.tenant = tenant;
  const previous = await searchPrevious(store, query, trace);
  if (previous === undefined) return undefined;
  const earlier = await store.get(previous.id);
  if (earlier === undefined) return undefined;
  return { previous, earlier, by };
}

async function searchPrevious(store: Traces, query: TraceQuery, trace: TraceRecord): Promise<TraceSummary | undefined> {
  let seen = false;
  for (let searched = 0; searched < SEARCHED; searched += PAGE) {
    const page = await store.list(query);
    for (const candidate of page.traces) {
      if (
        seen &&
        candidate.route === trace.route &&
        (query.conversationId !== undefined || candidate.clientModel === trace.clientModel)
      ) {
        return candidate;
      }
      if (candidate.id === trace.id) seen = true;
    }
    if (page.nextCursor === undefined) return undefined;
    query.cursor = page.nextCursor;
  }
  return undefined;
}
