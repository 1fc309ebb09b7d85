import { ParleyError } from "../../core/index.js";
import type { Context } from "../http/context.js";
import type { GatewayState } from "../state.js";
import { targetModel } from "./route-model.js";

/**
 * `GET /v1/models`: the models a client can ask for, each with the limits of the model it reaches. Anthropic's list
 * shape (with `max_input_tokens` and `max_tokens`, which Claude Code reads from a gateway's list) for Anthropic
 * clients; OpenAI's (`context_length`, `max_completion_tokens`, as OpenRouter names them) for OpenAI clients.
 */

export type ListShape = "anthropic" | "openai";

export interface ListedModel {
  id: string;
  /** The provider and upstream model the name reaches. */
  provider: string;
  upstreamModel: string;
  contextWindow?: number;
  maxOutputTokens?: number;
}

/**
 * Which shape a client wants: `?format=openai|anthropic` when given; else OpenAI's for a client that sends
 * `Authorization: Bearer` without `anthropic-version` (the OpenAI SDK), Anthropic's for everyone else (Claude Code
 * and the Anthropic SDK send `anthropic-version`).
 */
export function listShape(ctx: Context): ListShape {
  const format = ctx.query.get("format");
  if (format === "openai" || format === "anthropic") return format;
  if (format !== null) throw new ParleyError("invalid_request_error", "format: must be openai or anthropic");
  const headers = ctx.req.headers;
  if (headers["anthropic-version"] !== undefined || headers["x-api-key"] !== undefined) return "anthropic";
  const authorization = headers.authorization;
  return typeof authorization === "string" && /^bearer\s/i.test(authorization) ? "openai" : "anthropic";
}

/**
 * Every name a request can use: the routes' literal names, the providers' renames, and what each provider listed
 * (reachable by its own id). Patterns cannot be listed. A name that reaches no model is left out.
 */
export function listedModels(state: GatewayState): ListedModel[] {
  const names = new Set<string>();
  for (const route of state.config.routes) if (!/[*?]/.test(route.match)) names.add(route.match);
  for (const provider of Object.values(state.config.providers)) {
    for (const name of Object.keys(provider.models)) names.add(name);
    if (provider.defaultModel !== undefined) names.add(provider.defaultModel);
    for (const id of state.catalogue.models(provider.name).models.keys()) names.add(id);
  }
  const listed: ListedModel[] = [];
  for (const name of names) {
    const model = describeModel(state, name);
    if (model !== undefined) listed.push(model);
  }
  return listed;
}

/** One name, with where it goes and that model's limits; undefined when it reaches no model. */
export function describeModel(state: GatewayState, name: string): ListedModel | undefined {
  const target = targetModel(state, name);
  if (target.upstreamModel === undefined) return undefined;
  const limits = state.catalogue.limits(target.provider.name, target.upstreamModel);
  const model: ListedModel = { id: name, provider: target.provider.name, upstreamModel: target.upstreamModel };
  if (limits.contextWindow !== undefined) model.contextWindow = limits.contextWindow;
  if (limits.maxOutputTokens !== undefined) model.maxOutputTokens = limits.maxOutputTokens;
  return model;
}

const startedAt = new Date();

export function anthropicModel(model: ListedModel): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    type: "model",
    id: model.id,
    display_name: model.upstreamModel === model.id ? model.id : `${model.id} (${model.upstreamModel})`,
    created_at: startedAt.toISOString(),
  };
  // A window shared by prompt and answer bounds the answer too, when no separate output limit is known.
  const output = model.maxOutputTokens ?? model.contextWindow;
  if (model.contextWindow !== undefined) entry.max_input_tokens = model.contextWindow;
  if (output !== undefined) entry.max_tokens = output;
  return entry;
}

export function openaiModel(model: ListedModel): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    id: model.id,
    object: "model",
    created: Math.floor(startedAt.getTime() / 1000),
    owned_by: model.provider,
  };
  if (model.contextWindow !== undefined) entry.context_length = model.contextWindow;
  if (model.maxOutputTokens !== undefined) entry.max_completion_tokens = model.maxOutputTokens;
  return entry;
}

export function modelListBody(shape: ListShape, models: ListedModel[]): unknown {
  if (shape === "openai") return { object: "list", data: models.map(openaiModel) };
  const data = models.map(anthropicModel);
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
