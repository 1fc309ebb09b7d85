import { ParleyError } from "../../core/index.js";
import type { FormatAdapter } from "../../formats/adapter.js";
import { type Context, sendJson } from "../http/context.js";
import { describeModel, listedModels, listFormat } from "../models/model-list.js";
import type { GatewayState } from "../state.js";

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
