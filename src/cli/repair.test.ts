import { describe, expect, test } from "vitest";
import { runRepair } from "./repair.js";

interface WireMessage {
  role: string;
  content: Array<Record<string, unknown>> | string | null;
}

async function run(argv: string[], stdin: unknown) {
  let stdout = "";
  let stderr = "";
  const code = await runRepair(argv, {
    stdin: typeof stdin === "string" ? stdin : JSON.stringify(stdin),
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return {
    code,
    stdout,
    stderr,
    output:
      code === 0 && stdout.startsWith("{")
        ? (JSON.parse(stdout) as { messages: WireMessage[]; report: Array<{ action: string; messageIndex: number }> })
        : undefined,
  };
}

const signedThinking = (text: string) => ({
  type: "thinking",
  thinking: text,
  signature: `EqQBCkYIBRgCKkA${text.length}`,
});

describe("parley repair", () => {
  test("--for anthropic repairs the interrupted-tool-call crash and keeps the last thinking byte-identical", async () => {
    const second = {
      role: "assistant",
      content: [
        signedThinking("now b"),
        { type: "tool_use", id: "toolu_b", name: "Read", input: { file_path: "b.ts" } },
      ],
    };
    const history = {
      messages: [
        { role: "user", content: "fix it" },
        {
          role: "assistant",
          content: [
            signedThinking("read a"),
            { type: "tool_use", id: "toolu_a", name: "Read", input: { file_path: "a.ts" } },
          ],
        },
        second,
        { role: "user", content: "stop" },
      ],
    };
    const { code, output } = await run(["--for", "anthropic"], history);
    expect(code).toBe(0);
    expect(output!.messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(output!.messages[2]!.content).toEqual([
      expect.objectContaining({ type: "tool_result", tool_use_id: "toolu_a", is_error: true }),
    ]);
    expect(output!.messages[3]).toEqual(second);
    expect((output!.messages[4]!.content as unknown[])[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: "toolu_b",
      is_error: true,
    });
    expect(output!.report.map((entry) => [entry.action, entry.messageIndex])).toEqual([
      ["added-interrupted-tool-result", 1],
      ["added-interrupted-tool-result", 2],
    ]);
  });

  test("--for openai reads an OpenAI history and puts tool messages right after the assistant's tool_calls", async () => {
    const history = {
      messages: [
        { role: "user", content: "weather?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: "user", content: "in celsius please" },
        { role: "tool", tool_call_id: "call_1", content: "21 C" },
      ],
    };
    const { code, output } = await run(["--for", "openai"], history);
    expect(code).toBe(0);
    expect(output!.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(output!.messages[2]).toMatchObject({ role: "tool", tool_call_id: "call_1", content: "21 C" });
    expect(output!.report).toEqual([expect.objectContaining({ action: "moved-tool-result-first" })]);
  });

  test("the last assistant's thinking blocks come back byte-identical, their key order included", async () => {
    const thinking = { signature: "EqQBCkYIBRgCKkA9", thinking: "plan", type: "thinking" };
    const redacted = { data: "EmwKAhgBEgy3", type: "redacted_thinking" };
    const history = {
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: [thinking, redacted, { text: "done", type: "text" }] },
        { role: "assistant", content: "and more" },
      ],
    };
    const { code, stdout } = await run(["--for", "anthropic"], history);
    expect(code).toBe(0);
    const serialised = JSON.stringify(JSON.parse(stdout).messages);
    expect(serialised).toContain(JSON.stringify(thinking));
    expect(serialised).toContain(JSON.stringify(redacted));
  });

  test("an OpenAI history's report names the wire messages, though tool messages were gathered", async () => {
    const call = (id: string) => ({ id, type: "function", function: { name: "Read", arguments: "{}" } });
    const history = {
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: null, tool_calls: [call("c1")] },
        { role: "tool", tool_call_id: "c1", content: "r1" },
        { role: "user", content: "next" },
        { role: "assistant", content: null, tool_calls: [call("c2")] },
        { role: "user", content: "stop" },
      ],
    };
    const { code, output } = await run(["--for", "anthropic"], history);
    expect(code).toBe(0);
    expect(output!.report.filter((entry) => entry.action === "added-interrupted-tool-result")).toEqual([
      expect.objectContaining({ messageIndex: 4 }),
    ]);
  });

  test("a valid history comes back with an empty report", async () => {
    const history = {
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: [{ type: "text", text: "hello" }] },
      ],
    };
    const { output } = await run(["--for", "anthropic"], history);
    expect(output).toEqual({ messages: history.messages, report: [] });
  });

  test("--help, usage errors and unreadable input", async () => {
    const help = await run(["--help"], "");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--for anthropic");
    const usage = await run(["--for", "bard"], "{}");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--for must be anthropic, openai, responses or gemini (got bard)");
    const badJson = await run(["--for", "anthropic"], "{not json");
    expect(badJson.code).toBe(1);
    expect(badJson.stderr).toContain("stdin is not valid JSON");
    const noMessages = await run(["--for", "anthropic"], { history: [] });
    expect(noMessages.stderr).toContain('{"messages":[...]}');
    const badBlock = await run(["--for", "anthropic"], {
      messages: [{ role: "user", content: [{ type: "text", text: 5 }] }],
    });
    expect(badBlock.code).toBe(1);
    expect(badBlock.stderr).toContain("messages[0].content[0]");
  });
});
