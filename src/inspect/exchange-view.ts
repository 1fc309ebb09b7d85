import type { FormatAdapter, ViewedBody, ViewedMessage } from "../formats/adapter.js";
import { FORMATS } from "../formats/registry.js";
import type { TraceRecord } from "../store/traces/trace-store.js";
import { alignSides, type SideBlocks, sideBlocks } from "./align.js";
import { placeNotes } from "./notes.js";
import { assembledAnswer, streamView } from "./stream-view.js";
import { cacheHitRatio } from "./token-view.js";
import type { ExchangeView, Pairing, Side, TraceRow } from "./view-types.js";

/** A body read as messages by its format's view, or why not. */
export interface ReadBody {
  side: Side;
  messages: ViewedMessage[];
}

/**
 * One exchange for the page: the client's request against the upstream request, the client's answer against the
 * upstream's, block by block, with every lossy and repair entry at the block it names.
 */
export function exchangeView(trace: TraceRecord, upstreamFormat: FormatAdapter | undefined): ExchangeView {
  const { clientRequest, upstreamRequest, clientResponse, upstreamResponse } = readExchange(trace, upstreamFormat);
  const sides = {
    clientRequest: sideBlocks(clientRequest.messages),
    upstreamRequest: sideBlocks(upstreamRequest.messages),
    clientResponse: sideBlocks(clientResponse.messages),
    upstreamResponse: sideBlocks(upstreamResponse.messages),
  };
  const unplaced = placeNotes(trace, { client: clientRequest.messages, upstream: upstreamRequest.messages }, sides);
  const view: ExchangeView = {
    trace: traceRow(trace),
    request: pairing(clientRequest, upstreamRequest, sides.clientRequest, sides.upstreamRequest),
    response: pairing(clientResponse, upstreamResponse, sides.clientResponse, sides.upstreamResponse),
    streams: {},
    unplaced,
  };
  view.trace.timings = trace.timings;
  if (trace.tenant !== undefined) view.trace.tenant = trace.tenant;
  if (trace.storedMessages !== undefined) view.trace.storedMessages = trace.storedMessages;
  if (trace.stream) {
    if (trace.clientResponse !== undefined) {
      view.streams.client = streamView(trace.clientResponse, trace.arrivals?.clientResponse);
    }
    if (trace.upstreamResponse !== undefined) {
      view.streams.upstream = streamView(trace.upstreamResponse, trace.arrivals?.upstreamResponse);
    }
  }
  return view;
}

/** An exchange's four bodies, each read as messages by its format's view. */
export interface ReadExchange {
  clientRequest: ReadBody;
  upstreamRequest: ReadBody;
  upstreamResponse: ReadBody;
  clientResponse: ReadBody;
}

/**
 * Reads the client's bodies by the format of the trace's route, the upstream's by the provider's format (or, for a
 * provider the configuration no longer has, or none at hand, the format its request or its answer shows).
 */
export function readExchange(trace: TraceRecord, upstreamFormat: FormatAdapter | undefined): ReadExchange {
  const client = clientFormat(trace.route);
  const upstream =
    upstreamFormat ?? guessFormat(trace.upstreamRequest) ?? answerFormat(trace.upstreamResponse) ?? client;
  return {
    clientRequest: readRequest(client, trace.clientRequest),
    upstreamRequest: readRequest(upstream, trace.upstreamRequest),
    upstreamResponse: readResponse(upstream, trace.upstreamResponse, trace.stream),
    clientResponse: readResponse(client, trace.clientResponse, trace.stream),
  };
}

export function pairing(left: ReadBody, right: ReadBody, leftBlocks: SideBlocks, rightBlocks: SideBlocks): Pairing {
  const rows = alignSides(leftBlocks, rightBlocks, left.messages, right.messages);
  // Against a side that could not be read, nothing is known to have changed.
  if (left.side.unread || right.side.unread) for (const row of rows) row.change = "same";
  // Most of a long conversation is the same on both sides: its text goes to the page once.
  for (const row of rows) {
    if (row.left === undefined || row.right === undefined || row.right.text === "") continue;
    if (row.left.text !== row.right.text) continue;
    row.right.text = "";
    row.right.sameText = true;
  }
  return { left: left.side, right: right.side, rows };
}

