import type { StoredMessage } from "../store/conversations/conversation-store.js";
import type { TraceSummary } from "../store/traces/trace-store.js";
import { blockOf } from "./part-view.js";
import { cacheHitRatio, tokenTotals } from "./token-view.js";
import type { ConversationView, TraceRow, TurnView } from "./view-types.js";

/** How long after an exchange's trace was taken a message it produced may still be dated (a slow store). */
const SLACK_MS = 2_000;

/**
 * A stored conversation turn by turn, each message with the exchange that stored it: the one whose time span
 * holds the message's (a stateful turn stores the client's messages and the answer while it runs). A message no
 * exchange's span holds was appended through the conversations API.
 */
export function conversationView(
  id: string,
  stored: readonly StoredMessage[],
  traces: readonly TraceSummary[],
): ConversationView {
  const spans = traces
    .map((trace) => {
      const end = Date.parse(trace.createdAt);
      return { trace, start: end - (trace.durationMs ?? 0), end };
    })
    .sort((a, b) => a.end - b.end);
  const messages: TurnView[] = stored.map((entry) => {
    const at = Date.parse(entry.createdAt);
    const span =
      spans.find((candidate) => candidate.start <= at && at <= candidate.end) ??
      spans.find((candidate) => candidate.start <= at && at <= candidate.end + SLACK_MS);
    const turn: TurnView = {
      seq: entry.seq,
      role: entry.message.role,
      createdAt: entry.createdAt,
      complete: entry.complete,
      blocks: entry.message.parts.map((part, index) => blockOf({ part, path: `content[${index}]` })),
    };
    if (span !== undefined) turn.traceId = span.trace.id;
    return turn;
  });
  const rows = spans.map((span) => rowOf(span.trace));
  return { id, messages, traces: rows, tokens: tokenTotals(rows) };
}

/** A listed trace as the page shows it: its tenant left out, its cache hit ratio worked out. */
export function rowOf(trace: TraceSummary): TraceRow {
  const { tenant: _tenant, ...listed } = trace;
  const row: TraceRow = listed;
  const ratio = cacheHitRatio(row);
  if (ratio !== undefined) row.cacheHitRatio = ratio;
  return row;
}
