import { InvalidRequestError, ParleyError } from "../../core/index.js";
import { PARLEY_FORMAT } from "../../formats/registry.js";
import { conversationView, rowOf } from "../../inspect/conversation-view.js";
import { exchangeView } from "../../inspect/exchange-view.js";
import { previousView } from "../../inspect/previous-view.js";
import type { Store } from "../../store/open-store.js";
import { redactView } from "../../store/traces/redact.js";
import type { TraceQuery, TraceRecord, TraceSummary } from "../../store/traces/trace-store.js";
import { type Context, sendJson } from "../http/context.js";
import type { Router } from "../http/router.js";
import { OFF_LOOP_BODY_CHARACTERS, preparePool } from "../off-loop/prepare-pool.js";
import type { GatewayState } from "../state.js";
import { PAGE_HTML, pageAssets } from "./assets.js";
import { findPrevious } from "./previous-trace.js";
import { inspectorGuard } from "./security.js";

/** The most traces one list request returns. */
const MAX_PAGE = 200;
/** The most exchanges a conversation's page lists. */
const CONVERSATION_TRACES = 1_000;
const BODIES = ["clientRequest", "upstreamRequest", "upstreamResponse", "clientResponse"] as const;

/**
 * `/inspect`: the page (no data in it) and its assets need no key; every `/inspect/api/` route needs the API's
 * key, and with keys a key reaches only its tenant's traces and conversations. Nothing here runs on the request
 * path: an inspector nobody has open costs the gateway nothing. The views of a large trace (bodies over 1 MiB of
 * text, as for requests) are built on the prepare threads (`buildView`): on the event loop a 38.8 MB trace's held
 * every other request, `/health` included, for 5.1 s.
 */
export function addInspectorRoutes(router: Router, state: GatewayState): Router {
  const route = (pattern: string, auth: boolean, handler: (ctx: Context) => Promise<void>) =>
    router.add({
      method: "GET",
      pattern,
      api: PARLEY_FORMAT,
      // Checked here, after the headers, so that a refusal carries them too.
      auth: false,
      handler: async (ctx) => {
        inspectorGuard(ctx);
        if (auth) state.keys.check(ctx);
        await handler(ctx);
      },
    });
  route("/inspect", false, async (ctx) => sendText(ctx, 200, "text/html; charset=utf-8", PAGE_HTML));
  route("/inspect/assets/{name}", false, async (ctx) => serveAsset(ctx));
  route("/inspect/api/traces", true, async (ctx) => {
    const page = await store(state).traces.list(listQuery(ctx, state));
    sendJson(ctx, 200, { traces: page.traces.map(rowOf), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) });
  });
  route("/inspect/api/traces/{id}", true, async (ctx) => {
    const trace = await visibleTrace(ctx, state);
    const upstream = trace.provider === undefined ? undefined : state.providers[trace.provider]?.adapter;
    if (bodyCharacters(trace) > OFF_LOOP_BODY_CHARACTERS) {
      const view = { view: "exchange", trace, upstreamFormat: upstream?.id, secrets: state.secrets } as const;
      sendJsonBytes(ctx, await preparePool(state).view(view));
      return;
    }
    sendJson(ctx, 200, redactView(exchangeView(trace, upstream), state.secrets));
  });
  route("/inspect/api/traces/{id}/raw", true, async (ctx) => {
    const trace = await visibleTrace(ctx, state);
    const name = ctx.query.get("body");
    const body = BODIES.find((known) => known === name);
    if (body === undefined) throw new InvalidRequestError(`must be ${BODIES.join(", ")}`, "body");
    const text = trace[body];
    if (text === undefined) throw new ParleyError("not_found_error", `this trace has no ${body}`);
    sendText(ctx, 200, "text/plain; charset=utf-8", text);
  });
  route("/inspect/api/traces/{id}/previous", true, async (ctx) => {
    const trace = await visibleTrace(ctx, state);
    const found = await findPrevious(store(state).traces, trace, tenantOf(ctx, state));
    if (found === undefined) {
      sendJson(ctx, 200, {});
      return;
    }
    const { previous, earlier, by } = found;
    if (bodyCharacters(trace) + bodyCharacters(earlier) > OFF_LOOP_BODY_CHARACTERS) {
      const view = { view: "previous", trace, previous, earlier, by, secrets: state.secrets } as const;
      sendJsonBytes(ctx, await preparePool(state).view(view));
      return;
    }
    sendJson(ctx, 200, redactView(previousView(trace, previous, earlier, by), state.secrets));
  });
  route("/inspect/api/conversations/{id}", true, async (ctx) => {
    const id = ctx.params.id!;
    const stored = await store(state).conversations.load(id, { owner: ctx.tenant });
    if (stored === undefined) throw new ParleyError("not_found_error", `conversation '${id}' not found`);
    sendJson(
      ctx,
      200,
      redactView(conversationView(id, stored, await conversationTraces(ctx, state, id)), state.secrets),
    );
  });
  return router;
}

