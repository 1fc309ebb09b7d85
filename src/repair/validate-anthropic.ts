import { formatPath, type Message } from "../core/index.js";
import { isForeignThinking } from "./foreign-thinking-to-text.js";
import { isBlank, type RepairTarget, type Violation } from "./history.js";
import { answerOwners } from "./tool-zones.js";

/**
 * Every rule of an API whose tool results answer in the next message (the Anthropic Messages API) a history
 * breaks, as far as the target's rules ask for it, each with the path of the message and block, worded as
 * Anthropic words its 400s where that wording is known. System messages in place are accepted (the gateway
 * maps them); they split the history into runs within which roles alternate.
 */
export function validateAnthropic(messages: readonly Message[], target: RepairTarget): Violation[] {
  const violations: Violation[] = [];
  const add = (message: string, ...path: Array<string | number>) =>
    violations.push({ path: formatPath(["messages", ...path]), message });
  const owners = answerOwners(
    messages.map((message) => message.role),
    target.toolResultZone,
  );
  let previousRole: string | undefined;
  let seenNonSystem = false;
  const toolIds = new Set<string>();
  messages.forEach((message, index) => {
    const { role } = message;
    if (role === "system") {
      previousRole = undefined;
      return;
    }
    if (target.alternatingRoles && !seenNonSystem && role !== "user")
      add('first message must use the "user" role', index);
    seenNonSystem = true;
    if (target.alternatingRoles && role === previousRole) {
      add(`roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row`, index);
    }
    previousRole = role;
    if (message.parts.every((part) => part.type === "text" && isBlank(part.text))) {
      add("all messages must have non-empty content except for the optional final assistant message", index);
      return;
    }
    checkParts(message, index, target, add);
    const pattern = target.toolIdPattern;
    message.parts.forEach((part, partIndex) => {
      if (pattern === undefined || part.type !== "tool_call" || message.role !== "assistant") return;
      if (!pattern.test(part.id))
        add("String should match pattern '^[a-zA-Z0-9_-]+$'", index, "content", partIndex, "id");
      else if (toolIds.has(part.id)) add("`tool_use` ids must be unique", index, "content", partIndex, "id");
      toolIds.add(part.id);
    });
    if (role === "assistant") checkCallsAnswered(messages, index, owners, add);
    if (role === "user") checkResults(messages, index, owners[index]!, target.toolResultsFirst, add);
  });
  const last = messages.at(-1);
  const lastPart = last?.parts.at(-1);
  if (
    target.noTrailingWhitespaceAtEnd &&
    last?.role === "assistant" &&
    lastPart?.type === "text" &&
    lastPart.text !== lastPart.text.trimEnd()
  ) {
    add(
      "final assistant content cannot end with trailing whitespace",
      messages.length - 1,
      "content",
      last.parts.length - 1,
    );
  }
  return violations;
}

type Add = (message: string, ...path: Array<string | number>) => void;

function checkParts(message: Message, index: number, target: RepairTarget, add: Add): void {
  const signer = target.thinkingSignedBy;
  message.parts.forEach((part, partIndex) => {
    if (part.type === "text" && isBlank(part.text)) {
      add(
        part.text === ""
          ? "text content blocks must be non-empty"
          : "text content blocks must contain non-whitespace text",
        index,
        "content",
        partIndex,
      );
    }
    if (part.type === "thinking" || part.type === "tool_call") {
      const name = part.type === "thinking" ? "thinking" : "tool_use";
      if (message.role !== "assistant")
        add(`\`${name}\` blocks can only be in assistant messages`, index, "content", partIndex);
      else if (signer !== undefined && part.type === "thinking" && !part.signature)
        add("Field required", index, "content", partIndex, "signature");
      else if (
        signer !== undefined &&
        part.type === "thinking" &&
        isForeignThinking(part, signer, target.signatureOwner)
      ) {
        add(
          "Invalid `signature` in `thinking` block (this thinking came from another provider)",
          index,
          "content",
          partIndex,
        );
      }
    }
    if (part.type === "tool_result" && typeof part.content !== "string") {
      part.content.forEach((inner, innerIndex) => {
        if (inner.type === "text" && isBlank(inner.text))
          add(
            "text content blocks must contain non-whitespace text",
            index,
            "content",
            partIndex,
            "content",
            innerIndex,
          );
      });
    }
    if (part.type === "tool_result" && message.role !== "user") {
      add("`tool_result` blocks can only be in user messages", index, "content", partIndex);
    }
  });
}

function checkCallsAnswered(messages: readonly Message[], index: number, owners: Int32Array, add: Add): void {
  const callIds = message(messages, index)
    .parts.filter((part) => part.type === "tool_call")
    .map((part) => part.id);
  if (callIds.length === 0) return;
  let next = index + 1;
  while (messages[next]?.role === "system") next++;
  const answered = new Set<string>();
  if (owners[next] === index) {
    for (const part of message(messages, next).parts) if (part.type === "tool_result") answered.add(part.toolCallId);
  }
  const missing = [...new Set(callIds)].filter((id) => !answered.has(id));
  if (missing.length > 0) {
    add(
      `\`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      index,
    );
  }
}

function checkResults(
  messages: readonly Message[],
  index: number,
  owner: number,
  resultsFirst: boolean,
  add: Add,
): void {
  const callIds = new Set<string>();
  if (owner >= 0)
    for (const part of message(messages, owner).parts) if (part.type === "tool_call") callIds.add(part.id);
  const answered = new Set<string>();
  let seenOther = false;
  let resultsAfterOther = 0;
  message(messages, index).parts.forEach((part, partIndex) => {
    if (part.type !== "tool_result") {
      seenOther = true;
      return;
    }
    if (!callIds.has(part.toolCallId) || answered.has(part.toolCallId)) {
      add(
        `unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${part.toolCallId}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        index,
        "content",
        partIndex,
      );
      return;
    }
    answered.add(part.toolCallId);
    if (seenOther) resultsAfterOther++;
  });
  if (resultsFirst && resultsAfterOther > 0) {
    add(
      `Did not find ${answered.size} tool_result block(s) at the beginning of this message. Messages following tool_use blocks must begin with a matching number of tool_result blocks.`,
      index,
    );
  }
}

function message(messages: readonly Message[], index: number): Message {
  return messages[index]!;
}
