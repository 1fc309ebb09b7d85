import type {
  ConversationRequest,
  ConversationResponse,
  Converted,
  LossyEntry,
  ResponseFormat,
  ThinkingConfig,
} from "../../core/index.js";
import { foldEvents } from "../../stream/accumulate.js";
import type { AnswerState } from "../adapter.js";
import { keep } from "./extra.js";
import { itemsToCore } from "./items-to-core.js";
import { createResponsesEventDecoder, type ResponsesDecodeOptions } from "./stream-decoder.js";
import { toolChoiceToCore, toolsToCore } from "./tools.js";
import type { ResponsesItem, ResponsesRequest, ResponsesTextFormat } from "./wire-types.js";

export interface ResponsesRequestRead extends Converted<ConversationRequest> {
  state: AnswerState;
}

/** Thinking budgets for an effort, when the request asks for reasoning and the target counts it in tokens. */
const BUDGET_FOR_EFFORT: Record<string, number> = { minimal: 1024, low: 2048, medium: 8192, high: 16384, xhigh: 32768 };

/**
 * A Responses request -> core. `instructions` is the system prompt; input items are messages in order; a request
 * for a reasoning summary turns thinking on. `store` and `previous_response_id` are Parley's own to answer (its
 * store), so they are read into the request's state and sent to no provider.
 */
export function responsesRequestToCore(body: ResponsesRequest): ResponsesRequestRead {
  const {
    model,
    input,
    instructions,
    tools,
    tool_choice,
    parallel_tool_calls,
    max_output_tokens,
    temperature,
    top_p,
    reasoning,
    text,
    stream,
    store,
    previous_response_id,
    include,
    user,
    ...rest
  } = body;
  const lossy: LossyEntry[] = [];
  const items: ResponsesItem[] =
    input === undefined ? [] : typeof input === "string" ? [{ role: "user", content: input }] : input;
  const converted = itemsToCore(items);
  lossy.push(...converted.lossy);
  const request: ConversationRequest = { model, messages: converted.messages };
  if (converted.compact) request.compact = true;
  if (typeof instructions === "string")
    request.system = { role: "system", parts: [{ type: "text", text: instructions }], textShorthand: true };
  const kept: Record<string, unknown> = { ...rest };
  if (tools !== undefined) {
    const read = toolsToCore(tools);
    request.tools = read.tools;
    if (read.hosted.length > 0) kept.tools = read.hosted;
  }
  const choice = toolChoiceToCore(tool_choice);
  if (choice !== undefined) request.toolChoice = choice;
  else if (tool_choice !== undefined && tool_choice !== null) kept.tool_choice = tool_choice;
  if (typeof parallel_tool_calls === "boolean" && (request.tools?.length ?? 0) > 0) {
    request.toolChoice ??= { type: "auto" };
    if (request.toolChoice.type !== "none") request.toolChoice.disableParallelToolUse = !parallel_tool_calls;
  } else if (typeof parallel_tool_calls === "boolean") kept.parallel_tool_calls = parallel_tool_calls;
  if (typeof max_output_tokens === "number") request.maxTokens = max_output_tokens;
  if (typeof temperature === "number") request.temperature = temperature;
  if (typeof top_p === "number") request.topP = top_p;
  if (typeof stream === "boolean") request.stream = stream;
  if (typeof user === "string") request.userId = user;
  if (reasoning !== undefined && reasoning !== null) {
    const { effort, summary, ...more } = reasoning;
    if (typeof effort === "string") request.reasoningEffort = effort;
    if (typeof summary === "string" && effort !== "none")
      request.thinking = thinkingFor(
        effort,
        summary,
        typeof max_output_tokens === "number" ? max_output_tokens : undefined,
      );
    if (Object.keys(more).length > 0) kept.reasoning = more;
  }
  if (text !== undefined && text !== null) {
    const { format, verbosity, ...more } = text;
    // `format: null` is the default (plain text), as OpenAI reads it.
    if (format !== undefined && format !== null) request.responseFormat = responseFormatToCore(format);
    if (verbosity !== undefined && verbosity !== null) kept.verbosity = verbosity;
    if (Object.keys(more).length > 0) kept.text = more;
  }
  // Encrypted reasoning is always handed out (sealed in Parley's envelope); other inclusions are the provider's.
  const includes = (include ?? []).filter((item) => item !== "reasoning.encrypted_content");
  if (includes.length > 0) kept.include = includes;
  keep(request, kept);
  const state: AnswerState = { kept: store !== false };
  if (typeof previous_response_id === "string") state.previous = previous_response_id;
  return { value: request, lossy, state };
}

/**
 * Reasoning asked for, as thinking with a budget for its effort. The budget leaves room for the answer within the
 * client's own limit (Anthropic wants it below `max_tokens`), never under the 1,024 tokens a budget must have.
 */
function thinkingFor(effort: unknown, summary: string, maxTokens: number | undefined): ThinkingConfig {
  const thinking: ThinkingConfig = { type: "enabled" };
  const budget = (typeof effort === "string" ? BUDGET_FOR_EFFORT[effort] : undefined) ?? BUDGET_FOR_EFFORT.medium!;
  thinking.budgetTokens = maxTokens === undefined ? budget : Math.max(1024, Math.min(budget, maxTokens - 1024));
  return keep(thinking, { summary });
}

function responseFormatToCore(format: ResponsesTextFormat): ResponseFormat {
  const type = format.type === "json_schema" || format.type === "json_object" ? format.type : "text";
  const out: ResponseFormat = { type };
  if (type !== "json_schema") return out;
  if (typeof format.name === "string") out.name = format.name;
  out.schema = format.schema;
  if (typeof format.strict === "boolean") out.strict = format.strict;
  if (typeof format.description === "string") out.description = format.description;
  return out;
}

/**
 * A whole Responses answer -> core. It runs through the stream decoder as the events it stands for, so streamed
 * and whole answers give the same parts by construction.
 */
export function responsesResponseToCore(
  body: Record<string, unknown>,
  options: ResponsesDecodeOptions = {},
): Converted<ConversationResponse> {
  const decoder = createResponsesEventDecoder(options);
  const last = body.status === "failed" ? "response.failed" : "response.completed";
  const events = [
    ...decoder.push({ type: "response.created", response: body }),
    ...decoder.push({ type: last, response: body }),
  ];
  const response = foldEvents(events.filter((event) => event.type !== "error")).answer;
  const lossy: LossyEntry[] = [];
  const output = Array.isArray(body.output) ? (body.output as ResponsesItem[]) : [];
  output.forEach((item, index) => {
    if (item === null || typeof item !== "object") {
      lossy.push({
        code: "part-dropped",
        message: "an output item that is not an object is not carried",
        path: `output[${index}]`,
      });
      return;
    }
    const content = Array.isArray(item.content) ? (item.content as Array<Record<string, unknown>>) : [];
    if (content.some((part) => Array.isArray(part.annotations) && part.annotations.length > 0))
      lossy.push({
        code: "annotations-dropped",
        message: "text annotations are not carried",
        path: `output[${index}]`,
      });
  });
  return { value: response, lossy };
}
