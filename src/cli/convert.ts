import { parseArgs } from "node:util";
import type { LossyEntry, StreamError, StreamEvent } from "../core/index.js";
import { coreToAnthropicRequest, coreToAnthropicResponse } from "../formats/anthropic/from-core.js";
import { createAnthropicStreamDecoder } from "../formats/anthropic/stream-decoder.js";
import { createAnthropicStreamEncoder } from "../formats/anthropic/stream-encoder.js";
import { anthropicRequestToCore, anthropicResponseToCore } from "../formats/anthropic/to-core.js";
import { parseAnthropicRequest } from "../formats/anthropic/validate-request.js";
import type { ReasoningMode } from "../formats/openai-chat/compat.js";
import { coreToOpenAIRequest, coreToOpenAIResponse } from "../formats/openai-chat/from-core.js";
import { streamErrorFromOpenAI } from "../formats/openai-chat/map-error.js";
import { createOpenAIStreamDecoder } from "../formats/openai-chat/stream-decoder.js";
import { createOpenAIStreamEncoder } from "../formats/openai-chat/stream-encoder.js";
import { openaiRequestToCore, openaiResponseToCore } from "../formats/openai-chat/to-core.js";
import { parseOpenAIRequest } from "../formats/openai-chat/validate-request.js";
import { createAccumulator } from "../stream/accumulate.js";
import { answerLossy } from "../stream/answer-lossy.js";
import { SseDecoder, type SseMessage } from "../stream/sse.js";
import { type CommandIo, describeError } from "./io.js";

const help = `Usage: parley convert request|response|stream --from anthropic|openai --to openai|anthropic [--reasoning MODE]

Reads one JSON document (request, response) or one SSE transcript (stream) from stdin and writes it
in the other format to stdout. What the target format cannot carry is listed on stderr.

  --reasoning MODE   how thinking is written to OpenAI format: think-tags (default), reasoning_content,
                     reasoning, reasoning_details, drop
`;

const formats = ["anthropic", "openai"] as const;
type Format = (typeof formats)[number];
const kinds = ["request", "response", "stream"] as const;
type Kind = (typeof kinds)[number];
const reasoningModes: ReasoningMode[] = ["think-tags", "reasoning_content", "reasoning", "reasoning_details", "drop"];

export interface ConvertInput {
  /** Whole stdin for documents; for streams, an async source of chunks so output flows as input arrives. */
  text?: string;
  chunks?: AsyncIterable<Uint8Array | string>;
}

export async function runConvert(argv: string[], io: CommandIo, input?: ConvertInput): Promise<number> {
  let parsed: ReturnType<typeof parseConvertArgs>;
  try {
    parsed = parseConvertArgs(argv);
  } catch (error) {
    io.stderr(`parley convert: ${describeError(error)}\n\n${help}`);
    return 2;
  }
  if (parsed === "help") {
    io.stdout(help);
    return 0;
  }
  const { kind, from, to, reasoning } = parsed;
  try {
    if (kind === "stream") {
      const chunks = input?.chunks ?? (input?.text !== undefined ? [input.text] : process.stdin);
      const { lossy, problems } = await convertStream(chunks, from, to, reasoning, io.stdout);
      reportLossy(lossy, io);
      for (const problem of problems) io.stderr(`parley convert: ${problem}\n`);
      return problems.length > 0 ? 1 : 0;
    }
    const text = input?.text ?? (await readAll(process.stdin));
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch (error) {
      throw new Error(`stdin is not valid JSON: ${describeError(error)}`);
    }
    const { value, lossy } =
      kind === "request"
        ? convertRequest(document, from, to, reasoning)
        : convertResponse(document, from, to, reasoning);
    io.stdout(`${JSON.stringify(value, null, 2)}\n`);
    reportLossy(lossy, io);
    return 0;
  } catch (error) {
    io.stderr(`parley convert: ${describeError(error)}\n`);
    return 1;
  }
}

