import {
  type ConversationRequest,
  type ConversationResponse,
  type Converted,
  formatPath,
  type LossyEntry,
  type ToolChoice,
  type ToolDefinition,
} from "../../core/index.js";
import { foldEvents } from "../../stream/accumulate.js";
import { withExtra } from "./content-to-core.js";
import { openaiMessagesToCore } from "./messages-to-core.js";
import { createOpenAIChunkDecoder, type OpenAIDecodeOptions } from "./stream-decoder.js";
import type { OpenAIChatRequest, OpenAIChatResponse, OpenAIFunctionTool } from "./wire-types.js";

export type { OpenAIDecodeOptions } from "./stream-decoder.js";

/**
 * An OpenAI request -> core. System and developer messages stay in place as `system` messages (none is
 * lifted into `request.system`): that is the only way `[developer, system, user]` and a system message
 * between turns come back in the same place. Fields the model does not map go to `extra` unchanged.
 */
export function openaiRequestToCore(body: OpenAIChatRequest): Converted<ConversationRequest> {
  const {
    model,
    messages,
    tools,
    tool_choice,
    parallel_tool_calls,
    max_tokens,
    max_completion_tokens,
    temperature,
    top_p,
    stop,
    stream,
    reasoning_effort,
    user,
    ...extra
  } = body;
  const converted = openaiMessagesToCore(messages);
  const lossy: LossyEntry[] = [...converted.lossy];
  const request: ConversationRequest = { model, messages: converted.messages };
  if (tools !== undefined) request.tools = tools.map(toolToCore);
  const choice = toolChoiceToCore(tool_choice);
  if (choice !== undefined) request.toolChoice = choice;
  else if (tool_choice !== undefined) extra.tool_choice = tool_choice;
  if (parallel_tool_calls === false && request.toolChoice !== undefined && request.toolChoice.type !== "none") {
    request.toolChoice.disableParallelToolUse = true;
  } else if (parallel_tool_calls !== undefined) extra.parallel_tool_calls = parallel_tool_calls;
  if (typeof max_tokens === "number") {
    request.maxTokens = max_tokens;
    if (max_completion_tokens !== undefined) extra.max_completion_tokens = max_completion_tokens;
  } else if (typeof max_completion_tokens === "number") request.maxTokens = max_completion_tokens;
  if (temperature !== undefined) request.temperature = temperature;
  if (top_p !== undefined) request.topP = top_p;
  if (typeof stop === "string") request.stopSequences = [stop];
  else if (Array.isArray(stop)) request.stopSequences = stop;
  if (stream !== undefined) request.stream = stream;
  if (reasoning_effort !== undefined) request.reasoningEffort = reasoning_effort;
  if (user !== undefined) request.userId = user;
  withExtra(request, extra);
  return { value: request, lossy };
}

function toolToCore(tool: OpenAIFunctionTool): ToolDefinition {
  const { name, description, parameters, ...extra } = tool.function;
  const definition: ToolDefinition = { name, inputSchema: parameters };
  if (description !== undefined) definition.description = description;
  return withExtra(definition, extra);
}

function toolChoiceToCore(choice: OpenAIChatRequest["tool_choice"]): ToolChoice | undefined {
  if (choice === "auto") return { type: "auto" };
  if (choice === "required") return { type: "any" };
  if (choice === "none") return { type: "none" };
  if (typeof choice === "object" && choice !== null && choice.type === "function") {
    const name = (choice.function as { name?: unknown } | undefined)?.name;
    if (typeof name === "string" && Object.keys(choice).length === 2) return { type: "tool", name };
  }
  return undefined;
}

/**
 * A whole OpenAI answer -> core. It runs through the stream decoder as one chunk, so streaming and
 * non-streaming give the same parts by construction: reasoning before content, inline `<think>` split
 * in order (beside a reasoning field too), text tool calls parsed, then native tool calls.
 */
export function openaiResponseToCore(
  body: OpenAIChatResponse,
  options: OpenAIDecodeOptions = {},
): Converted<ConversationResponse> {
  const lossy: LossyEntry[] = [];
  const choices = Array.isArray(body.choices) ? body.choices : [];
  const choice = choices[0];
  const decoder = createOpenAIChunkDecoder(options);
  const chunk = {
    id: body.id,
    model: body.model,
    choices: choice ? [{ index: 0, delta: choice.message ?? {}, finish_reason: choice.finish_reason }] : [],
    usage: body.usage,
  };
  const response = foldEvents([...decoder.pushChunk(chunk), ...decoder.end()]).answer;
  if (choices.length > 1) {
    lossy.push({
      code: "extra-choices-dropped",
      message: `only the first of ${choices.length} choices is kept`,
      path: "choices",
    });
  }
  const logprobs = (choice as { logprobs?: unknown } | undefined)?.logprobs;
  if (logprobs !== undefined && logprobs !== null) {
    lossy.push({
      code: "logprobs-dropped",
      message: "token log probabilities have no place in the canonical answer",
      path: "choices[0].logprobs",
    });
  }
  const refusal = choice?.message?.refusal;
  if (typeof refusal === "string" && refusal !== "") {
    lossy.push({
      code: "refusal-as-text",
      message: "the refusal is carried as text",
      path: "choices[0].message.refusal",
    });
  }
  response.message.parts.forEach((part, index) => {
    if (part.type === "tool_call" && part.rawInput !== undefined) {
      lossy.push({
        code: "tool-arguments-repaired",
        message: `tool call '${part.name}' arguments were not valid JSON; the input was repaired and the text kept`,
        path: formatPath(["message", "content", index]),
      });
    }
  });
  return { value: response, lossy };
}
