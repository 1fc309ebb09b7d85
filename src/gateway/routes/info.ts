import { ParleyError, UpstreamError } from "../../core/index.js";
import { anthropicRequestToCore, parseCountTokensRequest } from "../exchange/codecs.js";
import type { ProviderRuntime } from "../exchange/providers.js";
import { expectObject, readJsonBody } from "../http/body.js";
import { type Context, sendJson } from "../http/context.js";
import {
  anthropicModel,
  describeModel,
  listedModels,
  listShape,
  modelListBody,
  openaiModel,
} from "../models/model-list.js";
import { targetModel } from "../models/route-model.js";
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
  const route = targetModel(state, raw.model as string);
  const provider = state.providers[route.provider.name];
  if (provider?.config.type === "anthropic") {
    await countUpstream(ctx, state, provider, { ...raw, model: route.upstreamModel ?? (raw.model as string) });
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

/** `GET /v1/models`: every name a client can ask for, with its model's limits (see `models/model-list.ts`). */
export async function handleListModels(ctx: Context, state: GatewayState): Promise<void> {
  sendJson(ctx, 200, modelListBody(listShape(ctx), listedModels(state)));
}

/** `GET /v1/models/{id}`: any name that reaches a model, with that model's limits. */
export async function handleGetModel(ctx: Context, state: GatewayState): Promise<void> {
  const id = ctx.params.id!;
  const model = describeModel(state, id);
  if (model === undefined) {
    throw new ParleyError(
      "not_found_error",
      `model '${id}' reaches no model: its provider serves several and has no default`,
    );
  }
  sendJson(ctx, 200, listShape(ctx) === "openai" ? openaiModel(model) : anthropicModel(model));
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
  const text = state.metrics.render();
  ctx.res.writeHead(200, {
    "content-type": "text/plain; version=0.0.4; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  ctx.res.end(text);
}
