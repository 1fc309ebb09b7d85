import { TraceNotRecordedError } from "../../store/traces/trace-queue.js";
import type { TraceRecord } from "../../store/traces/trace-store.js";
import type { Context } from "../http/context.js";
import { timeOrderedId } from "../http/ids.js";
import type { GatewayState } from "../state.js";
import type { Exchange } from "./exchange.js";

/** How often a trace writer that keeps dropping is reported at `warn` (each drop is counted in /metrics). */
const DROP_WARNING_INTERVAL_MS = 60_000;
const lastDropWarning = new WeakMap<GatewayState, number>();

/**
 * Hands the exchange to the store's trace writer: references to the strings the request already has (the
 * client's body text, the upstream body text, the capped response copies), a few numbers and the reports.
 * Redacting, chunking and writing happen in the writer; nothing here waits, and a trace that is not
 * recorded is logged and counted, never the client's concern.
 */
export function recordTrace(
  ctx: Context,
  state: GatewayState,
  exchange: Exchange,
  clientBodyText: string,
  status: number | undefined,
): void {
  if (!state.config.traces.enabled || state.store === undefined) return;
  const totalMs = performance.now() - ctx.startedAt;
  const trace: TraceRecord = {
    id: timeOrderedId("trace_"),
    requestId: ctx.requestId,
    createdAt: new Date().toISOString(),
    route: ctx.route,
    provider: exchange.provider.config.name,
    clientModel: exchange.request.clientModel,
    upstreamModel: exchange.upstreamModel,
    // The client key's tenant (DEFAULT_OWNER without keys): a key's own traces can be told from the others'.
    tenant: ctx.tenant,
    stream: exchange.request.stream,
    durationMs: totalMs,
    clientRequest: clientBodyText,
    upstreamRequest: exchange.bodyText,
    upstreamResponse: exchange.trace.upstreamResponse,
    clientResponse: exchange.trace.clientResponse,
    lossy: [...exchange.request.lossy, ...exchange.plan.lossy, ...exchange.trace.responseLossy],
    repair: exchange.plan.repair,
    timings: { ...exchange.trace.timings, totalMs },
  };
  if (status !== undefined) trace.status = status;
  if (exchange.trace.arrivals !== undefined) trace.arrivals = exchange.trace.arrivals;
  if (exchange.request.historyCount > 0) trace.storedMessages = exchange.request.historyCount;
  if (trace.lossy.length > 0) {
    trace.lossyStages = { clientRequest: exchange.request.lossy.length, upstreamRequest: exchange.plan.lossy.length };
  }
  if (exchange.conversationId !== undefined) trace.conversationId = exchange.conversationId;
  const usage = exchange.trace.usage;
  if (usage !== undefined) {
    trace.inputTokens = usage.inputTokens;
    // 0 when the upstream reported none: a trace from before these figures were kept has none, and its hit ratio
    // is unknown rather than nothing.
    trace.cacheReadTokens = usage.cacheReadInputTokens ?? 0;
    trace.cacheWriteTokens = usage.cacheCreationInputTokens ?? 0;
    trace.outputTokens = usage.outputTokens;
  }
  if (exchange.switchedFrom !== undefined) trace.switchedFrom = exchange.switchedFrom;
  const requestId = ctx.requestId;
  const logger = state.logger;
  state.store.traces.record(trace).catch((error: unknown) => {
    const dropped = error instanceof TraceNotRecordedError && error.reason === "queue_full";
    if (!dropped) {
      logger.warn({ requestId, err: (error as Error).message }, "trace not recorded");
      return;
    }
    const now = Date.now();
    if (now - (lastDropWarning.get(state) ?? 0) < DROP_WARNING_INTERVAL_MS) return;
    lastDropWarning.set(state, now);
    logger.warn(
      { requestId, err: error.message },
      "traces dropped: the trace writer is behind (counted in parley_traces_dropped_total)",
    );
  });
}
