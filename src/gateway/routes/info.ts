import { UpstreamError } from "../../core/index.js";
import { listedModels, resolveRoute } from "../config/routing.js";
import { anthropicRequestToCore, parseCountTokensRequest } from "../exchange/codecs.js";
import type { ProviderRuntime } from "../exchange/providers.js";
import { expectObject, readJsonBody } from "../http/body.js";
import { type Context, sendJson } from "../http/context.js";
import type { GatewayState } from "../state.js";
import { countInputTokens } from "../token-count.js";

/**
 * `POST /v1/messages/count_tokens`: a model routed to an Anthropic provider is counted by that provider (its
 * count includes the hidden tool and thinking prompts); any other gets an o200k_base count of system, messages
 * and tools (see docs/gateway.md).
 */
export async function handleCountTokens(ctx: Context, state: GatewayState): Promise<void> {
  const raw = expectObject(await readJsonBody(ctx, state.config.limits.maxBodyBytes));
  const body = parseCountTokensRequest(raw);
  const route = resolveRoute(state.config, raw.model as string);
  const provider = state.providers[route.provider.name];
  if (provider?.config.type === "anthropic") {
    await countUpstream(ctx, state, provider, { ...raw, model: route.upstreamModel });
    return;
  }
  const core = anthropicRequestToCore({ ...(body as object), max_tokens: 1 } as never).value;
  sendJson(ctx, 200, { input_tokens: await countInputTokens(core) });
}

async function countUpstream(
  ctx: Context,
  state: GatewayState,
  provider: ProviderRuntime,
  body: Record<string, unknown>,
): Promise<void> {
  // Anthropic's own query (`?beta=true`) goes on, as it does for messages.
  const target = provider.headers(ctx.req.headers, false, ctx.query.toString());
  const response = await state.upstream.post({
    url: target.url.replace(/\/messages(\?|$)/, "/messages/count_tokens$1"),
    headers: target.headers,
    body: JSON.stringify(body),
    cancel: ctx.clientGone,
    requestId: ctx.requestId,
  });
  const reply = (await response.body.json()) as { input_tokens?: unknown };
  if (typeof reply?.input_tokens !== "number")
    throw new UpstreamError("api_error", "upstream count_tokens answered without input_tokens", {
      retryable: false,
      status: 502,
    });
  sendJson(ctx, 200, { input_tokens: reply.input_tokens });
}

const startedAt = new Date().toISOString();

function modelInfo(id: string) {
  return { type: "model", id, display_name: id, created_at: startedAt };
}

/** `GET /v1/models`: the model names the routes and rename maps name (patterns cannot be listed). */
export async function handleListModels(ctx: Context, state: GatewayState): Promise<void> {
  const data = listedModels(state.config).map(modelInfo);
  sendJson(ctx, 200, { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
}

/** `GET /v1/models/{id}`: every name routes somewhere (the default provider at least), so every name is a model. */
export async function handleGetModel(ctx: Context, _state: GatewayState): Promise<void> {
  sendJson(ctx, 200, modelInfo(ctx.params.id!));
}

export async function handleHealth(ctx: Context): Promise<void> {
  sendJson(ctx, 200, { status: "ok" });
}

/** Claude Code probes `HEAD /api/hello` for connectivity. */
export async function handleHello(ctx: Context): Promise<void> {
  ctx.res.writeHead(200, { "content-length": 0 });
  ctx.res.end();
}

export async function handleMetrics(ctx: Context, state: GatewayState): Promise<void> {
  const text = state.metrics.render(state.store?.traceStats());
  ctx.res.writeHead(200, {
    "content-type": "text/plain; version=0.0.4; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  ctx.res.end(text);
}
