import { parseArgs } from "node:util";
import type { LossyEntry, StreamEvent } from "../core/index.js";
import { type FormatAdapter, REASONING_MODES, type ReasoningMode } from "../formats/adapter.js";
import { FORMAT_IDS, findFormat, orList } from "../formats/registry.js";
import { createAccumulator } from "../stream/accumulate.js";
import { SseDecoder, type SseMessage } from "../stream/sse.js";
import { type CommandIo, describeError } from "./io.js";

const help = `Usage: parley convert request|response|stream --from ${FORMAT_IDS.join("|")} --to ${FORMAT_IDS.join("|")} [--reasoning MODE]

Reads one JSON document (request, response) or one SSE transcript (stream) from stdin and writes it
in the other format to stdout. What the target format cannot carry is listed on stderr.

  --reasoning MODE   how thinking is written to OpenAI format: think-tags (default), reasoning_content,
                     reasoning, reasoning_details, drop
`;

const kinds = ["request", "response", "stream"] as const;
type Kind = (typeof kinds)[number];

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
  const from = findFormat(values.from ?? "");
  const to = findFormat(values.to ?? "");
  if (from === undefined) throw new Error(`--from must be ${orList(FORMAT_IDS)} (got ${values.from ?? "nothing"})`);
  if (to === undefined) throw new Error(`--to must be ${orList(FORMAT_IDS)} (got ${values.to ?? "nothing"})`);
  if (!(REASONING_MODES as readonly string[]).includes(values.reasoning)) {
    throw new Error(`--reasoning must be one of ${REASONING_MODES.join(", ")} (got ${values.reasoning})`);
  }
  return { kind: kind as Kind, from, to, reasoning: values.reasoning as ReasoningMode };
}

/** A client's request in `from` as the request a provider of `to` is sent. */
export function convertRequest(document: unknown, from: FormatAdapter, to: FormatAdapter, reasoning: ReasoningMode) {
  const core = from.client.readRequest(document);
  const out = to.upstream.encodeRequest(core.value, { reasoning });
  return { value: out.value, lossy: [...core.lossy, ...out.lossy] };
}

/** A provider's answer in `from` as a client of `to` gets it. */
export function convertResponse(document: unknown, from: FormatAdapter, to: FormatAdapter, reasoning: ReasoningMode) {
  if (document === null || typeof document !== "object" || Array.isArray(document))
    throw new Error("the response must be a JSON object");
  const body = document as Record<string, unknown>;
  // An error answer converts to the other format's error shape, never to an empty message.
  const problem = from.upstream.notAnAnswer(body);
  if (problem !== undefined && "error" in problem)
    return { value: to.client.errorDocument(problem.error), lossy: [] as LossyEntry[] };
  // What a response needs to be one at all; the converters read everything else leniently.
  from.upstream.checkAnswer(body);
  const core = from.upstream.decodeResponse(body);
  const out = to.client.encodeResponse(core.value, { reasoning });
  return { value: out.value, lossy: [...core.lossy, ...out.lossy] };
}

/**
 * Converts an SSE transcript as it arrives: each input chunk's events are written before the next is read.
 * What the target cannot carry is what the whole-answer conversion reports for the same answer; input that
 * is not a stream of the source format comes back as `problems` (the output still says what it could).
 */
export async function convertStream(
  chunks: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  from: FormatAdapter,
  to: FormatAdapter,
  reasoning: ReasoningMode,
  write: (text: string) => void,
): Promise<{ lossy: LossyEntry[]; problems: string[] }> {
  const sse = new SseDecoder();
  const decoder = from.upstream.streamDecoder();
  // No model given: the source's, from its first event.
  const encoder = to.client.streamEncoder({ reasoning, includeUsage: true });
  const answer = createAccumulator();
  const problems: string[] = [];
  /** What the source's events carried that its decoder leaves out, once per kind. */
  const dropped = new Map<string, LossyEntry>();
  let messages = 0;
  const emit = (events: StreamEvent[]) => {
    for (const event of events) {
      answer.push(event);
      const text = encoder.encode(event);
      if (text) write(text);
    }
  };
  const read = (message: SseMessage) => {
    messages++;
    if (message.data !== from.upstream.streamEndMarker) {
      let value: unknown;
      try {
        value = JSON.parse(message.data);
      } catch {
        value = null;
        problems.push(`event ${messages - 1}: data is not JSON: ${message.data.slice(0, 80)}`);
      }
      const lost = from.upstream.streamEventLossy?.(value);
      if (lost !== undefined && !dropped.has(lost.code)) dropped.set(lost.code, lost);
    }
    emit(decoder.push(message));
  };
  for await (const chunk of chunks) for (const message of sse.push(chunk)) read(message);
  for (const message of sse.finish()) read(message);
  if (messages === 0)
    problems.push(`stdin holds no server-sent events (expected the "data:" lines of a ${from.label} stream)`);
  emit(decoder.finish());
  const tail = encoder.end();
  if (tail) write(tail);
  const lossy = [...dropped.values(), ...to.client.streamedAnswerLossy(answer.snapshot(), { reasoning })];
  return { lossy, problems };
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