/** The format whose client routes include the trace's route (`POST /v1/messages`). */
export function clientFormat(route: string): FormatAdapter {
  return (
    FORMATS.find((format) => format.client.routes.some((known) => `${known.method} ${known.path}` === route)) ??
    FORMATS[0]!
  );
}

/**
 * For a provider the configuration no longer has: the format whose mark the request's messages (or, for a
 * request without messages, its input items) carry.
 */
function guessFormat(body: string | undefined): FormatAdapter | undefined {
  const parsed = parse(body) as { messages?: unknown; input?: unknown } | undefined;
  const entries = Array.isArray(parsed?.messages) ? parsed.messages : parsed?.input;
  if (!Array.isArray(entries)) return undefined;
  const messages = entries.filter((message) => message !== null && typeof message === "object");
  return FORMATS.find((format) =>
    messages.some((message) => format.history.recognizes?.(message as Record<string, unknown>)),
  );
}

/**
 * For a provider the configuration no longer has (or none at hand) whose request carries no format's mark: the
 * format whose reader makes an answer of the upstream's, whole or streamed.
 */
function answerFormat(body: string | undefined): FormatAdapter | undefined {
  if (body === undefined) return undefined;
  const parsed = parse(body);
  if (parsed !== undefined) return FORMATS.find((format) => format.view?.response(parsed) !== undefined);
  return FORMATS.find((format) => (assembledAnswer(format, body)?.parts.length ?? 0) > 0);
}

export function readRequest(format: FormatAdapter, body: string | undefined): ReadBody {
  return fromView(format, body, format.view?.request(parse(body)));
}

function readResponse(format: FormatAdapter, body: string | undefined, stream: boolean | undefined): ReadBody {
  if (body === undefined) return { side: { bytes: 0, unread: true }, messages: [] };
  const parsed = parse(body);
  // A trace that does not say whether it streamed (an older one) is taken at its body's word.
  if (parsed !== undefined || stream === false) return fromView(format, body, format.view?.response(parsed));
  const assembled = assembledAnswer(format, body);
  return assembled === undefined
    ? { side: { format: format.label, bytes: byteLength(body), unread: true }, messages: [] }
    : { side: { format: format.label, bytes: byteLength(body) }, messages: [assembled] };
}

function fromView(format: FormatAdapter, body: string | undefined, view: ViewedBody | undefined): ReadBody {
  const side: Side = { format: format.label, bytes: body === undefined ? 0 : byteLength(body) };
  if (view === undefined) return { side: { ...side, unread: true }, messages: [] };
  if (view.model !== undefined) side.model = view.model;
  if (view.tools !== undefined) side.tools = view.tools;
  return { side, messages: view.messages };
}

export function traceRow(
  trace: Omit<TraceRow, "lossyCount" | "repairCount"> & Partial<TraceRecord>,
): ExchangeView["trace"] {
  const row: ExchangeView["trace"] = {
    id: trace.id,
    requestId: trace.requestId,
    createdAt: trace.createdAt,
    route: trace.route,
    lossyCount: trace.lossy?.length ?? 0,
    repairCount: trace.repair?.length ?? 0,
    timings: {},
  };
  for (const key of ["provider", "clientModel", "upstreamModel", "conversationId"] as const) {
    if (trace[key] !== undefined) row[key] = trace[key];
  }
  for (const key of [
    "status",
    "durationMs",
    "inputTokens",
    "cacheReadTokens",
    "cacheWriteTokens",
    "outputTokens",
  ] as const) {
    if (trace[key] !== undefined) row[key] = trace[key];
  }
  const ratio = cacheHitRatio(row);
  if (ratio !== undefined) row.cacheHitRatio = ratio;
  if (trace.switchedFrom !== undefined) row.switchedFrom = { ...trace.switchedFrom };
  if (trace.stream !== undefined) row.stream = trace.stream;
  return row;
}

function parse(body: string | undefined): unknown {
  if (body === undefined) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function byteLength(text: string): number {
  return Buffer.byteLength(text);
}
