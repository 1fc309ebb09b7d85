import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import type { Message } from "../core/index.js";
import { formatAdapter } from "../formats/registry.js";
import { repair, validateFor } from "./pipeline.js";
import { anthropicTarget, openaiTarget } from "./test-support/targets.js";

/**
 * Histories with empty content anywhere, as clients send them (issue 34): Claude Code's compaction request
 * (`test/fixtures/claude-code/2.1.332.compaction.json`) holds an empty assistant answer, an empty user message, a
 * blank text block beside a tool call and another beside a tool result, and a whitespace-only answer. Repair mends
 * each for every target, reports each, and leaves the signed thinking as it was.
 */

const fixture = JSON.parse(
  readFileSync(new URL("../../test/fixtures/claude-code/2.1.332.compaction.json", import.meta.url), "utf8"),
) as { body: { messages: unknown[] } };

const compaction = (): Message[] => formatAdapter("anthropic").history.toCore(fixture.body.messages).messages;
const responsesTarget = formatAdapter("responses").upstream.repairTarget;

describe("Claude Code's compaction history", () => {
  test("for Anthropic: empty messages and blank blocks go, neighbours merge, each change reported", () => {
    const history = compaction();
    expect(validateFor(history, anthropicTarget).length).toBeGreaterThan(0);
    const { messages, report } = repair(history, anthropicTarget);
    expect(validateFor(messages, anthropicTarget)).toEqual([]);
    expect(report.map((entry) => [entry.action, entry.messageIndex, entry.partIndex])).toEqual([
      ["removed-empty-message", 3, undefined],
      ["merged-consecutive-messages", 4, undefined],
      ["removed-empty-message", 5, undefined],
      ["merged-consecutive-messages", 6, undefined],
      ["removed-empty-block", 7, 0],
      ["removed-empty-block", 8, 1],
      ["removed-empty-message", 9, undefined],
      ["merged-consecutive-messages", 10, undefined],
    ]);
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    // the signed thinking of omitted display is the very part that came in
    expect(messages[1]!.parts[0]).toBe(history[1]!.parts[0]);
    // the summary request is the last thing the model reads
    expect(messages.at(-1)!.parts.at(-1)).toBe(history.at(-1)!.parts[0]);
  });

  test("for an OpenAI-compatible provider: only messages with no content go", () => {
    const history = compaction();
    const { messages, report } = repair(history, openaiTarget());
    expect(validateFor(messages, openaiTarget())).toEqual([]);
    expect(report.map((entry) => [entry.action, entry.messageIndex])).toEqual([
      ["removed-empty-message", 3],
      ["removed-empty-message", 5],
    ]);
    expect(messages).toHaveLength(history.length - 2);
  });

  test("for a Responses provider: only messages with no content go", () => {
    const { messages, report } = repair(compaction(), responsesTarget);
    expect(validateFor(messages, responsesTarget)).toEqual([]);
    expect(report.map((entry) => entry.action)).toEqual(["removed-empty-message", "removed-empty-message"]);
  });

  test("repairing the repaired history changes nothing", () => {
    for (const target of [anthropicTarget, openaiTarget(), responsesTarget]) {
      const once = repair(compaction(), target).messages;
      expect(repair(once, target)).toEqual({ messages: once, report: [] });
    }
  });
});

describe("a history of nothing but empty messages", () => {
  const empty: Message[] = [
    { role: "user", parts: [{ type: "text", text: "" }], textShorthand: true },
    { role: "assistant", parts: [] },
    { role: "user", parts: [{ type: "text", text: " \n" }] },
  ];

  test("repairs to nothing for Anthropic (the gateway then refuses it, naming messages)", () => {
    expect(repair(empty, anthropicTarget).messages).toEqual([]);
  });

  test("keeps its whitespace message for an OpenAI-compatible provider, which takes it", () => {
    expect(repair(empty, openaiTarget()).messages).toEqual([empty[2]]);
  });
});
