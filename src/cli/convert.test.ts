import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { parseSse } from "../stream/sse.js";
import { runConvert } from "./convert.js";

async function convert(argv: string[], text: string) {
  let stdout = "";
  let stderr = "";
  const code = await runConvert(argv, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) }, { text });
  return { code, stdout, stderr };
}

const fixture = (path: string) => readFileSync(new URL(`../../test/fixtures/${path}`, import.meta.url), "utf8");

describe("parley convert request", () => {
  test("keeps thinking and text in block order in think-tags mode (invariant 1)", async () => {
    const request = {
      model: "m",
      max_tokens: 100,
      messages: [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "first", signature: "sig" },
            { type: "text", text: "Here is the answer." },
            { type: "thinking", thinking: "second", signature: "sig2" },
            { type: "tool_use", id: "toolu_1", name: "run", input: { cmd: "ls" } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "done" }] },
      ],
    };
    const { code, stdout } = await convert(
      ["request", "--from", "anthropic", "--to", "openai"],
      JSON.stringify(request),
    );
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    const assistant = out.messages.find((message: { role: string }) => message.role === "assistant");
    expect(assistant.content).toBe("<think>first</think>Here is the answer.<think>second</think>");
    expect(assistant.tool_calls).toEqual([
      { id: "toolu_1", type: "function", function: { name: "run", arguments: '{"cmd":"ls"}' } },
    ]);
  });

  test("keeps user text before the tool result (invariant 2)", async () => {
    const request = {
      model: "m",
      max_tokens: 100,
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
        {
          role: "user",
          content: [
            { type: "text", text: "U" },
            { type: "tool_result", tool_use_id: "t1", content: "R" },
          ],
        },
      ],
    };
    const { stdout } = await convert(["request", "--from", "anthropic", "--to", "openai"], JSON.stringify(request));
    const roles = JSON.parse(stdout).messages.map((message: { role: string }) => message.role);
    expect(roles.slice(-2)).toEqual(["user", "tool"]);
  });

  test("names the offending path on bad input and exits non-zero", async () => {
    const bad = { model: "m", max_tokens: 10, messages: [{ role: "user", content: [{ type: "text", text: 5 }] }] };
    const { code, stderr } = await convert(["request", "--from", "anthropic", "--to", "openai"], JSON.stringify(bad));
    expect(code).toBe(1);
    expect(stderr).toContain("messages[0].content[0]");
  });

  test("rejects unknown formats with a usage error", async () => {
    const { code, stderr } = await convert(["request", "--from", "gemini", "--to", "openai"], "{}");
    expect(code).toBe(2);
    expect(stderr).toContain("--from");
  });
});

describe("parley convert response", () => {
  test("turns every <think> block into a thinking block, in order (invariant 5)", async () => {
    const response = {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "<think>first</think>middle<think>second</think>" },
          finish_reason: "stop",
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    };
    const { code, stdout } = await convert(
      ["response", "--from", "openai", "--to", "anthropic"],
      JSON.stringify(response),
    );
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(
      out.content.map((block: { type: string; thinking?: string; text?: string }) => [
        block.type,
        block.thinking ?? block.text,
      ]),
    ).toEqual([
      ["thinking", "first"],
      ["text", "middle"],
      ["thinking", "second"],
    ]);
    expect(out.stop_reason).toBe("end_turn");
  });
});

describe("parley convert stream", () => {
  test("converts a recorded DeepSeek reasoning stream into a valid Anthropic event sequence", async () => {
    const { code, stdout } = await convert(
      ["stream", "--from", "openai", "--to", "anthropic"],
      fixture("deepseek/deepseek-reasoner-thinking.sse"),
    );
    expect(code).toBe(0);
    const events = parseSse(stdout).map((message) => JSON.parse(message.data) as { type: string });
    expect(events[0]?.type).toBe("message_start");
    expect(events.at(-1)?.type).toBe("message_stop");
    const starts = events.filter((event) => event.type === "content_block_start") as unknown as Array<{
      content_block: { type: string };
    }>;
    expect(starts.map((start) => start.content_block.type)).toEqual(["thinking", "text"]);
  });

  test("round-trips an Anthropic stream through OpenAI chunks and back", async () => {
    const openai = await convert(
      ["stream", "--from", "anthropic", "--to", "openai"],
      fixture("anthropic/claude-sonnet-4-parallel-tool-use.sse"),
    );
    expect(openai.code).toBe(0);
    expect(openai.stdout.trim().endsWith("data: [DONE]")).toBe(true);
    const back = await convert(["stream", "--from", "openai", "--to", "anthropic"], openai.stdout);
    const starts = parseSse(back.stdout)
      .map((message) => JSON.parse(message.data) as { type: string; content_block?: { type: string; name?: string } })
      .filter((event) => event.type === "content_block_start")
      .map((event) => event.content_block?.type);
    expect(starts).toEqual(["text", "tool_use", "tool_use"]);
  });
});
