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
    const { code, stderr } = await convert(["request", "--from", "bard", "--to", "openai"], "{}");
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

describe("parley convert: what cannot be carried, and input that is not what it should be", () => {
  test("a stream reports what the target cannot carry, as the whole answer does", async () => {
    const stream = await convert(
      ["stream", "--from", "anthropic", "--to", "openai"],
      fixture("anthropic/claude-sonnet-4.5-redacted-thinking.sse"),
    );
    const whole = await convert(
      ["response", "--from", "anthropic", "--to", "openai"],
      fixture("anthropic/claude-sonnet-4.5-redacted-thinking.json"),
    );
    expect(stream.code).toBe(0);
    expect(stream.stderr).toContain("[redacted-thinking-dropped]");
    // Two recordings (the stream's has two redacted blocks, the whole answer one): the same kinds of loss.
    const codes = (text: string) => [...new Set([...text.matchAll(/\[([a-z-]+)\]$/gm)].map((match) => match[1]))];
    expect(codes(stream.stderr)).toEqual(codes(whole.stderr));
  });

  test("a stream with blocks OpenAI has no form for says so for each", async () => {
    const { code, stderr } = await convert(
      ["stream", "--from", "anthropic", "--to", "openai"],
      fixture("anthropic/claude-sonnet-4-web-search.sse"),
    );
    expect(code).toBe(0);
    expect(stderr).toContain("'server_tool_use' has no OpenAI form [opaque-block-dropped]");
    expect(stderr).toContain("'web_search_tool_result' has no OpenAI form [opaque-block-dropped]");
  });

  test("pause_turn, which OpenAI has no finish_reason for, is reported as sent as stop", async () => {
    const { code, stdout, stderr } = await convert(
      ["stream", "--from", "anthropic", "--to", "openai"],
      fixture("anthropic/claude-sonnet-4.5-pause-turn-web-search.sse"),
    );
    expect(code).toBe(0);
    expect(stdout).toContain('"finish_reason":"stop"');
    expect(stderr).toContain("[pause-turn-as-stop]");
  });

  test("an error answer becomes the other format's error, not an empty message", async () => {
    const fromOpenAI = await convert(
      ["response", "--from", "openai", "--to", "anthropic"],
      fixture("groq/tool-use-failed-error.json"),
    );
    expect(fromOpenAI.code).toBe(0);
    expect(JSON.parse(fromOpenAI.stdout)).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: expect.stringContaining("Tool call validation failed") },
    });
    const fromAnthropic = await convert(
      ["response", "--from", "anthropic", "--to", "openai"],
      JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
    );
    expect(JSON.parse(fromAnthropic.stdout)).toEqual({
      error: { message: "Overloaded", type: "overloaded_error", param: null, code: null },
    });
  });

  test.each([
    ["openai", "{}", "choices: must be a non-empty array"],
    ["openai", '{"choices":"x"}', "choices: must be a non-empty array"],
    ["openai", '{"choices":[{"index":0}]}', "choices[0].message: must be an object"],
    ["openai", '{"choices":[{"message":{"content":5}}]}', "choices[0].message.content: must be a string"],
    ["anthropic", '{"foo":1}', "content: must be an array of content blocks"],
  ])("a %s response that is not one (%s) is an error naming the field", async (from, text, message) => {
    const to = from === "openai" ? "anthropic" : "openai";
    const { code, stdout, stderr } = await convert(["response", "--from", from, "--to", to], text);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain(message);
  });

  test("stdin that holds no events, or an event whose data is not JSON, exits non-zero saying so", async () => {
    const empty = await convert(["stream", "--from", "anthropic", "--to", "openai"], "hello world\n");
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain("no server-sent events");
    const broken = await convert(["stream", "--from", "openai", "--to", "anthropic"], "data: {bad json\n\n");
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain("event 0: data is not JSON");
    // The output still ends as a valid stream, with the error event.
    expect(broken.stdout).toContain("event: error");
  });

  test("a stream with several choices says only the first is kept", async () => {
    const chunk = (index: number, content: string) =>
      `data: ${JSON.stringify({ id: "c", model: "m", choices: [{ index, delta: { content }, finish_reason: null }] })}\n\n`;
    const finish = `data: ${JSON.stringify({ id: "c", model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`;
    const { code, stderr } = await convert(
      ["stream", "--from", "openai", "--to", "anthropic"],
      chunk(0, "a") + chunk(1, "b") + finish + "data: [DONE]\n\n",
    );
    expect(code).toBe(0);
    expect(stderr).toContain("[extra-choices-dropped]");
  });
});