function parseConvertArgs(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      from: { type: "string" },
      to: { type: "string" },
      reasoning: { type: "string", default: "think-tags" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help" as const;
  const kind = positionals[0];
  if (!kinds.includes(kind as Kind))
    throw new Error(`the first argument must be request, response or stream (got ${kind ?? "nothing"})`);
  const from = values.from;
  const to = values.to;
  if (!formats.includes(from as Format))
    throw new Error(`--from must be anthropic or openai (got ${from ?? "nothing"})`);
  if (!formats.includes(to as Format)) throw new Error(`--to must be anthropic or openai (got ${to ?? "nothing"})`);
  if (!reasoningModes.includes(values.reasoning as ReasoningMode)) {
    throw new Error(`--reasoning must be one of ${reasoningModes.join(", ")} (got ${values.reasoning})`);
  }
  return { kind: kind as Kind, from: from as Format, to: to as Format, reasoning: values.reasoning as ReasoningMode };
}

export function convertRequest(document: unknown, from: Format, to: Format, reasoning: ReasoningMode) {
  const core =
    from === "anthropic"
      ? anthropicRequestToCore(parseAnthropicRequest(document))
      : openaiRequestToCore(parseOpenAIRequest(document));
  const out = to === "anthropic" ? coreToAnthropicRequest(core.value) : coreToOpenAIRequest(core.value, { reasoning });
  return { value: out.value as unknown, lossy: [...core.lossy, ...out.lossy] };
}

export function convertResponse(document: unknown, from: Format, to: Format, reasoning: ReasoningMode) {
  if (document === null || typeof document !== "object" || Array.isArray(document))
    throw new Error("the response must be a JSON object");
  // An error answer converts to the other format's error shape, never to an empty message.
  const error = errorOf(document as Record<string, unknown>, from);
  if (error !== undefined) return { value: errorDocument(error, to), lossy: [] as LossyEntry[] };
  checkResponse(document as Record<string, unknown>, from);
  const core =
    from === "anthropic"
      ? {
          value: anthropicResponseToCore(document as Parameters<typeof anthropicResponseToCore>[0]),
          lossy: [] as LossyEntry[],
        }
      : openaiResponseToCore(document as Parameters<typeof openaiResponseToCore>[0]);
  const out =
    to === "anthropic" ? coreToAnthropicResponse(core.value) : coreToOpenAIResponse(core.value, { reasoning });
  return { value: out.value as unknown, lossy: [...core.lossy, ...out.lossy] };
}

/** An error answer: OpenAI's `{error}` without choices, Anthropic's `{type: "error", error}`. */
function errorOf(document: Record<string, unknown>, from: Format): StreamError | undefined {
  if (from === "openai") {
    if (document.error === undefined || document.error === null || Array.isArray(document.choices)) return undefined;
    return streamErrorFromOpenAI(document.error);
  }
  if (document.type !== "error") return undefined;
  const error = (document.error ?? {}) as { type?: unknown; message?: unknown };
  return {
    type: typeof error.type === "string" ? error.type : "api_error",
    message: typeof error.message === "string" ? error.message : JSON.stringify(document.error ?? null),
  };
}

function errorDocument(error: StreamError, to: Format): unknown {
  return to === "anthropic"
    ? { type: "error", error: { type: error.type, message: error.message } }
    : { error: { message: error.message, type: error.type, param: null, code: null } };
}

/** What a response needs to be one at all; the converters read everything else leniently. */
function checkResponse(document: Record<string, unknown>, from: Format): void {
  if (from === "openai") {
    const choices = document.choices;
    if (!Array.isArray(choices) || choices.length === 0)
      throw new Error("choices: must be a non-empty array of choices (is this a Chat Completions response?)");
    const message = (choices[0] as { message?: unknown } | null)?.message;
    if (message === null || typeof message !== "object" || Array.isArray(message))
      throw new Error("choices[0].message: must be an object");
    const content = (message as { content?: unknown }).content;
    if (content !== undefined && content !== null && typeof content !== "string" && !Array.isArray(content))
      throw new Error("choices[0].message.content: must be a string, an array of parts or null");
    return;
  }
  if (!Array.isArray(document.content))
    throw new Error("content: must be an array of content blocks (is this a Messages API response?)");
}

/**
 * Converts an SSE transcript as it arrives: each input chunk's events are written before the next is read.
 * What the target cannot carry is what the whole-answer conversion reports for the same answer; input that
 * is not a stream of the source format comes back as `problems` (the output still says what it could).
 */
export async function convertStream(
  chunks: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  from: Format,
  to: Format,
  reasoning: ReasoningMode,
  write: (text: string) => void,
): Promise<{ lossy: LossyEntry[]; problems: string[] }> {
  const sse = new SseDecoder();
  const decoder = from === "anthropic" ? createAnthropicStreamDecoder() : createOpenAIStreamDecoder();
  const encode = streamEncoder(to, reasoning);
  const answer = createAccumulator();
  const problems: string[] = [];
  let messages = 0;
  let extraChoices = false;
  const emit = (events: StreamEvent[]) => {
    for (const event of events) {
      answer.push(event);
      const text = encode.event(event);
      if (text) write(text);
    }
  };
  const read = (message: SseMessage) => {
    messages++;
    if (message.data !== "[DONE]") {
      let value: { choices?: unknown } | null;
      try {
        value = JSON.parse(message.data) as { choices?: unknown } | null;
      } catch {
        value = null;
        problems.push(`event ${messages - 1}: data is not JSON: ${message.data.slice(0, 80)}`);
      }
      const choices = from === "openai" && Array.isArray(value?.choices) ? (value.choices as unknown[]) : [];
      if (choices.some((choice) => ((choice as { index?: unknown } | null)?.index ?? 0) !== 0)) extraChoices = true;
    }
    emit(decoder.push(message));
  };
  for await (const chunk of chunks) for (const message of sse.push(chunk)) read(message);
  for (const message of sse.finish()) read(message);
  if (messages === 0)
    problems.push(
      `stdin holds no server-sent events (expected "data:" lines of ${from === "anthropic" ? "an Anthropic" : "an OpenAI"} stream)`,
    );
  emit(decoder.finish());
  const tail = encode.end();
  if (tail) write(tail);
  const lossy = answerLossy(answer.snapshot(), to, reasoning);
  if (extraChoices) lossy.unshift({ code: "extra-choices-dropped", message: "only the first choice is kept" });
  return { lossy, problems };
}

/** The OpenAI encoder needs the model name, which arrives with `message-start`; it is built then. */
function streamEncoder(to: Format, reasoning: ReasoningMode): { event(event: StreamEvent): string; end(): string } {
  if (to === "anthropic") {
    const encoder = createAnthropicStreamEncoder();
    return { event: (event) => encoder.encode(event), end: () => "" };
  }
  let encoder: ReturnType<typeof createOpenAIStreamEncoder> | undefined;
  let ended = false;
  return {
    event(event) {
      if (!encoder) {
        const start = event.type === "message-start" ? event : undefined;
        encoder = createOpenAIStreamEncoder({
          model: start?.model ?? "unknown",
          ...(start ? { id: start.id } : {}),
          reasoning,
          includeUsage: true,
        });
      }
      if (event.type === "finish" || event.type === "error") ended = true;
      return encoder.encode(event);
    },
    end() {
      return encoder && ended ? encoder.done() : "";
    },
  };
}

function reportLossy(lossy: LossyEntry[], io: CommandIo): void {
  for (const entry of lossy)
    io.stderr(`parley: lossy: ${entry.path ? `${entry.path}: ` : ""}${entry.message} [${entry.code}]\n`);
}

async function readAll(stream: AsyncIterable<Uint8Array | string>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}
