import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { type ClaudeCodeRecord, claudeCodeConversation } from "./claude-code.js";

const lines = readFileSync(
  new URL("../../../test/fixtures/scripted/claude-code-session.jsonl", import.meta.url),
  "utf8",
)
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as ClaudeCodeRecord);

describe("Claude Code session records", () => {
  test("follows the parentUuid chain, joins the records of one answer and lists what it left out", () => {
    const records = lines.map((record, index) => ({ index, record }));
    const { messages, skipped } = claudeCodeConversation(records);
    expect(messages.map((message) => [message.indexes, message.wire.role])).toEqual([
      [[1], "user"],
      [[2, 3], "assistant"],
      [[4], "user"],
      [[6], "assistant"],
      [[8], "user"],
    ]);
    expect(messages[1]!.wire.content).toEqual([
      { type: "thinking", thinking: "Let me look at the test file first.", signature: "EpYBCkYIBRgCKkDc1" },
      { type: "tool_use", id: "toolu_01R", name: "Read", input: { file_path: "/home/dev/app/test/date.test.ts" } },
    ]);
    expect(skipped).toEqual([
      { index: 0, why: "a 'summary' record, not a message" },
      { index: 5, why: expect.stringContaining("abandoned branch") },
      { index: 7, why: expect.stringContaining("side-chain") },
    ]);
  });

  test("file order does not matter, and a cycle in the chain does not hang", () => {
    const shuffled = [lines[8]!, lines[4]!, lines[1]!, lines[6]!, lines[3]!, lines[2]!].map((record, index) => ({
      index,
      record,
    }));
    const { messages } = claudeCodeConversation(shuffled);
    expect(messages.map((message) => message.wire.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    const cyclic = [
      { index: 0, record: { type: "user", uuid: "a", parentUuid: "b", message: { role: "user", content: "x" } } },
      {
        index: 1,
        record: { type: "assistant", uuid: "b", parentUuid: "a", message: { role: "assistant", content: "y" } },
      },
    ];
    expect(claudeCodeConversation(cyclic).messages).toHaveLength(2);
  });
});
