import {
  type ConversationRequest,
  type ConversationResponse,
  type Converted,
  type LossyEntry,
  type Message,
  type Part,
  type ResponseFormat,
  type ThinkingConfig,
  type ToolChoice,
  type ToolDefinition,
  withFields,
} from "../../core/index.js";
import { type ContentsReader, contentsToCore, isTextPart, rest } from "./contents-to-core.js";
import { newAnswerId } from "./ids.js";
import { blockedPrompt, mapFinishReason } from "./map-finish-reason.js";
import { schemaToJsonSchema } from "./schema.js";
import { usageToCore } from "./usage.js";
import type { GeminiContent, GeminiRequest, GeminiResponse, GeminiTool } from "./wire-types.js";

/** Where a client's request names what its body does not: the model and streaming are in the URL. */
export interface RequestPlace {
  model: string;
  stream: boolean;
}

/** A client's ids for calls that have none: by place, so that the same history reads the same every turn. */
export const clientReader: ContentsReader = {
  from: "client",
  callId: (content, ordinal) => `call_${content}_${ordinal}`,
};

/** A `generateContent` body, checked, as a canonical request. */
export function geminiRequestToCore(body: GeminiRequest, place: RequestPlace): Converted<ConversationRequest> {
  const read = contentsToCore(body.contents, clientReader, "contents");
  const lossy: LossyEntry[] = [...read.lossy];
  const request: ConversationRequest = { model: place.model, messages: read.messages, stream: place.stream };
  const system = systemToCore(body.systemInstruction);
  if (system !== undefined) request.system = system;
  const tools = toolsToCore(body.tools);
  if (tools.tools.length > 0) request.tools = tools.tools;
  const extra: Record<string, unknown> = {};
  if (tools.other.length > 0) extra.tools = tools.other;
  const choice = toolChoiceToCore(body.toolConfig, extra);
  if (choice !== undefined) request.toolChoice = choice;
  const config = body.generationConfig;
  if (config !== undefined && config !== null) {
    if (typeof config.maxOutputTokens === "number") request.maxTokens = config.maxOutputTokens;
    if (typeof config.temperature === "number") request.temperature = config.temperature;
    if (typeof config.topP === "number") request.topP = config.topP;
    if (typeof config.topK === "number") request.topK = config.topK;
    if (Array.isArray(config.stopSequences)) request.stopSequences = config.stopSequences;
    const format = responseFormat(config.responseMimeType, config.responseJsonSchema ?? config.responseSchema);
    if (format !== undefined) request.responseFormat = format;
    const thinking = config.thinkingConfig;
    if (thinking !== undefined && thinking !== null) {
      const core = thinkingToCore(thinking.thinkingBudget);
      if (core !== undefined)
        request.thinking = withFields(core, "gemini", rest(thinking, ["thinkingBudget", "thinkingLevel"]));
      if (typeof thinking.thinkingLevel === "string") request.reasoningEffort = thinking.thinkingLevel;
      if (core === undefined) {
        const kept = rest(thinking, ["thinkingBudget", "thinkingLevel"]);
        if (kept !== undefined) extra.thinkingConfig = kept;
      }
    }
    const others = rest(config, [
      "maxOutputTokens",
      "temperature",
      "topP",
      "topK",
      "stopSequences",
      "responseMimeType",
      "responseSchema",
      "responseJsonSchema",
      "thinkingConfig",
    ]);
    if (others !== undefined) extra.generationConfig = others;
  }
  Object.assign(
    extra,
    rest(body, ["contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "model"]),
  );
  withFields(request, "gemini", Object.keys(extra).length === 0 ? undefined : extra);
  return { value: request, lossy };
}

function systemToCore(system: GeminiContent | string | undefined | null): Message | undefined {
  if (system === undefined || system === null) return undefined;
  if (typeof system === "string") return { role: "system", parts: [{ type: "text", text: system }] };
  const parts: Part[] = system.parts.flatMap((part) =>
    isTextPart(part) && part.text !== "" ? [{ type: "text" as const, text: part.text ?? "" }] : [],
  );
  return parts.length === 0 ? undefined : { role: "system", parts };
}

/** Function declarations as tools (`parameters`, an OpenAPI subset, as the JSON Schema it stands for); the rest kept. */
function toolsToCore(tools: readonly GeminiTool[] | undefined | null): { tools: ToolDefinition[]; other: unknown[] } {
  const out: ToolDefinition[] = [];
  const other: unknown[] = [];
  for (const tool of tools ?? []) {
    const declarations = tool.functionDeclarations ?? [];
    for (const declaration of declarations) {
      const schema =
        declaration.parametersJsonSchema ??
        (declaration.parameters === undefined
          ? { type: "object", properties: {} }
          : schemaToJsonSchema(declaration.parameters));
      const definition: ToolDefinition = { name: declaration.name, inputSchema: schema };
      if (typeof declaration.description === "string") definition.description = declaration.description;
      const fields = rest(declaration, ["name", "description", "parameters", "parametersJsonSchema"]);
      const form =
        declaration.parameters !== undefined && declaration.parametersJsonSchema === undefined
          ? { $schemaField: "parameters" }
          : undefined;
      out.push(
        withFields(
          definition,
          "gemini",
          fields === undefined && form === undefined ? undefined : { ...fields, ...form },
        ),
      );
    }
    const rest_ = rest(tool, ["functionDeclarations"]);
    if (rest_ !== undefined) other.push(rest_);
  }
  return { tools: out, other };
}

function toolChoiceToCore(config: GeminiRequest["toolConfig"], extra: Record<string, unknown>): ToolChoice | undefined {
  if (config === undefined || config === null) return undefined;
  const calling = config.functionCallingConfig;
  const others = rest(config, ["functionCallingConfig"]);
  if (others !== undefined) extra.toolConfig = others;
  if (calling === undefined || calling === null) return undefined;
  const names = Array.isArray(calling.allowedFunctionNames) ? calling.allowedFunctionNames : [];
  switch (calling.mode) {
    case "ANY":
      if (names.length === 1) return { type: "tool", name: names[0]! };
      if (names.length > 1) extra.allowedFunctionNames = names;
      return { type: "any" };
    case "NONE":
      return { type: "none" };
    case "VALIDATED":
      extra.functionCallingMode = "VALIDATED";
      return { type: "auto" };
    case "AUTO":
      return { type: "auto" };
    default:
      return undefined;
  }
}

function responseFormat(mimeType: unknown, schema: unknown): ResponseFormat | undefined {
  if (mimeType !== "application/json") return undefined;
  if (schema === undefined || schema === null) return { type: "json_object" };
  return { type: "json_schema", name: "response", schema: schemaToJsonSchema(schema) };
}

function thinkingToCore(budget: unknown): ThinkingConfig | undefined {
  if (typeof budget !== "number") return undefined;
  if (budget === 0) return { type: "disabled" };
  if (budget < 0) return { type: "adaptive" };
  return { type: "enabled", budgetTokens: budget };
}

export interface ResponseReadOptions {
  /** The provider whose answer this is: its signatures and thoughts record it. */
  provider?: string;
}

/** A whole `GenerateContentResponse` as a canonical answer (its first candidate). */
export function geminiResponseToCore(
  body: GeminiResponse,
  options: ResponseReadOptions = {},
): Converted<ConversationResponse> {
  const id = typeof body.responseId === "string" ? body.responseId : newAnswerId();
  const model = typeof body.modelVersion === "string" ? body.modelVersion : "";
  const candidates = Array.isArray(body.candidates) ? body.candidates : [];
  const candidate = candidates[0];
  const lossy: LossyEntry[] = [];
  if (candidates.length > 1)
    lossy.push({
      code: "candidates-dropped",
      message: `${candidates.length - 1} candidate(s) past the first were left out`,
      path: "candidates",
    });
  const reader = providerReader(id, options.provider, model);
  const parts = candidate?.content?.parts ?? [];
  const read = contentsToCore([{ role: "model", parts }], reader, "candidates[0].content");
  lossy.push(...read.lossy);
  const message = read.messages[0]!;
  const hasCalls = message.parts.some((part) => part.type === "tool_call");
  const block = body.promptFeedback?.blockReason;
  const stopReason =
    candidate === undefined && typeof block === "string"
      ? blockedPrompt(block)
      : mapFinishReason(typeof candidate?.finishReason === "string" ? candidate.finishReason : undefined, hasCalls);
  const response: ConversationResponse = {
    id,
    model,
    message: { role: "assistant", parts: message.parts },
    stopReason,
    usage: usageToCore(body.usageMetadata),
  };
  const extra = rest(body, ["candidates", "usageMetadata", "modelVersion", "responseId"]);
  const candidateFields = candidate === undefined ? undefined : rest(candidate, ["content", "finishReason", "index"]);
  withFields(
    response,
    "gemini",
    extra === undefined && candidateFields === undefined
      ? undefined
      : { ...extra, ...(candidateFields === undefined ? {} : { candidate: candidateFields }) },
  );
  return { value: response, lossy };
}

/** A provider's answer: its signatures and thoughts record it; calls without ids are named after the answer. */
export function providerReader(answerId: string, provider: string | undefined, model: string): ContentsReader {
  const reader: ContentsReader = { from: "provider", callId: (_content, ordinal) => `call_${answerId}_${ordinal}` };
  if (provider !== undefined) reader.provider = provider;
  if (model !== "") reader.model = model;
  return reader;
}
