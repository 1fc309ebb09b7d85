import { parseArgs } from "node:util";
import { formatAdapter } from "../formats/registry.js";
import { normalize } from "../repair/normalize/normalize.js";
import { describeError, readStdin } from "./io.js";
import { type CommandInput, lossyAsReport } from "./repair.js";

const help = `Usage: parley normalize

Reads a JSON array of history entries from stdin (or JSON Lines, one entry per line, as in a Claude Code
session file) and writes {"messages":[Anthropic messages],"report":[...]}, one report entry per input entry
with the shape it was read as. Shapes, mixed freely in one array:

  Anthropic messages          {"role":"user"|"assistant","content":"..." | [blocks]}
  OpenAI chat messages        with "tool_calls", "tool" messages, "reasoning_content"...
  Responses input items       {"type":"function_call"|"function_call_output"|"reasoning"|"message",...},
                              messages with "input_text"/"output_text" parts
  plain entries               {"role","content","timestamp"} (the timestamp is kept in the report)
  orchestrator entries        {"input","context","timestamp"}: a user message; the context becomes a
                              <context>...</context> text block before the input
  Claude Code session records {"type","message","uuid","parentUuid"}: the parentUuid chain of the latest
                              message is followed, not file order; records of one answer are joined;
                              records off the chain are listed in the report as skipped, with why

An entry that cannot be read is an error naming its index (entries[i]) and why.
`;

export async function runNormalize(argv: string[], io: CommandInput): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { help: { type: "boolean", short: "h" } },
    });
    if (values.help) {
      io.stdout(help);
      return 0;
    }
    if (positionals.length > 0) throw new Error(`unexpected argument '${positionals[0]}'`);
  } catch (error) {
    io.stderr(`parley normalize: ${describeError(error)}\n\n${help}`);
    return 2;
  }
  try {
    const entries = parseEntries(io.stdin ?? (await readStdin()));
    const { messages, report } = normalize(entries);
    const out = formatAdapter("anthropic").history.fromCore(messages);
    const lossy = out.lossy.map(lossyAsReport);
    io.stdout(`${JSON.stringify({ messages: out.value, report: [...report, ...lossy] }, null, 2)}\n`);
    return 0;
  } catch (error) {
    io.stderr(`parley normalize: ${describeError(error)}\n`);
    return 1;
  }
}

/** A JSON array, or JSON Lines (blank lines ignored); a bad line is named by its number. */
export function parseEntries(text: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed.startsWith("[")) {
    try {
      return JSON.parse(trimmed) as unknown[];
    } catch (error) {
      throw new Error(`stdin is not a valid JSON array: ${describeError(error)}`);
    }
  }
  const entries: unknown[] = [];
  text.split("\n").forEach((line, lineIndex) => {
    if (line.trim() === "") return;
    try {
      entries.push(JSON.parse(line));
    } catch (error) {
      throw new Error(
        `stdin line ${lineIndex + 1} is not valid JSON (expected a JSON array, or one entry per line): ${describeError(error)}`,
      );
    }
  });
  if (entries.length === 0) throw new Error("stdin is empty: expected a JSON array of history entries");
  return entries;
}
