import { mockTokenCount } from "./mock-tokenizer.js";
import type { RecordedRequest, ScriptedReply, ScriptedUpstream } from "./scripted-upstream.js";

/**
 * A scripted Gemini API that refuses what Google's server refuses, before any scripted reply is used (the texts are
 * those of its public errors):
 *
 * - a field the API does not define, anywhere it checks: `Invalid JSON payload received. Unknown name "x" at
 *   'contents[0].parts[0]': Cannot find field.`;
 * - JSON Schema keywords in a declaration's `parameters` (an OpenAPI subset) that the subset does not have;
 * - a function call of the current turn without its signature: `Function call is missing a thought_signature in
 *   functionCall parts...` (Gemini 3), and a signature it did not issue: `Corrupted thought signature.`;
 * - a key other than the one it was given.
 *
 * Its signatures are the ones its scripted answers carry (`gsig_...`); Google's skip value passes. It counts tokens
 * as `models.countTokens` does, in Google's shape, with a deterministic tokenizer (`countedTokens`).
 */
export const SKIP = "skip_thought_signature_validator";

const REQUEST_FIELDS = new Set([
  "contents",
  "systemInstruction",
  "tools",
  "toolConfig",
  "generationConfig",
  "safetySettings",
  "cachedContent",
  "labels",
]);
const CONTENT_FIELDS = new Set(["role", "parts"]);
const PART_FIELDS = new Set([
  "text",
  "thought",
  "thoughtSignature",
  "functionCall",
  "functionResponse",
  "inlineData",
  "fileData",
  "executableCode",
  "codeExecutionResult",
  "videoMetadata",
  "partMetadata",
]);
const DECLARATION_FIELDS = new Set([
  "name",
  "description",
  "parameters",
  "parametersJsonSchema",
  "response",
  "responseJsonSchema",
  "behavior",
]);
const GENERATION_FIELDS = new Set([
  "maxOutputTokens",
  "temperature",
  "topP",
  "topK",
  "stopSequences",
  "responseMimeType",
  "responseSchema",
  "responseJsonSchema",
  "thinkingConfig",
  "candidateCount",
  "seed",
  "presencePenalty",
  "frequencyPenalty",
  "responseModalities",
]);
/** The OpenAPI subset `parameters` takes (Schema in the API reference). */
const SCHEMA_FIELDS = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "properties",
  "required",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "anyOf",
  "propertyOrdering",
  "default",
  "items",
  "minimum",
  "maximum",
]);

export interface GeminiServer {
  /** Answers each API request: Google's refusal, else the next scripted reply. */
  replies: ScriptedReply[];
  /** The key it takes (`x-goog-api-key`); undefined: any. */
  key?: string;
}

/**
 * Makes `upstream` (a scripted upstream of kind `gemini`) behave as Google's server: `countTokens` is answered with
 * the scripted tokenizer's count (queued replies go first, for a test's failure), anything else with Google's
 * refusal or the next scripted reply.
 */
export function actAsGemini(upstream: ScriptedUpstream, server: GeminiServer): void {
  upstream.fallback = (request) =>
    COUNT_TOKENS.test(request.path)
      ? countTokens(request, server)
      : (refusal(request, server) ?? server.replies.shift() ?? noReply());
}

const COUNT_TOKENS = /:countTokens(\?|$)/;
/** Google's figure for an image up to 384 px on both sides; larger ones are tiled at that much a tile. */
const IMAGE_TOKENS = 258;

/**
 * `models/{model}:countTokens`: `contents`, or a whole request under `generateContentRequest` naming its model, never
 * both (see test/fixtures/scripted/server-shapes.md), counted as `countedTokens` counts them.
 */
