/**
 * Google's Gemini API (`generateContent`), as the public reference and the `@google/genai` types give it: the
 * shapes Parley reads and writes. Every object may hold fields not named here; they are kept, not refused.
 */

export type GeminiJson = Record<string, unknown>;

export interface GeminiFunctionCall {
  name: string;
  args?: GeminiJson;
  /** Given by newer models and by clients that keep ids; absent, calls pair with responses by name and order. */
  id?: string;
}

export interface GeminiFunctionResponse {
  name: string;
  /** The call's result as an object: `{output: ...}` or `{error: ...}` by convention. */
  response: GeminiJson;
  id?: string;
}

export interface GeminiBlob {
  mimeType: string;
  /** Base64. */
  data: string;
}

export interface GeminiFileData {
  mimeType?: string;
  fileUri: string;
}

/** One part of a content: exactly one of its data fields, plus the flags any part may carry. */
export interface GeminiPart {
  text?: string;
  /** A thought summary (asked for with `thinkingConfig.includeThoughts`). */
  thought?: boolean;
  /** Opaque; goes back on exactly the part that carried it. */
  thoughtSignature?: string;
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
  inlineData?: GeminiBlob;
  fileData?: GeminiFileData;
  executableCode?: GeminiJson;
  codeExecutionResult?: GeminiJson;
  [field: string]: unknown;
}

export type GeminiRole = "user" | "model";

export interface GeminiContent {
  role?: GeminiRole | string;
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  /** An OpenAPI subset (`type: "OBJECT"`...). */
  parameters?: GeminiJson;
  /** Full JSON Schema (what Gemini CLI sends). */
  parametersJsonSchema?: unknown;
  [field: string]: unknown;
}

export interface GeminiTool {
  functionDeclarations?: GeminiFunctionDeclaration[];
  /** Google's own tools (`googleSearch`, `codeExecution`, `urlContext`...). */
  [field: string]: unknown;
}

export type GeminiCallingMode = "AUTO" | "ANY" | "NONE" | "VALIDATED" | "MODE_UNSPECIFIED";

export interface GeminiToolConfig {
  functionCallingConfig?: { mode?: GeminiCallingMode | string; allowedFunctionNames?: string[] };
  [field: string]: unknown;
}

export interface GeminiThinkingConfig {
  includeThoughts?: boolean;
  /** Tokens; 0 turns thinking off, -1 lets the model choose. */
  thinkingBudget?: number;
  /** Gemini 3: `low`, `high`... */
  thinkingLevel?: string;
  [field: string]: unknown;
}

export interface GeminiGenerationConfig {
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  responseMimeType?: string;
  responseSchema?: unknown;
  responseJsonSchema?: unknown;
  thinkingConfig?: GeminiThinkingConfig;
  [field: string]: unknown;
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: GeminiContent;
  tools?: GeminiTool[];
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
  [field: string]: unknown;
}

export interface GeminiUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
  [field: string]: unknown;
}

export interface GeminiCandidate {
  content?: GeminiContent;
  /** Upper case: `STOP`, `MAX_TOKENS`, `SAFETY`, `RECITATION`, `MALFORMED_FUNCTION_CALL`... */
  finishReason?: string;
  finishMessage?: string;
  index?: number;
  [field: string]: unknown;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  usageMetadata?: GeminiUsage;
  modelVersion?: string;
  responseId?: string;
  promptFeedback?: { blockReason?: string; [field: string]: unknown };
  [field: string]: unknown;
}

/** `{"error": {...}}`, Google's error body. */
export interface GeminiErrorBody {
  error: { code: number; message: string; status: string; details?: unknown[] };
}

/** One entry of `GET /v1beta/models`. */
export interface GeminiModel {
  name: string;
  displayName?: string;
  inputTokenLimit?: number;
  outputTokenLimit?: number;
  supportedGenerationMethods?: string[];
  [field: string]: unknown;
}
