import {
  assertNever,
  type ConversationRequest,
  type ConversationResponse,
  type Converted,
  fieldsFor,
  type LossyEntry,
  type Message,
  type TextPart,
} from "../../core/index.js";
import { ContentsWriter, reportDropped, withoutForm } from "./contents-from-core.js";
import { finishReasonFor } from "./map-finish-reason.js";
import { usageFromCore } from "./usage.js";
import type {
  GeminiContent,
  GeminiFunctionDeclaration,
  GeminiGenerationConfig,
  GeminiRequest,
  GeminiResponse,
  GeminiTool,
  GeminiToolConfig,
} from "./wire-types.js";

export interface GeminiEncodeOptions {
  /** The provider the request goes to: only its own signatures go back as signatures. */
  provider?: string;
  /** Thinking Gemini did not make: as text in `<think>` tags (the default), or left out. */
  reasoning?: "think-tags" | "drop";
}

/**
 * A canonical request as a `generateContent` body for a provider. The model and streaming are not in the body (they
 * are in the URL, see `upstream.ts`). Tools go with `parametersJsonSchema` (full JSON Schema, taken as it is), the
 * system prompt and leading system messages in `systemInstruction`.
 */
export function coreToGeminiRequest(
  request: ConversationRequest,
  options: GeminiEncodeOptions = {},
): Converted<GeminiRequest> {
  const writer = new ContentsWriter({
    kind: "provider",
    reasoning: options.reasoning ?? "think-tags",
    ...(options.provider === undefined ? {} : { provider: options.provider }),
  });
  let leading = 0;
  while (request.messages[leading]?.role === "system") leading++;
  const systemParts = [request.system, ...request.messages.slice(0, leading)].flatMap((message) =>
    message === undefined ? [] : message.parts.filter((part): part is TextPart => part.type === "text"),
  );
  const lossy: LossyEntry[] = writer.lossy;
  const body: GeminiRequest = { contents: writer.contents(request.messages.slice(leading), leading) };
  if (systemParts.length > 0) body.systemInstruction = { parts: systemParts.map((part) => ({ text: part.text })) };
  const { fields, dropped } = fieldsFor(request.extra, "gemini", sharedRequestField);
  reportDropped(dropped, "request", lossy);
  const own = withoutForm(fields);
  const tools = toolsFromCore(request, writer, own.tools);
  if (tools.length > 0) body.tools = tools;
  const toolConfig = toolConfigFromCore(request, own);
  if (toolConfig !== undefined) body.toolConfig = toolConfig;
  const generation = generationFromCore(request, own, lossy);
  if (Object.keys(generation).length > 0) body.generationConfig = generation;
  for (const [key, value] of Object.entries(own)) {
    if (
      [
        "tools",
        "toolConfig",
        "generationConfig",
        "thinkingConfig",
        "allowedFunctionNames",
        "functionCallingMode",
      ].includes(key)
    )
      continue;
    body[key] = value;
  }
  return { value: body, lossy };
}

/** Request fields of another API Gemini has too: none under the same name. */
const sharedRequestField = (): boolean => false;

function toolsFromCore(request: ConversationRequest, writer: ContentsWriter, other: unknown): GeminiTool[] {
  const declarations: GeminiFunctionDeclaration[] = (request.tools ?? []).map((tool, index) => {
    const declaration: GeminiFunctionDeclaration = { name: tool.name };
    if (tool.description !== undefined) declaration.description = tool.description;
    declaration.parametersJsonSchema = tool.inputSchema ?? { type: "object", properties: {} };
    Object.assign(declaration, withoutForm(writer.fields(tool.extra, `tools[${index}]`)));
    return declaration;
  });
  const tools: GeminiTool[] = declarations.length > 0 ? [{ functionDeclarations: declarations }] : [];
  if (Array.isArray(other)) tools.push(...(other as GeminiTool[]));
  return tools;
}

