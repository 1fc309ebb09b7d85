import { ParleyError, UpstreamError } from "../../core/index.js";
import type { ClientRoute, FormatAdapter } from "../../formats/adapter.js";
import { redactSecrets } from "../../upstream/index.js";
import { sameApiPassthrough } from "../exchange/plan.js";
import type { ProviderRuntime } from "../exchange/providers.js";
import { expectObject, readJsonBody } from "../http/body.js";
import { type Context, sendJson } from "../http/context.js";
import { describeModel, listedModels, listFormat } from "../models/model-list.js";
import { targetModel } from "../models/route-model.js";
import type { GatewayState } from "../state.js";
import { countInputTokens } from "../token-count.js";

/**
 * `POST /v1/messages/count_tokens`: a model routed to a provider of the client's own API that counts tokens
 * (Anthropic) is counted by that provider (its count includes the hidden tool and thinking prompts), as is one whose
 * server counts Anthropic requests beside its own API (llama.cpp, through its chat template); any other gets an
 * o200k_base count of system, messages and tools (see docs/gateway.md).
 */
export async function handleCountTokens(
  ctx: Context,
  state: GatewayState,
  format: FormatAdapter,
  clientRoute: ClientRoute,
): Promise<void> {
  const raw = expectObject(await readJsonBody(ctx, state.config.limits.maxBodyBytes));
  const request = format.client.readCountTokensRequest!(raw, {
    route: clientRoute,
    params: ctx.params,
    query: ctx.query,
  });
  const route = targetModel(state, request.model);
  const provider = state.providers[route.provider.name];
  const foreignCountUrl = provider?.connection.countTokensUrlFor?.(format.id);
  const countUrl =
    sameApiPassthrough(format, provider)?.countTokensUrl ??
    (foreignCountUrl === undefined ? undefined : () => foreignCountUrl);
  if (provider !== undefined && countUrl !== undefined) {
    await countUpstream(ctx, state, provider, countUrl, {
      ...raw,
      model: route.upstreamModel ?? request.model,
    });
    return;
  }
  const count = await countInputTokens(request);
  sendJson(ctx, 200, format.client.countTokensBody?.(count) ?? { input_tokens: count });
}

async function countUpstream(
  ctx: Context,
  state: GatewayState,
  provider: ProviderRuntime,
  countUrl: (url: string) => string,
  body: Record<string, unknown>,
): Promise<void> {
  // Counted only for a client of the provider's own API, whose query it takes (what the API names of it).
  const target = provider.connection.target(ctx.req.headers, false, ctx.query, body.model as string);
  const response = await state.upstream.postWhole({
    url: countUrl(target.url),
    headers: target.headers,
    body: JSON.stringify(body),
    cancel: ctx.clientGone,
    requestId: ctx.requestId,
  });
  let reply: { input_tokens?: unknown } | null;
  try {
    reply = JSON.parse(response.text) as { input_tokens?: unknown } | null;
  } catch {
    throw new UpstreamError("api_error", "upstream count_tokens answered with a body that is not JSON", {
      retryable: false,
      status: 502,
      body: redactSecrets(response.text.slice(0, 500), state.secrets),
    });
  }
  if (typeof reply?.input_tokens !== "number")
    throw new UpstreamError("api_error", "upstream count_tokens answered without input_tokens", {
      retryable: false,
      status: 502,
    });
  sendJson(ctx, 200, { input_tokens: reply.input_tokens });
}

/** `GET /v1/models`: every name a client can ask for, with its model's limits (see `models/model-list.ts`). */
export async function handleListModels(ctx: Context, state: GatewayState, format: FormatAdapter): Promise<void> {
  sendJson(ctx, 200, listFormat(ctx, format).client.models!.list(listedModels(state)));
}

/** `GET /v1/models/{id}`: any name that reaches a model, with that model's limits. */
export async function handleGetModel(ctx: Context, state: GatewayState, format: FormatAdapter): Promise<void> {
  const id = ctx.params.id!;
  const model = describeModel(state, id);
  if (model === undefined) {
    throw new ParleyError(
      "not_found_error",
      `model '${id}' reaches no model: its provider serves several and has no default`,
    );
  }
  sendJson(ctx, 200, listFormat(ctx, format).client.models!.one(model));
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
  const text = state.metrics.render(state.store?.traces.stats());
  ctx.res.writeHead(200, {
    "content-type": "text/plain; version=0.0.4; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  ctx.res.end(text);
}
