import {
  type ConversationRequest,
  type ConversationResponse,
  type Converted,
  type DroppedField,
  fieldsFor,
  type LossyEntry,
  type ResponseFormat,
  type SharesField,
  type WireFormat,
} from "../../core/index.js";
import type { ClientEncodeOptions, ReasoningMode } from "../adapter.js";
import { kept } from "./extra.js";
import { newItemId } from "./ids.js";
import { ItemWriter } from "./items-from-core.js";
import { finishedResponse, responseShell } from "./response-object.js";
import { toolChoiceFromCore, toolsFromCore } from "./tools.js";
import type { Json, ResponsesObject, ResponsesRequest, ResponsesTool } from "./wire-types.js";

export interface ResponsesEncodeOptions {
  /** The provider the request goes to: its own reasoning goes back to it as it made it. */
  provider?: string;
  /** How thinking it did not make is sent: `think-tags` (as text) or `drop`. */
  reasoning?: ReasoningMode;
}

/** Fields other APIs put at the top of a request that mean the same in the Responses API. */
const SAME_MEANING = new Set(["prompt_cache_key", "safety_identifier", "top_logprobs", "parallel_tool_calls"]);
const SERVICE_TIERS: ReadonlySet<unknown> = new Set(["auto", "default", "flex", "priority"]);

/** What another API's request field the Responses API has too: the same name, the same meaning. */
const sharedRequestField: SharesField = (key, value) =>
  SAME_MEANING.has(key) || (key === "service_tier" && SERVICE_TIERS.has(value));

/** Fields of this API that the core maps or that Parley itself answers (its state): not copied from the kept ones. */
const HANDLED = new Set(["tools", "tool_choice", "include", "verbosity"]);

/**
 * A core request as a Responses request for a provider. Parley keeps conversation state itself, so the provider
 * is asked to keep nothing (`store: false`) and to hand back its reasoning sealed (`reasoning.encrypted_content`),
 * which goes back to it, and only to it, next turn.
 */
export function coreToResponsesRequest(
  request: ConversationRequest,
  options: ResponsesEncodeOptions = {},
): Converted<ResponsesRequest> {
  const writer = new ItemWriter(
    {
      kind: "provider",
      reasoning: options.reasoning ?? "think-tags",
      ...(options.provider === undefined ? {} : { provider: options.provider }),
    },
    request.tools,
  );
  const lossy = writer.lossy;
  const body: ResponsesRequest = { model: request.model };
  const system = request.system;
  const single = system?.parts[0];
  let history = request.messages;
  if (system?.textShorthand && system.parts.length === 1 && single?.type === "text") {
    body.instructions = single.text;
  } else if (system !== undefined) {
    // Written as the first input item, it is the first message of the history reports name (as Chat's is).
    history = [system, ...request.messages];
  }
  body.input = writer.messages(history);
  // The provider compacts the conversation itself (Codex's remote compaction), asked as Codex asks.
  if (request.compact === true) body.input.push({ type: "compaction_trigger" });
  const own = kept(request);
  // Another API's fields go where this one has the same field; the rest are reported.
  const { fields, dropped } = fieldsFor(request.extra, "responses", sharedRequestField);
  const hosted = (own.tools as ResponsesTool[] | undefined) ?? [];
  if (request.tools !== undefined || hosted.length > 0) body.tools = toolsFromCore(request.tools ?? [], hosted, lossy);
  if (own.tool_choice !== undefined) body.tool_choice = own.tool_choice;
  else if (request.toolChoice !== undefined)
    body.tool_choice = toolChoiceFromCore(request.toolChoice, request.tools ?? []);
  const choice = request.toolChoice;
  if (choice !== undefined && choice.type !== "none" && choice.disableParallelToolUse !== undefined)
    body.parallel_tool_calls = !choice.disableParallelToolUse;
  if (request.maxTokens !== undefined) body.max_output_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.topK !== undefined)
    lossy.push({ code: "field-dropped-top_k", message: "the Responses API has no top_k", path: "top_k" });
  if (request.stopSequences !== undefined)
    lossy.push({
      code: "stop-sequences-dropped",
      message: "the Responses API has no stop sequences",
      path: "stop_sequences",
    });
  const reasoning = reasoningConfig(request);
  if (reasoning !== undefined) body.reasoning = reasoning;
  const chatFormat = request.extra?.openai?.response_format;
  const text = textConfig(request.responseFormat ?? chatResponseFormat(chatFormat), own.verbosity);
  if (text !== undefined) body.text = text;
  if (request.userId !== undefined) body.user = request.userId;
  if (request.stream !== undefined) body.stream = request.stream;
  body.store = false;
  const include = Array.isArray(own.include) ? (own.include as string[]) : [];
  body.include = ["reasoning.encrypted_content", ...include.filter((item) => item !== "reasoning.encrypted_content")];
  for (const key in own) if (!HANDLED.has(key)) body[key] = own[key];
  const stored = request.extra?.responses;
  for (const key in fields) if (stored === undefined || !Object.hasOwn(stored, key)) body[key] ??= fields[key];
  // The conversation's cache key, unless the client gave its own: the provider routes its prompt cache by it.
  if (request.cacheKey !== undefined && body.prompt_cache_key === undefined) body.prompt_cache_key = request.cacheKey;
  reportDropped(dropped, lossy);
  return { value: body, lossy };
}