function countTokens(request: RecordedRequest, server: GeminiServer): ScriptedReply {
  const key = keyRefusal(request, server);
  if (key !== undefined) return key;
  const body = request.body as Record<string, unknown> | undefined;
  if (body === undefined || body === null || typeof body !== "object") return invalid("Invalid JSON payload received.");
  for (const field of Object.keys(body))
    if (field !== "contents" && field !== "generateContentRequest")
      return invalid(`Invalid JSON payload received. Unknown name "${field}": Cannot find field.`);
  if (body.contents !== undefined && body.generateContentRequest !== undefined)
    return invalid("contents and generateContentRequest are mutually exclusive: send one of them.");
  let counted: Record<string, unknown>;
  if (body.generateContentRequest !== undefined) {
    const { model, ...generate } = body.generateContentRequest as Record<string, unknown>;
    if (typeof model !== "string" || !/^models\/[^/]+$/.test(model))
      return invalid("* GenerateContentRequest.model: unexpected model name format\n");
    const problem = fieldRefusal(generate);
    if (problem !== undefined) return problem;
    counted = generate;
  } else {
    const problem = fieldRefusal({ contents: body.contents });
    if (problem !== undefined) return problem;
    counted = { contents: body.contents };
  }
  const { text, image } = countedTokens(counted);
  const details = [{ modality: "TEXT", tokenCount: text }];
  if (image > 0) details.push({ modality: "IMAGE", tokenCount: image });
  return { kind: "json", body: { totalTokens: text + image, promptTokensDetails: details } };
}

/**
 * The scripted Gemini tokenizer: o200k_base over every text, call (name and arguments), response, system instruction
 * and tool declaration, and `IMAGE_TOKENS` an inline image.
 */
export function countedTokens(request: Record<string, unknown>): { text: number; image: number } {
  const texts: string[] = [];
  let image = 0;
  const visit = (content: unknown) => {
    const parts = ((content as { parts?: unknown } | null)?.parts ?? []) as Array<Record<string, unknown>>;
    for (const part of parts) {
      if (typeof part.text === "string") texts.push(part.text);
      if (part.functionCall !== undefined) texts.push(JSON.stringify(part.functionCall));
      if (part.functionResponse !== undefined) texts.push(JSON.stringify(part.functionResponse));
      if (part.inlineData !== undefined || part.fileData !== undefined) image += IMAGE_TOKENS;
    }
  };
  for (const content of (request.contents ?? []) as unknown[]) visit(content);
  if (request.systemInstruction !== undefined) visit(request.systemInstruction);
  if (request.tools !== undefined) texts.push(JSON.stringify(request.tools));
  return { text: texts.length === 0 ? 0 : mockTokenCount(texts.join("\n")), image };
}

function noReply(): ScriptedReply {
  return { kind: "error", status: 500, body: geminiError(500, "INTERNAL", "scripted Gemini: no reply queued") };
}

export function geminiError(code: number, status: string, message: string) {
  return { error: { code, message, status } };
}

function invalid(message: string): ScriptedReply {
  return { kind: "error", status: 400, body: geminiError(400, "INVALID_ARGUMENT", message) };
}