/** With keys, a key's own tenant; without, the one user sees every trace. */
function tenantOf(ctx: Context, state: GatewayState): string | undefined {
  return state.keys.enabled ? ctx.tenant : undefined;
}

function store(state: GatewayState): Store {
  if (state.store === undefined) throw new ParleyError("api_error", "no store is configured");
  return state.store;
}

/** Another tenant's trace is not found, exactly as an unknown id. */
async function visibleTrace(ctx: Context, state: GatewayState): Promise<TraceRecord> {
  const id = ctx.params.id!;
  const trace = await store(state).traces.get(id);
  const tenant = tenantOf(ctx, state);
  if (trace === undefined || (tenant !== undefined && trace.tenant !== tenant)) {
    throw new ParleyError("not_found_error", `no trace with id or request id '${id}'`);
  }
  return trace;
}

function listQuery(ctx: Context, state: GatewayState): TraceQuery {
  const limit = Number(ctx.query.get("limit") ?? 50);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new InvalidRequestError(`must be a whole number from 1 to ${MAX_PAGE}`, "limit");
  }
  const query: TraceQuery = { limit };
  const status = ctx.query.get("status");
  if (status) query.status = statusFilter(status);
  const model = ctx.query.get("model");
  if (model) query.model = model;
  const conversation = ctx.query.get("conversation");
  if (conversation) query.conversationId = conversation;
  if (ctx.query.get("losses") === "1") query.hasLosses = true;
  const cursor = ctx.query.get("cursor");
  if (cursor) query.cursor = cursor;
  const tenant = tenantOf(ctx, state);
  if (tenant !== undefined) query.tenant = tenant;
  return query;
}

/** `502`, `5xx`, `error` (400 and above), `ok` (below 400), as `parley trace list --status` takes them. */
function statusFilter(text: string): NonNullable<TraceQuery["status"]> {
  if (text === "error") return { from: 400, to: 599 };
  if (text === "ok") return { from: 100, to: 399 };
  const range = /^([1-5])xx$/i.exec(text);
  if (range) return { from: Number(range[1]) * 100, to: Number(range[1]) * 100 + 99 };
  if (/^[1-5]\d\d$/.test(text)) return Number(text);
  throw new InvalidRequestError("must be a status (502), a class (5xx), error or ok", "status");
}

async function conversationTraces(ctx: Context, state: GatewayState, id: string): Promise<TraceSummary[]> {
  const traces: TraceSummary[] = [];
  const query: TraceQuery = { conversationId: id, limit: MAX_PAGE };
  const tenant = tenantOf(ctx, state);
  if (tenant !== undefined) query.tenant = tenant;
  while (traces.length < CONVERSATION_TRACES) {
    const page = await store(state).traces.list(query);
    traces.push(...page.traces);
    if (page.nextCursor === undefined) break;
    query.cursor = page.nextCursor;
  }
  return traces;
}

function serveAsset(ctx: Context): Promise<void> {
  const assets = pageAssets();
  const name = ctx.params.name;
  if (assets === undefined) {
    throw new ParleyError("api_error", "the inspector page is not built: run npm run build", { status: 503 });
  }
  if (name === "inspector.js") sendText(ctx, 200, "text/javascript; charset=utf-8", assets.script);
  else if (name === "inspector.css") sendText(ctx, 200, "text/css; charset=utf-8", assets.styles);
  else throw new ParleyError("not_found_error", `no inspector asset '${name}'`);
  return Promise.resolve();
}

/** The characters of a trace's bodies: past `OFF_LOOP_BODY_CHARACTERS`, its views are built on a thread. */
function bodyCharacters(trace: TraceRecord): number {
  let characters = 0;
  for (const body of BODIES) characters += trace[body]?.length ?? 0;
  return characters;
}

/** A view built on a thread, as the JSON it came back as. */
function sendJsonBytes(ctx: Context, bytes: Uint8Array): void {
  ctx.res.writeHead(200, { "content-type": "application/json", "content-length": bytes.byteLength });
  ctx.res.end(bytes);
}

function sendText(ctx: Context, status: number, type: string, text: string): void {
  ctx.res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(text) });
  ctx.res.end(text);
}
