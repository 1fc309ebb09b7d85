import { parseArgs } from "node:util";
import type { LossyEntry } from "../core/index.js";
import {
  type FormatAdapter,
  type HistoryRead,
  type MessageSource,
  REASONING_MODES,
  type ReasoningMode,
} from "../formats/adapter.js";
import { FORMAT_IDS, findFormat, formatAdapter, orList, PARLEY_FORMAT } from "../formats/registry.js";
import type { RepairEntry } from "../repair/history.js";
import { detectShape } from "../repair/normalize/detect-shape.js";
import { repair } from "../repair/pipeline.js";
import { type CommandIo, describeError, readStdin } from "./io.js";

const help = `Usage: parley repair --for ${FORMAT_IDS.join("|")} [--reasoning MODE]

Reads {"messages":[...]} (a history in Anthropic, OpenAI chat, Responses items or Gemini contents; the format
is detected) from stdin and writes {"messages":[...],"report":[...]}: the history in the target's format,
repaired so the target API accepts it, and one report entry per change (what, why, the message index it
touched).

  --for anthropic   roles alternate and start with user; every tool_use is answered (a synthetic is_error
                    result for an interrupted call) by tool_result blocks first in the next message;
                    results for unknown calls become text; unsigned or foreign thinking becomes text;
                    the last assistant message's signed thinking is left byte-identical
  --for openai      every tool call is answered, tool messages right after the assistant's tool_calls
                    (OpenAI's strict rule); orphan tool messages become text
  --for responses   every call is answered by its output and no output is without its call; written as
                    Responses input items (reasoning in its items, sealed as it came)
  --for gemini      every function call is answered in the next content; written as Gemini contents
                    (Gemini's own thought signatures on their parts, other thinking as text, Google's skip
                    value on the first function call of a model turn Gemini did not sign)
  --reasoning MODE  how thinking is written to OpenAI messages: think-tags (default), reasoning_content,
                    reasoning, reasoning_details, drop
`;

export interface CommandInput extends CommandIo {
  /** The whole of stdin; read from the process when absent. */
  stdin?: string;
}

export async function runRepair(argv: string[], io: CommandInput): Promise<number> {
  let options: { target: FormatAdapter; reasoning: ReasoningMode } | "help";
  try {
    options = parseRepairArgs(argv);
  } catch (error) {
    io.stderr(`parley repair: ${describeError(error)}\n\n${help}`);
    return 2;
  }
  if (options === "help") {
    io.stdout(help);
    return 0;
  }
  try {
    const document = parseJson(io.stdin ?? (await readStdin()));
    const wire = historyOf(document);
    const { messages, lossy, sources } = historyToCore(wire);
    const { target, reasoning } = options;
    const repaired = repair(messages, target.upstream.repairTarget);
    // Blocks carried unchanged go out as the very objects that came in (invariant 10: byte-identical thinking).
    const out = target.history.fromCore(repaired.messages, { reasoning, original: wire });
    const repairs = sources === undefined ? repaired.report : repaired.report.map((entry) => inWire(entry, sources));
    const report = [...repairs, ...[...lossy, ...out.lossy].map(lossyAsReport)];
    io.stdout(`${JSON.stringify({ messages: out.value, report }, null, 2)}\n`);
    return 0;
  } catch (error) {
    io.stderr(`parley repair: ${describeError(error)}\n`);
    return 1;
  }
}

function parseRepairArgs(argv: string[]): { target: FormatAdapter; reasoning: ReasoningMode } | "help" {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      for: { type: "string" },
      reasoning: { type: "string", default: "think-tags" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help" as const;
  if (positionals.length > 0) throw new Error(`unexpected argument '${positionals[0]}'`);
  const target = findFormat(values.for ?? "");
  if (target === undefined) throw new Error(`--for must be ${orList(FORMAT_IDS)} (got ${values.for ?? "nothing"})`);
  if (!(REASONING_MODES as readonly string[]).includes(values.reasoning)) {
    throw new Error(`--reasoning must be one of ${REASONING_MODES.join(", ")} (got ${values.reasoning})`);
  }
  return { target, reasoning: values.reasoning as ReasoningMode };
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`stdin is not valid JSON: ${describeError(error)}`);
  }
}

function historyOf(document: unknown): unknown[] {
  const messages =
    document !== null && typeof document === "object" ? (document as { messages?: unknown }).messages : undefined;
  if (!Array.isArray(messages))
    throw new Error('stdin must be a JSON object {"messages":[...]}; `messages` is missing or not an array');
  return messages;
}

/**
 * The history in the format its messages show: a message only another format has (OpenAI's `tool_calls`, a
 * `tool` message, OpenAI content parts, a reasoning field) makes it that format's; otherwise Parley's own,
 * Anthropic, which plain `{role, content}` text messages are in every format alike.
 */
export function historyToCore(wire: unknown[]): HistoryRead {
  let format = formatAdapter(PARLEY_FORMAT);
  for (const message of wire) {
    const detected = detectShape(message);
    const shown = "shape" in detected ? findFormat(detected.shape) : undefined;
    if (shown !== undefined && shown.id !== PARLEY_FORMAT) {
      format = shown;
      break;
    }
  }
  return format.history.toCore(wire);
}

/**
 * A repair's message index in the history as given: an OpenAI history's tool messages were gathered into one
 * user message, so the entry names the wire message its part came from, the part counted within that one.
 */
function inWire(entry: RepairEntry, sources: MessageSource[]): RepairEntry {
  const source = sources[entry.messageIndex];
  if (source === undefined) return entry;
  const { partIndex, ...rest } = entry;
  const fromPart = partIndex === undefined ? undefined : source.parts[partIndex];
  if (fromPart === undefined) return { ...entry, messageIndex: source.message };
  const sameMessage = source.parts.slice(0, partIndex).filter((wireIndex) => wireIndex === fromPart).length;
  return { ...rest, messageIndex: fromPart, partIndex: sameMessage };
}

export function lossyAsReport(entry: LossyEntry): { action: string; reason: string; path?: string } {
  return entry.path === undefined
    ? { action: entry.code, reason: entry.message }
    : { action: entry.code, reason: entry.message, path: entry.path };
}