function keyRefusal(request: RecordedRequest, server: GeminiServer): ScriptedReply | undefined {
  if (server.key === undefined || request.headers["x-goog-api-key"] === server.key) return undefined;
  return {
    kind: "error",
    status: 400,
    body: geminiError(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."),
  };
}

function refusal(request: RecordedRequest, server: GeminiServer): ScriptedReply | undefined {
  const key = keyRefusal(request, server);
  if (key !== undefined) return key;
  const body = request.body as Record<string, unknown> | undefined;
  if (body === undefined || body === null || typeof body !== "object") return invalid("Invalid JSON payload received.");
  const contents = Array.isArray(body.contents) ? (body.contents as Array<Record<string, unknown>>) : [];
  return fieldRefusal(body) ?? signatures(contents);
}

/** A field the API does not define, anywhere it checks, or no contents. */
function fieldRefusal(body: Record<string, unknown>): ScriptedReply | undefined {
  const unknown = (fields: Set<string>, object: unknown, at: string): ScriptedReply | undefined => {
    if (object === null || typeof object !== "object") return undefined;
    for (const key of Object.keys(object))
      if (!fields.has(key))
        return invalid(
          `Invalid JSON payload received. Unknown name "${key}"${at === "" ? "" : ` at '${at}'`}: Cannot find field.`,
        );
    return undefined;
  };
  const contents = Array.isArray(body.contents) ? (body.contents as Array<Record<string, unknown>>) : [];
  const problem =
    unknown(REQUEST_FIELDS, body, "") ??
    unknown(GENERATION_FIELDS, body.generationConfig, "generation_config") ??
    contents
      .map(
        (content, index) =>
          unknown(CONTENT_FIELDS, content, `contents[${index}]`) ??
          (Array.isArray(content.parts) ? content.parts : [])
            .map((part, partIndex) => unknown(PART_FIELDS, part, `contents[${index}].parts[${partIndex}]`))
            .find((found) => found !== undefined),
      )
      .find((found) => found !== undefined) ??
    declarations(body, unknown);
  if (problem !== undefined) return problem;
  if (contents.length === 0) return invalid("* GenerateContentRequest.contents: contents is not specified");
  return undefined;
}

function declarations(
  body: Record<string, unknown>,
  unknown: (fields: Set<string>, object: unknown, at: string) => ScriptedReply | undefined,
): ScriptedReply | undefined {
  const tools = Array.isArray(body.tools) ? (body.tools as Array<Record<string, unknown>>) : [];
  for (const [index, tool] of tools.entries()) {
    const list = Array.isArray(tool.functionDeclarations)
      ? (tool.functionDeclarations as Array<Record<string, unknown>>)
      : [];
    for (const [position, declaration] of list.entries()) {
      const at = `tools[${index}].function_declarations[${position}]`;
      const found =
        unknown(DECLARATION_FIELDS, declaration, at) ?? schema(declaration.parameters, `${at}.parameters`, unknown);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function schema(
  value: unknown,
  at: string,
  unknown: (fields: Set<string>, object: unknown, at: string) => ScriptedReply | undefined,
): ScriptedReply | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const record = value as Record<string, unknown>;
  const own = unknown(SCHEMA_FIELDS, record, at);
  if (own !== undefined) return own;
  for (const [name, inner] of Object.entries((record.properties ?? {}) as Record<string, unknown>)) {
    const found = schema(inner, `${at}.properties[${name}].value`, unknown);
    if (found !== undefined) return found;
  }
  return record.items === undefined ? undefined : schema(record.items, `${at}.items`, unknown);
}

/**
 * The current turn starts after the last user content holding text; each of its model contents with calls must sign
 * its first call (Gemini 3). Every signature must be one the server issued, or the skip value.
 */
function signatures(contents: Array<Record<string, unknown>>): ScriptedReply | undefined {
  let start = 0;
  contents.forEach((content, index) => {
    const parts = (content.parts ?? []) as Array<Record<string, unknown>>;
    if (content.role !== "model" && parts.some((part) => typeof part.text === "string")) start = index;
  });
  for (const [index, content] of contents.entries()) {
    const parts = (content.parts ?? []) as Array<Record<string, unknown>>;
    for (const part of parts) {
      const signature = part.thoughtSignature;
      if (
        signature !== undefined &&
        signature !== SKIP &&
        !(typeof signature === "string" && signature.startsWith("gsig_"))
      )
        return invalid("Corrupted thought signature.");
    }
    if (content.role !== "model" || index < start) continue;
    const calls = parts.filter((part) => part.functionCall !== undefined);
    const first = calls[0];
    if (first !== undefined && first.thoughtSignature === undefined) {
      const name = (first.functionCall as { name?: string }).name;
      return invalid(
        `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${parts.indexOf(first) + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
      );
    }
  }
  return undefined;
}

/** A whole answer as SSE frames, each part its own event (texts cut in two), usage and finish in the last. */
export function geminiFrames(answer: Record<string, unknown>): string[] {
  const candidate = (answer.candidates as Array<Record<string, unknown>>)[0]!;
  const parts = ((candidate.content as { parts: Array<Record<string, unknown>> }).parts ?? []).flatMap((part) => {
    if (typeof part.text !== "string" || part.text.length < 2) return [part];
    const half = Math.floor(part.text.length / 2);
    const { thoughtSignature, ...rest } = part;
    const last = { ...rest, text: part.text.slice(half) };
    return [
      { ...rest, text: part.text.slice(0, half) },
      thoughtSignature === undefined ? last : { ...last, thoughtSignature },
    ];
  });
  const common = { modelVersion: answer.modelVersion, responseId: answer.responseId };
  const frames = parts.map((part) => ({
    candidates: [{ content: { role: "model", parts: [part] }, index: 0 }],
    ...common,
  }));
  frames.push({
    candidates: [{ content: { role: "model", parts: [] }, finishReason: candidate.finishReason, index: 0 }],
    ...common,
    usageMetadata: answer.usageMetadata,
  } as never);
  return frames.map((frame) => `data: ${JSON.stringify(frame)}\r\n\r\n`);
}
