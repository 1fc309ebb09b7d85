import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { runNormalize } from "./normalize.js";

async function run(argv: string[], stdin: string) {
  let stdout = "";
  let stderr = "";
  const code = await runNormalize(argv, {
    stdin,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

describe("parley normalize", () => {
  test("reads a Claude Code session file as JSON Lines and writes Anthropic messages with a report", async () => {
    const session = readFileSync(
      new URL("../../test/fixtures/scripted/claude-code-session.jsonl", import.meta.url),
      "utf8",
    );
    const { code, stdout } = await run([], session);
    expect(code).toBe(0);
    const output = JSON.parse(stdout) as {
      messages: Array<{ role: string; content: unknown }>;
      report: Array<{ index: number; shape: string }>;
    };
    expect(output.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(output.messages[1]!.content).toEqual([
      { type: "thinking", thinking: "Let me look at the test file first.", signature: "EpYBCkYIBRgCKkDc1" },
      { type: "tool_use", id: "toolu_01R", name: "Read", input: { file_path: "/home/dev/app/test/date.test.ts" } },
    ]);
    expect(output.report).toHaveLength(9);
    expect(output.report.every((entry) => entry.shape === "claude-code")).toBe(true);
  });

  test("reads a JSON array of mixed shapes", async () => {
    const entries = [
      { input: "hello", timestamp: 1 },
      { role: "assistant", content: "hi", timestamp: 2 },
    ];
    const { code, stdout } = await run([], JSON.stringify(entries));
    expect(code).toBe(0);
    expect(JSON.parse(stdout).messages).toEqual([
      { role: "user", content: [{ type: "text", text: "hello" }] },
      { role: "assistant", content: "hi" },
    ]);
  });

  test("an unreadable entry is an error naming its index; --help and bad arguments", async () => {
    const bad = await run([], JSON.stringify([{ role: "user", content: "ok" }, "just a string"]));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("entries[1]: cannot read this history entry: expected an object, got string");
    const badLine = await run([], '{"role":"user","content":"a"}\n{oops\n');
    expect(badLine.stderr).toContain("stdin line 2 is not valid JSON");
    expect((await run(["--help"], "")).stdout).toContain("parentUuid");
    expect((await run(["extra"], "")).code).toBe(2);
  });
});
