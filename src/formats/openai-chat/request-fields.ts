import type { ConversationRequest, ResponseFormat, ToolChoice, ToolDefinition } from "../../core/index.js";
import { assertNever } from "../../core/index.js";
import type { OpenAICompat } from "./compat.js";
import { type EncodeContext, openaiFieldsOf, presetTakes, reportOnce } from "./encode-context.js";
import { sharedElementField, sharedRequestField } from "./fields.js";
import type { OpenAIChatRequest, OpenAIFunctionTool, OpenAIMessage, OpenAIToolChoice } from "./wire-types.js";

/** Everything but the messages: tools, tool choice, limits, sampling, the thinking switch, extras. */
export function requestFieldsToOpenAI(
  request: ConversationRequest,
  messages: OpenAIMessage[],
  compat: OpenAICompat | undefined,
  context: EncodeContext,
): OpenAIChatRequest {
  const body: OpenAIChatRequest = {
    model: request.model,
    messages,
    ...openaiFieldsOf(request.extra, "request", "", context, sharedRequestField),
  };
  // The conversation's cache key, to a server that routes its cache by it, unless the client gave its own.
  if (request.cacheKey !== undefined && compat?.promptCacheKey === true && body.prompt_cache_key === undefined)
    body.prompt_cache_key = request.cacheKey;
  if (request.tools !== undefined) {
    const tools = request.tools.flatMap((tool, index) => toolToOpenAI(tool, index, context));
    if (tools.length > 0) body.tools = tools;
  }
  if (request.toolChoice !== undefined) {
    if (compat !== undefined && !compat.supportsToolChoice) {
      context.lossy.push({
        code: "tool-choice-dropped",
        message: "the upstream does not take tool_choice",
        path: "tool_choice",
      });
    } else if (request.toolChoice.type === "tool" && compat?.namedToolChoice === "required") {
      // The server's string form keeps the force: any call is required, and the named tool is the only one offered.
      const name = request.toolChoice.name;
      body.tool_choice = "required";
      if (body.tools !== undefined) body.tools = body.tools.filter((tool) => tool.function.name === name);
    } else {
      body.tool_choice = toolChoiceToOpenAI(request.toolChoice);
    }
    if (request.toolChoice.type !== "none" && request.toolChoice.disableParallelToolUse)
      body.parallel_tool_calls = false;
  }
  if (request.maxTokens !== undefined) {
    const field = compat?.maxTokensField ?? "max_tokens";
    const cap = compat?.maxTokensCap;
    if (cap !== undefined && request.maxTokens > cap) {
      body[field] = cap;
      context.lossy.push({
        code: "max-tokens-capped",
        message: `max tokens ${request.maxTokens} capped at the upstream's ${cap}`,
        path: field,
      });
    } else body[field] = request.maxTokens;
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.topK !== undefined) {
    // not a Chat Completions field: only for a server that takes it
    if (compat === undefined || presetTakes(compat, "top_k")) body.top_k = request.topK;
    else reportOnce(context, "field-dropped-top_k", "the upstream's preset does not take top_k; dropped", "top_k");
  }
  if (request.stopSequences !== undefined) body.stop = request.stopSequences;
  if (request.stream !== undefined) body.stream = request.stream;
  if (request.stream && compat?.streamUsage) {
    const existing = typeof body.stream_options === "object" && body.stream_options !== null ? body.stream_options : {};
    body.stream_options = { ...existing, include_usage: true };
  }
  if (request.reasoningEffort !== undefined) body.reasoning_effort = request.reasoningEffort;
  if (request.responseFormat !== undefined && body.response_format === undefined)
    body.response_format = responseFormatToOpenAI(request.responseFormat);
  if (request.userId !== undefined) body.user = request.userId;
  if (request.thinking !== undefined) applyThinkingSwitch(request, body, compat, context);
  return body;
}

