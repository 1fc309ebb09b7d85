import { ParleyError } from "../../core/index.js";
import type { FormatAdapter, ModelInfo } from "../../formats/adapter.js";
import { FORMATS, orList } from "../../formats/registry.js";
import type { Context } from "../http/context.js";
import type { GatewayState } from "../state.js";
import { targetModel } from "./route-model.js";

/**
 * `GET /v1/models`: the models a client can ask for, each with the limits of the model it reaches. Anthropic's list
 * shape (with `max_input_tokens` and `max_tokens`, which Claude Code reads from a gateway's list) for Anthropic
 * clients; OpenAI's (`context_length`, `max_completion_tokens`, as OpenRouter names them) for OpenAI clients.
 */

/**
 * Which API's shape a client wants: `?format=<id>` when given (a format that offers its list shape on the shared
 * route: one with `marks`); else that of the format whose clients' marks the request carries (`anthropic-version`; an
 * `Authorization: Bearer` alone, as the OpenAI SDK sends it), and the route's own API's for everyone else.
 */
export function listFormat(ctx: Context, routeFormat: FormatAdapter): FormatAdapter {
  // An API whose paths are its own (Gemini's `/v1beta/`) answers its list route in its own shape.
  if (routeFormat.client.pathPrefix !== undefined) return routeFormat;
  const shapes = FORMATS.filter((format) => format.client.models?.marks !== undefined);
  const asked = ctx.query.get("format");
  if (asked !== null) {
    const chosen = shapes.find((format) => format.id === asked);
    if (chosen === undefined) {
      throw new ParleyError("invalid_request_error", `format: must be ${orList(shapes.map((format) => format.id))}`);
    }
    return chosen;
  }
  const headers = ctx.req.headers;
  const marked = shapes.find((format) =>
    format.client.models?.marks?.headers?.some((name) => headers[name] !== undefined),
  );
  if (marked !== undefined) return marked;
  const authorization = headers.authorization;
  if (typeof authorization !== "string" || !/^bearer\s/i.test(authorization)) return routeFormat;
  return shapes.find((format) => format.client.models?.marks?.bearer === true) ?? routeFormat;
}

const startedAt = new Date().toISOString();

/**
 * Every name a request can use: the routes' literal names, the providers' renames and default models, and what each
 * provider listed (reachable by its own id). Patterns cannot be listed. A name that reaches no model is left out.
 */
export function listedModels(state: GatewayState): ModelInfo[] {
  const names = new Set<string>();
  for (const route of state.config.routes) if (!/[*?]/.test(route.match)) names.add(route.match);
  for (const provider of Object.values(state.config.providers)) {
    for (const name of Object.keys(provider.models)) names.add(name);
    if (provider.defaultModel !== undefined) names.add(provider.defaultModel);
    for (const id of state.catalogue.models(provider.name).models.keys()) names.add(id);
  }
  const listed: ModelInfo[] = [];
  for (const name of names) {
    const model = describeModel(state, name);
    if (model !== undefined) listed.push(model);
  }
  return listed;
}

/** One name, with where it goes and that model's limits; undefined when it reaches no model. */
export function describeModel(state: GatewayState, name: string): ModelInfo | undefined {
  const target = targetModel(state, name);
  if (target.upstreamModel === undefined) return undefined;
  const limits = state.catalogue.limits(target.provider.name, target.upstreamModel);
  const model: ModelInfo = { id: name, createdAt: startedAt, ownedBy: target.provider.name };
  if (target.upstreamModel !== name) model.upstreamModel = target.upstreamModel;
  if (limits.contextWindow !== undefined) model.contextWindow = limits.contextWindow;
  if (limits.maxOutputTokens !== undefined) model.maxOutputTokens = limits.maxOutputTokens;
  return model;
}