function toolConfigFromCore(request: ConversationRequest, own: Record<string, unknown>): GeminiToolConfig | undefined {
  const base = (own.toolConfig ?? {}) as GeminiToolConfig;
  const choice = request.toolChoice;
  if (choice === undefined) return Object.keys(base).length === 0 ? undefined : base;
  const config: GeminiToolConfig = { ...base };
  switch (choice.type) {
    case "auto":
      config.functionCallingConfig = { mode: own.functionCallingMode === "VALIDATED" ? "VALIDATED" : "AUTO" };
      break;
    case "any":
      config.functionCallingConfig = Array.isArray(own.allowedFunctionNames)
        ? { mode: "ANY", allowedFunctionNames: own.allowedFunctionNames as string[] }
        : { mode: "ANY" };
      break;
    case "tool":
      config.functionCallingConfig = { mode: "ANY", allowedFunctionNames: [choice.name] };
      break;
    case "none":
      config.functionCallingConfig = { mode: "NONE" };
      break;
    default:
      assertNever(choice, "tool choice");
  }
  return config;
}

const THINKING_LEVELS = new Set(["minimal", "low", "medium", "high"]);

function generationFromCore(
  request: ConversationRequest,
  own: Record<string, unknown>,
  lossy: LossyEntry[],
): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = { ...(own.generationConfig as GeminiGenerationConfig | undefined) };
  if (request.maxTokens !== undefined) config.maxOutputTokens = request.maxTokens;
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.topK !== undefined) config.topK = request.topK;
  if (request.stopSequences !== undefined && request.stopSequences.length > 0) {
    config.stopSequences = request.stopSequences.slice(0, 5);
    if (request.stopSequences.length > 5)
      lossy.push({
        code: "stop-sequences-dropped",
        message: "Gemini takes at most 5 stop sequences",
        path: "stop_sequences",
      });
  }
  const format = request.responseFormat;
  if (format !== undefined && format.type !== "text") {
    config.responseMimeType = "application/json";
    if (format.type === "json_schema" && format.schema !== undefined) config.responseJsonSchema = format.schema;
  }
  const thinking: Record<string, unknown> = { ...(own.thinkingConfig as Record<string, unknown> | undefined) };
  const asked = request.thinking;
  if (asked !== undefined) {
    Object.assign(thinking, withoutForm(asked.extra?.gemini));
    if (asked.type === "disabled") thinking.thinkingBudget = 0;
    else {
      thinking.includeThoughts ??= asked.display !== "omitted";
      if (asked.type === "enabled" && asked.budgetTokens !== undefined) thinking.thinkingBudget = asked.budgetTokens;
      else if (asked.type === "adaptive") thinking.thinkingBudget = -1;
    }
  }
  const effort = request.reasoningEffort;
  if (effort !== undefined && thinking.thinkingBudget === undefined) {
    if (THINKING_LEVELS.has(effort)) thinking.thinkingLevel = effort;
    else
      lossy.push({
        code: "reasoning-effort-dropped",
        message: `Gemini has no thinking level '${effort}'`,
        path: "reasoning_effort",
      });
  }
  if (Object.keys(thinking).length > 0) config.thinkingConfig = thinking;
  return config;
}

export interface GeminiAnswerOptions {
  /** The response id the client sees. */
  answerId?: string;
}

/** A canonical answer as the `GenerateContentResponse` a Gemini client gets. */
export function coreToGeminiResponse(
  response: ConversationResponse,
  options: GeminiAnswerOptions = {},
): Converted<GeminiResponse> {
  const writer = new ContentsWriter({ kind: "client" });
  const parts = writer.modelParts(response.message as Message, 0);
  const lossy: LossyEntry[] = writer.lossy.map((entry) =>
    entry.path === undefined ? entry : { ...entry, path: entry.path.replace(/^messages\[0\]/, "message") },
  );
  const content: GeminiContent = { role: "model", parts };
  const body: GeminiResponse = {
    candidates: [{ content, finishReason: finishReasonFor(response.stopReason), index: 0 }],
    usageMetadata: usageFromCore(response.usage),
    modelVersion: response.model,
    responseId: options.answerId ?? response.id,
  };
  const { fields, dropped } = fieldsFor(response.extra, "gemini");
  reportDropped(dropped, "response", lossy);
  const own = withoutForm(fields);
  if (own.candidate !== undefined && typeof own.candidate === "object")
    Object.assign(body.candidates![0]!, own.candidate);
  for (const [key, value] of Object.entries(own)) if (key !== "candidate") body[key] = value;
  return { value: body, lossy };
}
