import type { TraceRecord, TraceSummary } from "../store/traces/trace-store.js";
import { sideBlocks } from "./align.js";
import { rowOf } from "./conversation-view.js";
import { clientFormat, pairing, readRequest } from "./exchange-view.js";
import type { PreviousView } from "./view-types.js";

/**
 * An exchange's client request against the one before it (found by the caller: in the same conversation, or the
 * previous exchange of the same tenant, route and model for a client that keeps its own history, as Claude Code
 * does). What the client changed in its own history shows as changed, moved or removed blocks; its new turn as
 * added ones.
 */
export function previousView(
  trace: TraceRecord,
  previous: TraceSummary,
  earlier: TraceRecord,
  by: NonNullable<PreviousView["by"]>,
): PreviousView {
  const format = clientFormat(trace.route);
  const left = readRequest(format, earlier.clientRequest);
  const right = readRequest(format, trace.clientRequest);
  return {
    previous: rowOf(previous),
    by,
    pairing: pairing(left, right, sideBlocks(left.messages), sideBlocks(right.messages)),
  };
}
