import { type ConversationRequest, type StopReason, systemText, type Usage } from "../../core/index.js";
import type { AnswerState } from "../adapter.js";
import { kept } from "./extra.js";
import { responseEnd, usageToResponses } from "./status.js";
import { toolChoiceFromCore, toolsFromCore } from "./tools.js";
import type { ResponsesItem, ResponsesObject, ResponsesTool } from "./wire-types.js";

/** What every response object Parley gives a client is built from. */
export interface ResponseShellOptions {
  id: string;
  model: string;
  /** Unix seconds. */
  createdAt: number;
  /** The client's request: the settings a response object repeats. */
  request?: ConversationRequest;
  state?: AnswerState;
}

/**
 * The response object before any output, as `response.created` carries it: OpenAI's fields in OpenAI's order,
 * the request's settings repeated as OpenAI repeats them.
 */
export function responseShell(options: ResponseShellOptions): ResponsesObject {
  const request = options.request;
  const own = kept(request);
  const effort = request?.reasoningEffort ?? null;
  const summary = kept(request?.thinking).summary ?? null;
  const format = request?.responseFormat;
  return {
    id: options.id,
    object: "response",
    created_at: options.createdAt,
    status: "in_progress",
    background: false,
    error: null,
    incomplete_details: null,
    instructions: request?.system === undefined ? null : systemText(request.system),
    max_output_tokens: request?.maxTokens ?? null,
    model: options.model,
    output: [],
    parallel_tool_calls: request?.toolChoice?.type === "none" || request?.toolChoice?.disableParallelToolUse !== true,
    previous_response_id: options.state?.previous ?? null,
    reasoning: { effort, summary },
    store: options.state?.kept ?? false,
    temperature: request?.temperature ?? null,
    text: {
      format:
        format === undefined || format.type !== "json_schema"
          ? { type: format?.type ?? "text" }
          : {
              type: "json_schema",
              name: format.name,
              schema: format.schema,
              ...(format.strict === undefined ? {} : { strict: format.strict }),
              ...(format.description === undefined ? {} : { description: format.description }),
            },
      ...(own.verbosity === undefined ? {} : { verbosity: own.verbosity }),
    },
    tool_choice:
      request?.toolChoice === undefined ? "auto" : toolChoiceFromCore(request.toolChoice, request.tools ?? []),
    tools: toolsFromCore(request?.tools ?? [], (own.tools as ResponsesTool[] | undefined) ?? [], []),
    top_p: request?.topP ?? null,
    truncation: own.truncation ?? "disabled",
    usage: null,
    user: request?.userId ?? null,
    metadata: own.metadata ?? {},
  };
}

/** The shell with its output and end: `completed`, or `incomplete` with the reason. */
export function finishedResponse(
  shell: ResponsesObject,
  output: ResponsesItem[],
  usage: Usage,
  stopReason: StopReason,
): ResponsesObject {
  const end = responseEnd(stopReason);
  return {
    ...shell,
    status: end.status,
    incomplete_details: end.incomplete_details,
    output,
    usage: usageToResponses(usage),
  };
}

/** A failed response: what was finished before the failure, and the error. */
export function failedResponse(
  shell: ResponsesObject,
  output: ResponsesItem[],
  error: { code: string; message: string },
): ResponsesObject {
  return { ...shell, status: "failed", error, output };
}

/** An item's id within a response: the response's own suffix and the item's place, so both paths agree. */
export function answerItemId(prefix: string, responseId: string, outputIndex: number): string {
  const suffix = responseId.startsWith("resp_") ? responseId.slice(5) : responseId;
  return `${prefix}_${suffix}${outputIndex.toString(16).padStart(4, "0")}`;
}