function responseFormatToOpenAI(format: ResponseFormat): Record<string, unknown> {
  if (format.type !== "json_schema") return { type: format.type };
  const schema: Record<string, unknown> = { name: format.name ?? "response", schema: format.schema };
  if (format.strict !== undefined) schema.strict = format.strict;
  if (format.description !== undefined) schema.description = format.description;
  return { type: "json_schema", json_schema: schema };
}

function toolToOpenAI(tool: ToolDefinition, index: number, context: EncodeContext): OpenAIFunctionTool[] {
  const { type, ...anthropic } = tool.extra?.anthropic ?? {};
  const path = `tools[${index}]`;
  if (typeof type === "string" && type !== "custom" && type !== "function") {
    context.lossy.push({
      code: "server-tool-dropped",
      message: `Anthropic server tool '${type}' has no OpenAI equivalent`,
      path,
    });
    return [];
  }
  // an Anthropic tool's `type` (custom) is its kind, which `type: "function"` says; its other fields go by the rule
  const extra = tool.extra === undefined ? undefined : { ...tool.extra, anthropic };
  const fields = openaiFieldsOf(extra, "element", path, context, sharedElementField);
  const fn: OpenAIFunctionTool["function"] = { name: tool.name };
  if (tool.description !== undefined) fn.description = tool.description;
  if (tool.inputSchema !== undefined) fn.parameters = tool.inputSchema;
  return [{ type: "function", function: { ...fn, ...fields } }];
}

function toolChoiceToOpenAI(choice: ToolChoice): OpenAIToolChoice {
  switch (choice.type) {
    case "auto":
      return "auto";
    case "any":
      return "required";
    case "none":
      return "none";
    case "tool":
      return { type: "function", function: { name: choice.name } };
    default:
      return assertNever(choice, "tool choice");
  }
}

/** Turns the request's thinking config into the upstream's own switch (compat `thinkingSwitch`). */
function applyThinkingSwitch(
  request: ConversationRequest,
  body: OpenAIChatRequest,
  compat: OpenAICompat | undefined,
  context: EncodeContext,
): void {
  const thinking = request.thinking!;
  const on = thinking.type !== "disabled";
  const kind = compat?.thinkingSwitch.type ?? "none";
  switch (kind) {
    case "none":
      if (on)
        reportOnce(
          context,
          "thinking-config-dropped",
          "the upstream has no thinking switch; the thinking config was not sent",
          "thinking",
        );
      break;
    case "chat_template_kwargs": {
      const existing =
        typeof body.chat_template_kwargs === "object" && body.chat_template_kwargs !== null
          ? body.chat_template_kwargs
          : {};
      body.chat_template_kwargs = { ...existing, enable_thinking: on };
      const budgetField =
        compat?.thinkingSwitch.type === "chat_template_kwargs" ? compat.thinkingSwitch.budgetField : undefined;
      if (on && budgetField !== undefined && thinking.budgetTokens !== undefined && body[budgetField] === undefined)
        body[budgetField] = thinking.budgetTokens;
      break;
    }
    case "reasoning_effort":
      if (on && body.reasoning_effort === undefined) body.reasoning_effort = effortFor(thinking.budgetTokens);
      break;
    case "thinking":
      body.thinking = { type: on ? "enabled" : "disabled" };
      break;
    case "ollama_think":
      body.think = on;
      break;
    case "nemotron_system_prompt":
      body.messages = [{ role: "system", content: `detailed thinking ${on ? "on" : "off"}` }, ...body.messages];
      break;
    case "openrouter_reasoning":
      body.reasoning = on
        ? thinking.budgetTokens !== undefined
          ? { max_tokens: thinking.budgetTokens }
          : { enabled: true }
        : { enabled: false };
      break;
    default:
      assertNever(kind, "thinking switch");
  }
}

/** A thinking budget as an OpenAI effort level. */
function effortFor(budget: number | undefined): string {
  if (budget === undefined) return "medium";
  if (budget < 4096) return "low";
  return budget < 16384 ? "medium" : "high";
}
