import { formatPath, type Message } from "../core/index.js";
import { isEmptyMessage } from "./drop-empty.js";
import type { RepairTarget, Violation } from "./history.js";
import { hasReasoning } from "./reasoning-on-tool-turns.js";
import { answerOwners, answerZones } from "./tool-zones.js";

/**
 * Every rule of an OpenAI-compatible Chat Completions API a history breaks, with the path of the message and
 * block in the history given (one core user message may become several `tool` and `user` messages on the
 * wire), worded as OpenAI, Kimi and DeepSeek word their 400s.
 */
export function validateOpenAI(messages: readonly Message[], target: RepairTarget): Violation[] {
  const violations: Violation[] = [];
  const add = (message: string, ...path: Array<string | number>) =>
    violations.push({ path: formatPath(["messages", ...path]), message });
  const owners = answerOwners(
    messages.map((message) => message.role),
    target.toolResultZone,
  );
  const zones = answerZones(owners);
  const answeredByZone = new Map<number, Set<string>>();
  messages.forEach((message, index) => {
    if (isEmptyMessage(message, target.emptiness)) add("message content must not be empty", index);
    message.parts.forEach((part, partIndex) => {
      if ((part.type === "thinking" || part.type === "tool_call") && message.role !== "assistant") {
        add(`a ${part.type} part can only be in an assistant message`, index, "content", partIndex);
      }
      if (part.type !== "tool_result") return;
      const owner = owners[index]!;
      const owned =
        owner >= 0 && messages[owner]!.parts.some((call) => call.type === "tool_call" && call.id === part.toolCallId);
      const answered = answeredByZone.get(owner) ?? new Set<string>();
      answeredByZone.set(owner, answered);
      if (message.role !== "user" || !owned || answered.has(part.toolCallId)) {
        add(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          index,
          "content",
          partIndex,
        );
      } else answered.add(part.toolCallId);
    });
    if (message.role !== "assistant") return;
    const callIds = message.parts.filter((part) => part.type === "tool_call").map((part) => part.id);
    if (callIds.length === 0) return;
    if (target.reasoningOnToolCallTurns && !hasReasoning(message)) add(missingReasoning(index, target.provider), index);
    const zone = zones.get(index) ?? [];
    checkZone(messages, index, callIds, zone, target.toolResultsFirst, add);
  });
  return violations;
}

function checkZone(
  messages: readonly Message[],
  index: number,
  callIds: string[],
  zone: number[],
  strict: boolean,
  add: (message: string, ...path: Array<string | number>) => void,
): void {
  const answered = new Set<string>();
  let seenOther = false;
  let misplaced: Array<string | number> | undefined;
  for (const userIndex of zone) {
    messages[userIndex]!.parts.forEach((part, partIndex) => {
      if (part.type !== "tool_result") seenOther = true;
      else {
        answered.add(part.toolCallId);
        if (seenOther && misplaced === undefined) misplaced = [userIndex, "content", partIndex];
      }
    });
  }
  const missing = [...new Set(callIds)].filter((id) => !answered.has(id));
  if (missing.length > 0) {
    add(
      `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(", ")}`,
      index,
    );
  }
  if (strict && misplaced) {
    add(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id' (this provider wants them right after it, before any other message).",
      ...misplaced,
    );
  }
}

function missingReasoning(index: number, provider: string | undefined): string {
  if (provider?.toLowerCase().includes("deepseek"))
    return "The `reasoning_content` in the thinking mode must be passed back to the API.";
  return `thinking is enabled but reasoning_content is missing in assistant tool call message at index ${index}`;
}
