import type { ConversationStore, TraceQuery, TraceRecord, TraceSummary } from "../../store/types.js";
import { sideBlocks } from "./align.js";
import { rowOf } from "./conversation-view.js";
import { clientFormat, pairing, readRequest } from "./exchange-view.js";
import type { PreviousView } from "./view-types.js";

/** How many of the newest matching traces are searched for the exchange and the one before it. */
const SEARCHED = 1_000;
const PAGE = 200;

/**
 * An exchange's client request against the one before it: in the same conversation, or (a client that keeps its
 * own history, as Claude Code does) the previous exchange of the same tenant, route and model. What the client
 * changed in its own history shows as changed, moved or removed blocks; its new turn as added ones.
 */
export async function previousView(
  store: ConversationStore,
  trace: TraceRecord,
  tenant: string | undefined,
): Promise<PreviousView> {
  const by = trace.conversationId === undefined ? "session" : "conversation";
  const query: TraceQuery = { limit: PAGE };
  if (trace.conversationId !== undefined) query.conversationId = trace.conversationId;
  else if (trace.clientModel !== undefined) query.model = trace.clientModel;
  if (tenant !== undefined) query.tenant = tenant;
  const previous = await findPrevious(store, query, trace);
  if (previous === undefined) return {};
  const earlier = await store.getTrace(previous.id);
  if (earlier === undefined) return {};
  const format = clientFormat(trace.route);
  const left = readRequest(format, earlier.clientRequest);
  const right = readRequest(format, trace.clientRequest);
  return {
    previous: rowOf(previous),
    by,
    pairing: pairing(left, right, sideBlocks(left.messages), sideBlocks(right.messages)),
  };
}

async function findPrevious(
  store: ConversationStore,
  query: TraceQuery,
  trace: TraceRecord,
): Promise<TraceSummary | undefined> {
  let seen = false;
  for (let searched = 0; searched < SEARCHED; searched += PAGE) {
    const page = await store.listTraces(query);
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
