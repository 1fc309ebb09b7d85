import { InvalidRequestError, isParleyError, type Message } from "../../core/index.js";
import { type FormatId, formatAdapter } from "../../formats/registry.js";
import { type ClaudeCodeRecord, claudeCodeConversation } from "./claude-code.js";
import { detectShape, type EntryShape } from "./detect-shape.js";

/** What `normalize` made of one input entry. */
export interface NormalizeEntry {
  index: number;
  shape: EntryShape;
  /** What happened to it beyond a plain conversion (joined, skipped and why, context as text...). */
  note?: string;
  /** The entry's timestamp: messages have no place for it, so it is kept here. */
  timestamp?: unknown;
}

interface WireItem {
  api: FormatId;
  /** The entry this message comes from (its first entry, when several were joined). */
  index: number;
  wire: unknown;
}

/**
 * Turns a history whose entries come in mixed shapes (Anthropic messages, OpenAI chat messages, plain
 * `{role, content, timestamp}`, orchestrator `{input, context, timestamp}`, Claude Code session records)
 * into canonical messages, with one report entry per input entry saying which shape it had. An entry that
 * cannot be read throws an `InvalidRequestError` naming `entries[i]` and why; nothing is left out silently
 * (Claude Code records off the conversation chain are listed in the report with the reason).
 */
export function normalize(entries: unknown[]): { messages: Message[]; report: NormalizeEntry[] } {
  const report: NormalizeEntry[] = [];
  const items: WireItem[] = [];
  const claudeCode: Array<{ index: number; record: ClaudeCodeRecord }> = [];
  let claudeCodeAt = -1;
  entries.forEach((entry, index) => {
    const detected = detectShape(entry);
    if ("error" in detected)
      throw new InvalidRequestError(`cannot read this history entry: ${detected.error}`, `entries[${index}]`);
    const record = entry as Record<string, unknown>;
    const reported: NormalizeEntry = { index, shape: detected.shape };
    if (record.timestamp !== undefined) reported.timestamp = record.timestamp;
    report.push(reported);
    switch (detected.shape) {
      case "plain":
        items.push({ api: "anthropic", index, wire: { role: record.role, content: record.content } });
        return;
      case "orchestrator":
        items.push(...orchestratorItems(record, index, reported));
        return;
      case "claude-code":
        if (claudeCodeAt < 0) claudeCodeAt = items.length;
        claudeCode.push({ index, record: entry as ClaudeCodeRecord });
        return;
      default:
        // A message of one of the formats, read by its history codec.
        items.push({ api: detected.shape, index, wire: entry });
    }
  });
  if (claudeCode.length > 0) {
    const conversation = claudeCodeConversation(claudeCode);
    const chainItems = conversation.messages.map((message): WireItem => {
      for (const joined of message.indexes.slice(1))
        report[joined]!.note = `joined to entry ${message.indexes[0]} (the same answer)`;
      return { api: "anthropic", index: message.indexes[0]!, wire: message.wire };
    });
    for (const { index, why } of conversation.skipped) report[index]!.note = `skipped: ${why}`;
    items.splice(claudeCodeAt, 0, ...chainItems);
  }
  return { messages: convertItems(items), report };
}

function orchestratorItems(record: Record<string, unknown>, index: number, reported: NormalizeEntry): WireItem[] {
  const { input, context, output } = record;
  if (typeof input !== "string" && !Array.isArray(input)) {
    throw new InvalidRequestError(
      "cannot read this history entry: `input` must be a string or an array of blocks",
      `entries[${index}]`,
    );
  }
  const content: unknown[] = typeof input === "string" ? [{ type: "text", text: input }] : [...input];
  if (context !== undefined && context !== null && context !== "") {
    const text = typeof context === "string" ? context : JSON.stringify(context, null, 2);
    content.unshift({ type: "text", text: `<context>\n${text}\n</context>` });
    reported.note = "context kept as a text block before the input";
  }
  const items: WireItem[] = [{ api: "anthropic", index, wire: { role: "user", content } }];
  if (output === undefined || output === null || output === "") return items;
  // The answer: text, Anthropic blocks, or anything else kept as its JSON text (never dropped).
  if (typeof output === "string" || Array.isArray(output)) {
    items.push({ api: "anthropic", index, wire: { role: "assistant", content: output } });
  } else {
    items.push({ api: "anthropic", index, wire: { role: "assistant", content: JSON.stringify(output, null, 2) } });
    reported.note = `${reported.note === undefined ? "" : `${reported.note}; `}output kept as its JSON text`;
  }
  return items;
}

/** Converts runs of same-API messages with that API's history codec, so OpenAI tool messages group as it groups them. */
function convertItems(items: WireItem[]): Message[] {
  const messages: Message[] = [];
  for (let start = 0; start < items.length; ) {
    let end = start + 1;
    while (end < items.length && items[end]!.api === items[start]!.api) end++;
    const run = items.slice(start, end);
    messages.push(...withEntryPaths(run, () => convertRun(run)));
    start = end;
  }
  return messages;
}

function convertRun(run: WireItem[]): Message[] {
  // System messages stay in place: a history has no request-level system prompt.
  return formatAdapter(run[0]!.api).history.toCore(run.map((item) => item.wire)).messages;
}

/** Rewrites a codec error's `messages[k]` into the input's `entries[i]`. */
function withEntryPaths(run: WireItem[], convert: () => Message[]): Message[] {
  try {
    return convert();
  } catch (error) {
    if (!isParleyError(error)) throw error;
    const path = error instanceof InvalidRequestError ? error.path : undefined;
    const match = path ? /^messages\[(\d+)\](.*)$/.exec(path) : null;
    const item = match ? run[Number(match[1])] : undefined;
    if (!match || !item)
      throw new InvalidRequestError(
        `cannot read the ${run[0]!.api} entries starting at entries[${run[0]!.index}]: ${error.message}`,
      );
    const message = error.message.startsWith(`${path}: `) ? error.message.slice(path!.length + 2) : error.message;
    throw new InvalidRequestError(
      `cannot read this ${item.api} message: ${message}`,
      `entries[${item.index}]${match[2]}`,
      { cause: error },
    );
  }
}
