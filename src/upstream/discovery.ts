import { redactSecrets } from "./errors.js";
import { requestJson } from "./small-request.js";

/**
 * Asks a model server which models it serves and, where it says so, their limits: the list its API's adapter names
 * (`GET /models`: OpenAI's list, as vLLM, SGLang, llama.cpp, LM Studio, Ollama, OpenRouter, Moonshot and NVIDIA
 * answer it, or Anthropic's; or one read by the adapter's own parser), plus
 * the servers' own endpoints that carry a context length their list leaves out (Ollama's `/api/ps` and `/api/show`,
 * LM Studio's REST API). Nothing here is on a request's path.
 */

export interface DiscoveredModel {
  id: string;
  /** Prompt and answer together, in tokens, as the server serves it. */
  contextWindow?: number;
  /** The largest answer the server accepts. */
  maxOutputTokens?: number;
  /** Where the limits were read: `GET /models`, `/api/ps`, `/api/show`... */
  limitSource?: string;
}

export type DiscoveryOutcome =
  /** `owners`: the list's `owned_by`s, when asked for (`DiscoveryTarget.owners`). */
  | { status: "listed"; models: DiscoveredModel[]; owners?: string[] }
  /** The server answered, but with no model list (a 404, a refused key, a body that is not a list). */
  | { status: "not-listed"; cause: string }
  /** Nothing answered: refused, unresolvable, timed out. */
  | { status: "unreachable"; cause: string };

export interface DiscoveryTarget {
  /** The provider's base URL, as `/chat/completions` (or `/v1/messages`) is appended to it. */
  baseUrl: string;
  /** The provider's key and extra headers, as its API takes them (its adapter's discovery). */
  headers: Record<string, string>;
  /** The server's preset, for the endpoints only it has (`ollama`, `lmstudio`). */
  server?: string;
  /** Where the provider's API lists its models (its adapter's discovery); absent, `<baseUrl>/models`. */
  modelsUrl?: string;
  /** How that list reads; absent, `parseModelList`. */
  parse?: (json: unknown) => DiscoveredModel[] | undefined;
  /** Read the list's `owned_by`s too, for a connection that recognises a server by them. */
  owners?: boolean;
  timeoutMs: number;
  /** Kept out of every cause this reports. */
  secrets?: readonly string[];
}

/** Ollama's model info is asked once per model; a local server with more models than this is read in part. */
const MAX_MODEL_INFO_REQUESTS = 32;

export async function discoverModels(target: DiscoveryTarget): Promise<DiscoveryOutcome> {
  const url = target.modelsUrl ?? `${target.baseUrl}/models`;
  let reply: Awaited<ReturnType<typeof requestJson>>;
  try {
    reply = await requestJson("GET", url, target.headers, { timeoutMs: target.timeoutMs });
  } catch (error) {
    return { status: "unreachable", cause: redactSecrets(describeFailure(error), target.secrets ?? []) };
  }
  if (reply.status < 200 || reply.status >= 300) {
    return { status: "not-listed", cause: `GET ${pathOf(url)} answered ${reply.status}${refusal(reply.status)}` };
  }
  const models = (target.parse ?? parseModelList)(reply.json);
  if (models === undefined) return { status: "not-listed", cause: `GET ${pathOf(url)} answered with no model list` };
  if (target.server === "ollama") await addOllamaLimits(target, models);
  else if (target.server === "lmstudio") await addLmStudioLimits(target, models);
  return target.owners ? { status: "listed", models, owners: listedOwners(reply.json) } : { status: "listed", models };
}

/** The `owned_by` of a list's entries, where model servers name themselves (`llamacpp`, `vllm`, `sglang`). */
export function listedOwners(json: unknown): string[] {
  return (listEntries(json) ?? []).flatMap((entry) => firstString(record(entry)?.owned_by) ?? []);
}

function listEntries(json: unknown): unknown[] | undefined {
  const body = json as { data?: unknown; models?: unknown } | null;
  return Array.isArray(body?.data) ? body.data : Array.isArray(body?.models) ? body.models : undefined;
}

/**
 * The entries of a model list, with whatever limits each carries: `data` (OpenAI, Anthropic) or `models`
 * (LM Studio's REST API, Ollama's tags). Undefined when the body is no list at all.
 */
export function parseModelList(json: unknown): DiscoveredModel[] | undefined {
  const entries = listEntries(json);
  if (entries === undefined) return undefined;
  const models: DiscoveredModel[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    if (entry === null || typeof entry !== "object") continue;
    const model = readEntry(entry as Record<string, unknown>);
    if (model === undefined || seen.has(model.id)) continue;
    seen.add(model.id);
    models.push(model);
  }
  return models;
}