/**
 * Another API's request fields the Responses API has not: reported, one entry per API. Chat's `response_format` went
 * into `text.format`, and asking for usage at the end of a stream loses nothing (the Responses API always sends it).
 */
function reportDropped(dropped: readonly DroppedField[], lossy: LossyEntry[]): void {
  const byFormat = new Map<WireFormat, string[]>();
  for (const { from, key, value } of dropped) {
    if (key === "response_format" || (key === "stream_options" && isUsageOnly(value))) continue;
    byFormat.set(from, [...(byFormat.get(from) ?? []), key]);
  }
  for (const [from, keys] of byFormat)
    lossy.push({ code: `${from}-fields-dropped`, message: `no Responses equivalent for ${keys.join(", ")}` });
}

function isUsageOnly(value: unknown): boolean {
  return typeof value === "object" && value !== null && Object.keys(value).every((key) => key === "include_usage");
}

/** Effort and summary: asked for by the request's effort, or by thinking being on (its budget as an effort). */
function reasoningConfig(request: ConversationRequest): Json | undefined {
  const thinking = request.thinking;
  const on = thinking !== undefined && thinking.type !== "disabled";
  const effort =
    request.reasoningEffort ??
    (on && thinking.budgetTokens !== undefined ? effortFor(thinking.budgetTokens) : undefined);
  if (!on && effort === undefined) return undefined;
  const config: Json = {};
  if (effort !== undefined) config.effort = effort;
  if (on) config.summary = kept(thinking).summary ?? "auto";
  return config;
}

function effortFor(budget: number): string {
  if (budget < 4096) return "low";
  return budget < 16384 ? "medium" : "high";
}

function textConfig(format: ResponseFormat | undefined, verbosity: unknown): Json | undefined {
  if (format === undefined && verbosity === undefined) return undefined;
  const text: Json = {};
  if (format !== undefined) {
    const wire: Json = { type: format.type };
    if (format.type === "json_schema") {
      wire.name = format.name ?? "response";
      wire.schema = format.schema;
      if (format.strict !== undefined) wire.strict = format.strict;
      if (format.description !== undefined) wire.description = format.description;
    }
    text.format = wire;
  }
  if (verbosity !== undefined) text.verbosity = verbosity;
  return text;
}

/** A Chat Completions `response_format` a Chat client sent, read as the core's format. */
function chatResponseFormat(value: unknown): ResponseFormat | undefined {
  const format = value as { type?: unknown; json_schema?: Record<string, unknown> } | null | undefined;
  if (format?.type === "text" || format?.type === "json_object") return { type: format.type };
  if (format?.type !== "json_schema" || format.json_schema === undefined) return undefined;
  const schema = format.json_schema;
  const out: ResponseFormat = { type: "json_schema", schema: schema.schema };
  if (typeof schema.name === "string") out.name = schema.name;
  if (typeof schema.strict === "boolean") out.strict = schema.strict;
  if (typeof schema.description === "string") out.description = schema.description;
  return out;
}

/** A whole answer as the response object a Responses client gets. */
export function coreToResponsesResponse(
  response: ConversationResponse,
  options: ClientEncodeOptions = {},
): Converted<ResponsesObject> {
  const id = options.answerId ?? newItemId("resp");
  const writer = new ItemWriter({ kind: "client", responseId: id }, options.request?.tools);
  const output = writer.assistant(response.message.parts, ["message"]);
  const shell = responseShell({
    id,
    model: response.model,
    createdAt: options.createdAt ?? Math.floor(Date.now() / 1000),
    ...(options.request === undefined ? {} : { request: options.request }),
    ...(options.state === undefined ? {} : { state: options.state }),
  });
  const lossy = [...writer.lossy];
  if (response.stopReason.unified === "pause_turn") {
    lossy.push({
      code: "pause-turn-as-completed",
      message: "stop_reason pause_turn has no Responses status; sent as completed",
    });
  }
  return { value: finishedResponse(shell, output, response.usage, response.stopReason), lossy };
}
