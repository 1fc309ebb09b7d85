/** The history entry shapes `normalize` reads. */
export type EntryShape = "anthropic" | "openai" | "plain" | "orchestrator" | "claude-code";

const openaiOnlyRoles = new Set(["tool", "developer", "function"]);
const openaiFields = [
  "tool_calls",
  "tool_call_id",
  "reasoning_content",
  "reasoning",
  "reasoning_details",
  "function_call",
  "refusal",
];
const openaiPartTypes = new Set(["image_url", "input_audio", "file", "refusal"]);
const anthropicBlockTypes = new Set([
  "tool_use",
  "tool_result",
  "thinking",
  "redacted_thinking",
  "document",
  "server_tool_use",
  "web_search_tool_result",
  "search_result",
]);

/** Keys every Claude Code session record carries one of (`summary` lines have only `leafUuid`). */
const claudeCodeKeys = ["uuid", "parentUuid", "leafUuid", "sessionId", "messageId"];

export type Detected = { shape: EntryShape } | { error: string };

/**
 * Which shape an entry has, from its keys alone, so that one array may mix them. A `{role, content}` entry
 * with string content fits both APIs and means the same in both: it is read as Anthropic, or as plain when
 * it carries a `timestamp`.
 */
export function detectShape(entry: unknown): Detected {
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
    return {
      error: `expected an object, got ${entry === null ? "null" : Array.isArray(entry) ? "an array" : typeof entry}`,
    };
  }
  const record = entry as Record<string, unknown>;
  if (typeof record.type === "string" && !("role" in record) && claudeCodeKeys.some((key) => key in record))
    return { shape: "claude-code" };
  if ("input" in record && !("role" in record)) return { shape: "orchestrator" };
  if (!("role" in record)) {
    return { error: "no `role` (a message), `input` (an orchestrator entry) or `type`+`uuid` (a Claude Code record)" };
  }
  if (typeof record.role !== "string") return { error: "`role` must be a string" };
  if (openaiOnlyRoles.has(record.role) || openaiFields.some((field) => field in record)) return { shape: "openai" };
  const content = record.content;
  if (content === null) return { shape: "openai" };
  if (Array.isArray(content)) {
    const types = content.map((part) =>
      part !== null && typeof part === "object" ? (part as { type?: unknown }).type : undefined,
    );
    if (types.some((type) => typeof type === "string" && openaiPartTypes.has(type))) return { shape: "openai" };
    if (types.some((type) => typeof type === "string" && anthropicBlockTypes.has(type))) return { shape: "anthropic" };
    if (content.some((part) => part?.type === "image" && "source" in part)) return { shape: "anthropic" };
    return { shape: "timestamp" in record ? "plain" : "anthropic" };
  }
  if (typeof content === "string") return { shape: "timestamp" in record ? "plain" : "anthropic" };
  return { error: "`content` must be a string or an array of blocks" };
}