function readEntry(entry: Record<string, unknown>): DiscoveredModel | undefined {
  const id = firstString(entry.id, entry.key, entry.model, entry.name);
  if (id === undefined) return undefined;
  const model: DiscoveredModel = { id };
  const meta = record(entry.meta);
  const top = record(entry.top_provider);
  const loaded = Array.isArray(entry.loaded_instances) ? record(entry.loaded_instances[0]) : undefined;
  // The served window first (vLLM and SGLang `max_model_len`, llama.cpp's per-slot `n_ctx`, a loaded LM Studio
  // instance), then what the list says the model takes; never llama.cpp's `n_ctx_train`, the weights' ceiling.
  const context = smallest(
    firstCount(
      entry.max_model_len,
      meta?.n_ctx,
      record(loaded?.config)?.context_length,
      entry.loaded_context_length,
      entry.context_length,
      entry.context_window,
      entry.max_context_length,
      entry.max_input_tokens,
    ),
    firstCount(top?.context_length),
  );
  const output = firstCount(top?.max_completion_tokens, entry.max_completion_tokens, entry.max_output_tokens);
  const anthropicOutput = entry.type === "model" ? firstCount(entry.max_tokens) : undefined;
  if (context !== undefined) model.contextWindow = context;
  const maxOutput = output ?? anthropicOutput;
  if (maxOutput !== undefined) model.maxOutputTokens = maxOutput;
  if (context !== undefined || maxOutput !== undefined) model.limitSource = "GET /models";
  return model;
}

/**
 * Ollama's list carries no window. A loaded model's served window is in `/api/ps`; otherwise `/api/show` gives the
 * Modelfile's `num_ctx`, else the model's own length (Ollama then serves `OLLAMA_CONTEXT_LENGTH` or its default,
 * capped at that length).
 */
async function addOllamaLimits(target: DiscoveryTarget, models: DiscoveredModel[]): Promise<void> {
  const origin = target.baseUrl.replace(/\/v1$/, "");
  const loaded = new Map<string, number>();
  const ps = await optional(() => requestJson("GET", `${origin}/api/ps`, target.headers, target));
  const running = (ps?.json as { models?: unknown } | undefined)?.models;
  if (Array.isArray(running)) {
    for (const entry of running) {
      const item = record(entry);
      const name = firstString(item?.model, item?.name);
      const context = firstCount(item?.context_length);
      if (name !== undefined && context !== undefined) loaded.set(name, context);
    }
  }
  await Promise.all(
    models.slice(0, MAX_MODEL_INFO_REQUESTS).map(async (model) => {
      const served = loaded.get(model.id);
      if (served !== undefined) {
        setContext(model, served, "/api/ps");
        return;
      }
      const show = await optional(() =>
        requestJson(
          "POST",
          `${origin}/api/show`,
          { ...target.headers, "content-type": "application/json" },
          { body: JSON.stringify({ model: model.id }), timeoutMs: target.timeoutMs },
        ),
      );
      const info = show?.json as { parameters?: unknown; model_info?: unknown } | undefined;
      const numCtx = typeof info?.parameters === "string" ? /(?:^|\n)\s*num_ctx\s+(\d+)/.exec(info.parameters) : null;
      if (numCtx !== null) {
        setContext(model, Number(numCtx[1]), "/api/show num_ctx");
        return;
      }
      const modelInfo = record(info?.model_info);
      const key =
        modelInfo === undefined ? undefined : Object.keys(modelInfo).find((name) => name.endsWith(".context_length"));
      const length = key === undefined ? undefined : firstCount(modelInfo?.[key]);
      if (length !== undefined) setContext(model, length, "/api/show model_info");
    }),
  );
}

/** LM Studio's REST API gives each model's maximum window, and a loaded instance's own. */
async function addLmStudioLimits(target: DiscoveryTarget, models: DiscoveredModel[]): Promise<void> {
  const origin = target.baseUrl.replace(/\/v1$/, "");
  let listed: DiscoveredModel[] | undefined;
  let source = "/api/v1/models";
  const current = await optional(() => requestJson("GET", `${origin}/api/v1/models`, target.headers, target));
  if (current !== undefined && current.status === 200) listed = parseModelList(current.json);
  if (listed === undefined) {
    source = "/api/v0/models";
    const older = await optional(() => requestJson("GET", `${origin}/api/v0/models`, target.headers, target));
    if (older !== undefined && older.status === 200) listed = parseModelList(older.json);
  }
  if (listed === undefined) return;
  const byId = new Map(listed.map((model) => [model.id, model]));
  for (const model of models) {
    const context = byId.get(model.id)?.contextWindow;
    if (context !== undefined && model.contextWindow === undefined) setContext(model, context, source);
  }
}

function setContext(model: DiscoveredModel, context: number, source: string): void {
  model.contextWindow = context;
  model.limitSource = source;
}

async function optional<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch {
    return undefined;
  }
}

/** A failure without a status, as a person reads it: `connection refused (ECONNREFUSED 127.0.0.1:8000)`. */
export function describeFailure(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case "ECONNREFUSED":
      return `connection refused (${message.replace(/^connect /, "")})`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `host not found (${message.replace(/^getaddrinfo /, "")})`;
    case "ETIMEDOUT":
      return `no answer in time (${message})`;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `network unreachable (${message})`;
    default:
      return message;
  }
}

function refusal(status: number): string {
  if (status === 401 || status === 403) return " (the key was refused)";
  if (status === 404) return " (the server has no model list there)";
  return "";
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function firstString(...values: unknown[]): string | undefined {
  for (const value of values) if (typeof value === "string" && value !== "") return value;
  return undefined;
}

function firstCount(...values: unknown[]): number | undefined {
  for (const value of values) {
    const count = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
    if (typeof count === "number" && Number.isInteger(count) && count > 0) return count;
  }
  return undefined;
}

function smallest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
