/** A line of a Claude Code session file (`~/.claude/projects/.../*.jsonl`), as far as normalize reads it. */
export interface ClaudeCodeRecord {
  type: unknown;
  uuid: unknown;
  parentUuid?: unknown;
  isSidechain?: unknown;
  timestamp?: unknown;
  message?: { role?: unknown; content?: unknown; id?: unknown };
}

export interface ClaudeCodeMessage {
  /** The entries (indexes into the input) this message was built from. */
  indexes: number[];
  wire: { role: string; content: unknown };
}

export interface ClaudeCodeConversation {
  messages: ClaudeCodeMessage[];
  /** Entries not in the conversation, with why: a branch that was abandoned, a side chain, a non-message record. */
  skipped: Array<{ index: number; why: string }>;
}

function isMessageRecord(record: ClaudeCodeRecord): boolean {
  return (
    (record.type === "user" || record.type === "assistant") &&
    typeof record.message === "object" &&
    record.message !== null
  );
}

/**
 * The conversation a Claude Code session holds. File order is not conversation order: after a rewind or a
 * resume the file holds several branches, and the conversation is the `parentUuid` chain that ends at the
 * latest message no other record continues, on the main chain (not a side chain). Claude Code writes one record per content block of an
 * answer, each with the same `message.id`; those are joined back into one message.
 */
export function claudeCodeConversation(
  records: Array<{ index: number; record: ClaudeCodeRecord }>,
): ClaudeCodeConversation {
  const byUuid = new Map<string, { index: number; record: ClaudeCodeRecord }>();
  for (const item of records) if (typeof item.record.uuid === "string") byUuid.set(item.record.uuid, item);
  const leaf =
    latestLeaf(records.filter((item) => isMessageRecord(item.record) && item.record.isSidechain !== true)) ??
    latestLeaf(records.filter((item) => isMessageRecord(item.record)));
  const chain: Array<{ index: number; record: ClaudeCodeRecord }> = [];
  const onChain = new Set<number>();
  for (let item = leaf; item && !onChain.has(item.index); ) {
    chain.push(item);
    onChain.add(item.index);
    const parent = item.record.parentUuid;
    item = typeof parent === "string" ? byUuid.get(parent) : undefined;
  }
  chain.reverse();

  const skipped: ClaudeCodeConversation["skipped"] = [];
  for (const item of records) {
    if (onChain.has(item.index)) continue;
    let why = "not on the parentUuid chain of the latest message (an abandoned branch)";
    if (!isMessageRecord(item.record)) why = `a '${String(item.record.type)}' record, not a message`;
    else if (item.record.isSidechain === true) why = "a side-chain record (a sub-agent's conversation)";
    skipped.push({ index: item.index, why });
  }
  const messages: ClaudeCodeMessage[] = [];
  let previousId: unknown;
  for (const { index, record } of chain) {
    if (!isMessageRecord(record)) {
      skipped.push({ index, why: `a '${String(record.type)}' record, not a message` });
      continue;
    }
    const message = record.message!;
    const previous = messages.at(-1);
    const sameAnswer =
      message.role === "assistant" &&
      previous?.wire.role === "assistant" &&
      message.id !== undefined &&
      message.id === previousId;
    previousId = message.id;
    if (previous && sameAnswer) {
      previous.wire.content = [...asBlocks(previous.wire.content), ...asBlocks(message.content)];
      previous.indexes.push(index);
      continue;
    }
    messages.push({ indexes: [index], wire: { role: String(message.role ?? record.type), content: message.content } });
  }
  skipped.sort((a, b) => a.index - b.index);
  return { messages, skipped };
}

/** The message no other record continues, latest by timestamp (file order breaks ties and stands in for it). */
function latestLeaf(
  candidates: Array<{ index: number; record: ClaudeCodeRecord }>,
): { index: number; record: ClaudeCodeRecord } | undefined {
  const parents = new Set(candidates.map((item) => item.record.parentUuid));
  let best: { index: number; record: ClaudeCodeRecord } | undefined;
  let bestTime = Number.NEGATIVE_INFINITY;
  for (const item of candidates) {
    if (parents.has(item.record.uuid)) continue;
    const time = typeof item.record.timestamp === "string" ? Date.parse(item.record.timestamp) : Number.NaN;
    const comparable = Number.isNaN(time) ? bestTime : time;
    if (best === undefined || comparable >= bestTime) {
      best = item;
      bestTime = comparable;
    }
  }
  return best ?? candidates.at(-1);
}

function asBlocks(content: unknown): unknown[] {
  if (Array.isArray(content)) return content;
  return typeof content === "string" ? [{ type: "text", text: content }] : [content];
}
