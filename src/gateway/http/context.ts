import type { IncomingMessage, ServerResponse } from "node:http";
import { type FormatId, PARLEY_FORMAT } from "../../formats/registry.js";
import { DEFAULT_OWNER } from "../../store/owner.js";
import { Cancellation } from "../../upstream/cancellation.js";
import { timeOrderedId } from "./ids.js";

/** Which API's error shape a route answers in. */
export type ApiShape = FormatId;

/** What the one log line per request carries besides route, status and duration. */
export interface RequestLogFields {
  provider?: string;
  upstreamModel?: string;
  clientModel?: string;
  stream?: boolean;
  upstreamMs?: number;
  firstTokenMs?: number;
  attempts?: number;
  inputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  outputTokens?: number;
  errorType?: string;
  conversationId?: string;
  /** The upstream answered a streaming request with one JSON body (relayed as a stream all the same). */
  upstreamIgnoredStream?: boolean;
  /** Whose token count a client's `count_tokens` got: the provider's own, or the gateway's estimate. */
  tokenCount?: "upstream" | "estimate";
  /** Why the provider's own count was not used, where it was asked for one. */
  tokenCountError?: string;
}

/** One request on its way through the middleware. */
export interface Context {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly requestId: string;
  readonly method: string;
  /** The path without the query string. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly startedAt: number;
  /** Cancelled when the client goes away before the response is complete. */
  readonly clientGone: Cancellation;
  api: ApiShape;
  /** Route label for metrics and logs, e.g. `POST /v1/messages`. */
  route: string;
  params: Record<string, string>;
  log: RequestLogFields;
  /** Whose stored conversations this request reaches: its key's tenant (`auth.ts`), `DEFAULT_OWNER` without keys. */
  tenant: string;
}

export function createContext(req: IncomingMessage, res: ServerResponse): Context {
  const url = req.url ?? "/";
  const queryStart = url.indexOf("?");
  const clientGone = new Cancellation();
  res.once("close", () => {
    if (!res.writableFinished) clientGone.abort(new Error("client disconnected"));
  });
  const requestId = timeOrderedId("req_");
  res.setHeader("request-id", requestId);
  res.setHeader("x-request-id", requestId);
  return {
    req,
    res,
    requestId,
    method: req.method ?? "GET",
    path: queryStart === -1 ? url : url.slice(0, queryStart),
    query: new URLSearchParams(queryStart === -1 ? "" : url.slice(queryStart + 1)),
    startedAt: performance.now(),
    clientGone,
    api: PARLEY_FORMAT,
    route: "unmatched",
    params: {},
    log: {},
    tenant: DEFAULT_OWNER,
  };
}

/** Sends a JSON body in one write. */
export function sendJson(ctx: Context, status: number, body: unknown, headers?: Record<string, string>): void {
  sendJsonText(ctx, status, JSON.stringify(body), headers);
}

/** A body already serialised (parts of it kept as a client sent them). */
export function sendJsonText(ctx: Context, status: number, text: string, headers?: Record<string, string>): void {
  ctx.res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  ctx.res.end(text);
}
