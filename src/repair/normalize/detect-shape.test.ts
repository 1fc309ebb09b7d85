import { describe, expect, test } from "vitest";
import { detectShape } from "./detect-shape.js";

describe("detectShape", () => {
  test.each([
    [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "ok" }] }, "anthropic"],
    [{ role: "assistant", content: [{ type: "thinking", thinking: "t", signature: "s" }] }, "anthropic"],
    [{ role: "user", content: "hello" }, "anthropic"],
    [
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }],
      },
      "openai",
    ],
    [{ role: "tool", tool_call_id: "call_1", content: "ok" }, "openai"],
    [{ role: "assistant", content: "a", reasoning_content: "r" }, "openai"],
    [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }, "openai"],
    [{ role: "user", content: "hi", timestamp: "2025-01-01T00:00:00Z" }, "plain"],
    [{ input: "do it", context: { step: 2 }, timestamp: 1735689600 }, "orchestrator"],
    [{ type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "hi" } }, "claude-code"],
    [{ type: "summary", summary: "Fixing the date test", leafUuid: "c6" }, "claude-code"],
  ])("%j is %s", (entry, shape) => {
    expect(detectShape(entry)).toEqual({ shape });
  });

  test.each([
    [null, "null"],
    [[1], "an array"],
    [{ content: "no role" }, "no `role`"],
    [{ role: 3, content: "x" }, "`role` must be a string"],
    [{ role: "user", content: 42 }, "`content` must be"],
  ])("%j is unreadable", (entry, why) => {
    const detected = detectShape(entry);
    expect("error" in detected && detected.error).toContain(why);
  });
});
