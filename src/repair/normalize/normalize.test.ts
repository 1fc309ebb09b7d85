import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { InvalidRequestError } from "../../core/index.js";
import { normalize } from "./normalize.js";

const claudeCodeRecords = readFileSync(
  new URL("../../../test/fixtures/scripted/claude-code-session.jsonl", import.meta.url),
  "utf8",
)
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as unknown);

/** An orchestrator's log: its own entries, then an OpenAI-compatible model's tool turn, then plain and Anthropic entries. */
const orchestratorHistory: unknown[] = [
  { input: "Summarise the report", context: { project: "parley", step: 1 }, timestamp: "2025-09-02T09:00:00Z" },
  {
    role: "assistant",
    content: null,
    reasoning_content: "I need to read the file first.",
    tool_calls: [{ id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"report.md"}' } }],
  },
  { role: "tool", tool_call_id: "call_1", content: "# Report\nAll tests pass." },
  { role: "assistant", content: "The report says all tests pass.", timestamp: "2025-09-02T09:00:09Z" },
  { role: "user", content: [{ type: "text", text: "Thanks. Now fix the date test." }] },
];

describe("normalize", () => {
  test("reads a mixed-shape orchestrator history, in order, with the shape of each entry", () => {
    const { messages, report } = normalize(orchestratorHistory);
    expect(messages.map((message) => [message.role, message.parts.map((part) => part.type)])).toEqual([
      ["user", ["text", "text"]],
      ["assistant", ["thinking", "tool_call"]],
      ["user", ["tool_result"]],
      ["assistant", ["text"]],
      ["user", ["text"]],
    ]);
    expect(messages[0]!.parts[0]).toEqual({
      type: "text",
      text: '<context>\n{\n  "project": "parley",\n  "step": 1\n}\n</context>',
    });
    expect(messages[0]!.parts[1]).toEqual({ type: "text", text: "Summarise the report" });
    expect(messages[1]!.parts[0]).toMatchObject({ type: "thinking", thinking: "I need to read the file first." });
    expect(messages[1]!.parts[1]).toMatchObject({
      type: "tool_call",
      id: "call_1",
      name: "read",
      input: { path: "report.md" },
    });
    expect(messages[2]!.parts[0]).toMatchObject({ type: "tool_result", toolCallId: "call_1" });
    expect(report).toEqual([
      {
        index: 0,
        shape: "orchestrator",
        note: "context kept as a text block before the input",
        timestamp: "2025-09-02T09:00:00Z",
      },
      { index: 1, shape: "openai" },
      { index: 2, shape: "openai" },
      { index: 3, shape: "plain", timestamp: "2025-09-02T09:00:09Z" },
      { index: 4, shape: "anthropic" },
    ]);
  });

  test("follows a Claude Code session's parentUuid chain within a mixed array and reports what it skipped", () => {
    const { messages, report } = normalize([
      { role: "user", content: "Earlier, outside Claude Code", timestamp: 1 },
      ...claudeCodeRecords,
    ]);
    expect(messages.map((message) => message.role)).toEqual(["user", "user", "assistant", "user", "assistant", "user"]);
    expect(messages[2]!.parts.map((part) => part.type)).toEqual(["thinking", "tool_call"]);
    expect(messages[4]!.parts[0]).toMatchObject({
      type: "text",
      text: expect.stringContaining("pass the zone explicitly"),
    });
    expect(report.map((entry) => [entry.index, entry.shape, entry.note])).toEqual([
      [0, "plain", undefined],
      [1, "claude-code", "skipped: a 'summary' record, not a message"],
      [2, "claude-code", undefined],
      [3, "claude-code", undefined],
      [4, "claude-code", "joined to entry 3 (the same answer)"],
      [5, "claude-code", undefined],
      [6, "claude-code", expect.stringContaining("abandoned branch")],
      [7, "claude-code", undefined],
      [8, "claude-code", expect.stringContaining("side-chain")],
      [9, "claude-code", undefined],
    ]);
  });

  test("an unreadable entry is an error naming its index and why", () => {
    expect(() => normalize([{ role: "user", content: "hi" }, 42])).toThrow(
      new InvalidRequestError("cannot read this history entry: expected an object, got number", "entries[1]"),
    );
    expect(() => normalize([{ role: "user", content: "a" }, { input: 7 }])).toThrow(
      /entries\[1\].*`input` must be a string/,
    );
    expect(() =>
      normalize([
        { role: "user", content: "a" },
        { role: "user", content: [{ type: "tool_result" }] },
      ]),
    ).toThrow(/entries\[1\]/);
  });

  test("an orchestrator's answer that is not a string is kept: blocks as blocks, anything else as its JSON text", () => {
    const { messages, report } = normalize([
      { input: "q", output: [{ type: "text", text: "the answer" }] },
      { input: "q2", output: { text: "ans2" } },
    ]);
    expect(messages.map((message) => [message.role, message.parts])).toEqual([
      ["user", [{ type: "text", text: "q" }]],
      ["assistant", [{ type: "text", text: "the answer" }]],
      ["user", [{ type: "text", text: "q2" }]],
      ["assistant", [{ type: "text", text: JSON.stringify({ text: "ans2" }, null, 2) }]],
    ]);
    expect(report[1]!.note).toContain("output kept as its JSON text");
  });
});
