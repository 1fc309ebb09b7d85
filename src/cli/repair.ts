import { parseArgs } from "node:util";
import type { LossyEntry, Message } from "../core/index.js";
import { coreToAnthropicMessages } from "../formats/anthropic/from-core.js";
import { anthropicMessagesToCore } from "../formats/anthropic/to-core.js";
import { parseAnthropicMessages } from "../formats/anthropic/validate-request.js";
import type { ReasoningMode } from "../formats/openai-chat/compat.js";
import { coreToOpenAIMessages } from "../formats/openai-chat/from-core.js";
import { type MessageSource, openaiMessagesToCore } from "../formats/openai-chat/messages-to-core.js";
import { parseOpenAIRequest } from "../formats/openai-chat/validate-request.js";
import { formatAdapter } from "../formats/registry.js";
import type { RepairEntry } from "../repair/history.js";
import { detectShape } from "../repair/normalize/detect-shape.js";
import { repair } from "../repair/pipeline.js";
import { type CommandIo, describeError, readStdin } from "./io.js";

const help = `Usage: parley repair --for anthropic|openai [--reasoning MODE]

Reads {"messages":[...]} (a history in Anthropic or OpenAI chat format; the format is detected) from
stdin and writes {"messages":[...],"report":[...]}: the history in the target's format, repaired so the
target API accepts it, and one report entry per change (what, why, the message index it touched).

  --for anthropic   roles alternate and start with user; every tool_use is answered (a synthetic is_error
                    result for an interrupted call) by tool_result blocks first in the next message;
                    results for unknown calls become text; unsigned or foreign thinking becomes text;
                    the last assistant message's signed thinking is left byte-identical
  --for openai      every tool call is answered, tool messages right after the assistant's tool_calls
                    (OpenAI's strict rule); orphan tool messages become text
  --reasoning MODE  how thinking is written to OpenAI messages: think-tags (default), reasoning_content,
                    reasoning, reasoning_details, drop
`;

const reasoningModes: ReasoningMode[] = ["think-tags", "reasoning_content", "reasoning", "reasoning_details", "drop"];

export interface CommandInput extends CommandIo {
  /** The whole of stdin; read from the process when absent. */
  stdin?: string;
}

export async function runRepair(argv: string[], io: CommandInput): Promise<number> {
  let options: { target: "anthropic" | "openai"; reasoning: ReasoningMode } | "help";
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
    const repaired = repair(messages, formatAdapter(options.target).upstream.repairTarget);
    const out =
      options.target === "anthropic"
        ? coreToAnthropicMessages(repaired.messages)
        : coreToOpenAIMessages(repaired.messages, { reasoning: options.reasoning });
    const repairs = sources === undefined ? repaired.report : repaired.report.map((entry) => inWire(entry, sources));
    const report = [...repairs, ...[...lossy, ...out.lossy].map(lossyAsReport)];
    const written = options.target === "anthropic" ? withInputThinkingBlocks(out.value, wire) : out.value;
    io.stdout(`${JSON.stringify({ messages: written, report }, null, 2)}\n`);
    return 0;
  } catch (error) {
    io.stderr(`parley repair: ${describeError(error)}\n`);
    return 1;
  }
}

function parseRepairArgs(argv: string[]): { target: "anthropic" | "openai"; reasoning: ReasoningMode } | "help" {
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
  const target = values.for;
  if (target !== "anthropic" && target !== "openai")
    throw new Error(`--for must be anthropic or openai (got ${target ?? "nothing"})`);
  if (!reasoningModes.includes(values.reasoning as ReasoningMode)) {
    throw new Error(`--reasoning must be one of ${reasoningModes.join(", ")} (got ${values.reasoning})`);
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
 * OpenAI format when any message says so (`tool_calls`, a `tool` message, OpenAI content parts, a reasoning
 * field); otherwise Anthropic, which plain `{role, content}` text messages are in both formats alike.
 */
export function historyToCore(wire: unknown[]): {
  messages: Message[];
  lossy: LossyEntry[];
  sources?: MessageSource[];
} {
  const isOpenAI = wire.some((message) => {
    const detected = detectShape(message);
    return "shape" in detected && detected.shape === "openai";
  });
  if (!isOpenAI) return { messages: anthropicMessagesToCore(parseAnthropicMessages(wire, "messages")), lossy: [] };
  // System messages stay in place, so the converted messages line up with `sources`.
  return openaiMessagesToCore(parseOpenAIRequest({ model: "repair", messages: wire }).messages);
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

/**
 * Thinking blocks carried unchanged go out as the very objects that came in, so that they are byte-identical
 * when serialised again, key order included (invariant 10), not only equal.
 */
function withInputThinkingBlocks(messages: unknown[], wire: unknown[]): unknown[] {
  const inputBlocks = new Map<string, unknown>();
  for (const message of wire) {
    const content = (message as { content?: unknown } | null)?.content;
    if (!Array.isArray(content)) continue;
    for (const block of content) if (isThinkingBlock(block)) inputBlocks.set(canonicalJson(block), block);
  }
  if (inputBlocks.size === 0) return messages;
  return messages.map((message) => {
    const content = (message as { content?: unknown }).content;
    if (!Array.isArray(content) || !content.some(isThinkingBlock)) return message;
    return {
      ...(message as object),
      content: content.map((block) =>
        isThinkingBlock(block) ? (inputBlocks.get(canonicalJson(block)) ?? block) : block,
      ),
    };
  });
}

function isThinkingBlock(block: unknown): boolean {
  const type = (block as { type?: unknown } | null)?.type;
  return type === "thinking" || type === "redacted_thinking";
}

/** JSON with every object's keys sorted: equal values give equal text whatever their key order. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}
