import { describe, expect, test } from "vitest";
import { repair } from "../repair/index.js";
import { formatAdapter } from "./registry.js";

/** Bodies read for a person: every part at the path reports name it by, and at its place in the history. */

const anthropic = formatAdapter("anthropic").view!;
const openai = formatAdapter("openai").view!;

const pathsOf = (view: ReturnType<typeof anthropic.request>) =>
  view!.messages.map((message) => [
    message.role,
    message.path,
    message.parts.map((part) => [part.part.type, part.path, part.at]),
  ]);

describe("Anthropic bodies", () => {
  test("a request: the system prompt, each block at its path and its place in the history", () => {
    const view = anthropic.request({
      model: "claude-sonnet-4-5",
      max_tokens: 10,
      system: [{ type: "text", text: "Be brief." }],
      tools: [{ name: "Bash", input_schema: { type: "object" } }],
      messages: [
        { role: "user", content: "Run it." },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "ok", signature: "sig" },
            { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "a.txt" }] },
      ],
    });
    expect(view!.model).toBe("claude-sonnet-4-5");
    expect(view!.tools).toEqual(["Bash"]);
    expect(pathsOf(view)).toEqual([
      ["system", "system", [["text", "system[0]", undefined]]],
      ["user", "messages[0]", [["text", "messages[0].content", [0, 0]]]],
      [
        "assistant",
        "messages[1]",
        [
          ["thinking", "messages[1].content[0]", [1, 0]],
          ["tool_call", "messages[1].content[1]", [1, 1]],
        ],
      ],
      ["user", "messages[2]", [["tool_result", "messages[2].content[0]", [2, 0]]]],
    ]);
  });

  test("a whole answer: its blocks under content", () => {
    const view = anthropic.response({
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [
        { type: "text", text: "Hi" },
        { type: "tool_use", id: "toolu_2", name: "Bash", input: {} },
      ],
      stop_reason: "tool_use",
      usage: { input_tokens: 1, output_tokens: 1 },
    });
    expect(pathsOf(view)).toEqual([
      [
        "assistant",
        "",
        [
          ["text", "content[0]", undefined],
          ["tool_call", "content[1]", undefined],
        ],
      ],
    ]);
  });

  test("what is not an Anthropic body is undefined, never an error", () => {
    expect(anthropic.request({ messages: [{ role: 7 }] })).toBeUndefined();
    expect(anthropic.request("text")).toBeUndefined();
    expect(anthropic.response({ choices: [] })).toBeUndefined();
  });
});

describe("Chat Completions bodies", () => {
  const body = {
    model: "deepseek-chat",
    tools: [{ type: "function", function: { name: "Bash", parameters: {} } }],
    messages: [
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "Run" },
          { type: "text", text: "it." },
        ],
      },
      {
        role: "assistant",
        reasoning_content: "ok",
        content: "Running.",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "Bash", arguments: "{}" } },
          { id: "c2", type: "function", function: { name: "Bash", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "a" },
      { role: "tool", tool_call_id: "c2", content: "b" },
      { role: "user", content: "Thanks" },
    ],
  };

  test("a request: every field at its path, tool messages at the history message they join", () => {
    const view = openai.request(body);
    expect(view!.tools).toEqual(["Bash"]);
    expect(pathsOf(view)).toEqual([
      ["system", "messages[0]", [["text", "messages[0].content", [0, 0]]]],
      [
        "user",
        "messages[1]",
        [
          ["text", "messages[1].content[0]", [1, 0]],
          ["text", "messages[1].content[1]", [1, 1]],
        ],
      ],
      [
        "assistant",
        "messages[2]",
        [
          ["thinking", "messages[2].reasoning_content", [2, 0]],
          ["text", "messages[2].content", [2, 1]],
          ["tool_call", "messages[2].tool_calls[0]", [2, 2]],
          ["tool_call", "messages[2].tool_calls[1]", [2, 3]],
        ],
      ],
      ["tool", "messages[3]", [["tool_result", "messages[3].content", [3, 0]]]],
      ["tool", "messages[4]", [["tool_result", "messages[4].content", [3, 1]]]],
      ["user", "messages[5]", [["text", "messages[5].content", [3, 2]]]],
    ]);
  });

  test("a part's place is where repair reports point", () => {
    // The last user message holds the results and the text: repair names it by its history index.
    const history = formatAdapter("openai").history.toCore(body.messages).messages;
    const view = openai.request(body)!;
    const at = view.messages[5]!.parts[0]!.at!;
    expect(history[at[0]]!.parts[at[1]]).toEqual({ type: "text", text: "Thanks" });
    expect(repair(history, formatAdapter("openai").upstream.repairTarget).report).toEqual([]);
  });

  test("a whole answer: reasoning, content and tool calls at their fields", () => {
    const view = openai.response({
      id: "c",
      object: "chat.completion",
      model: "deepseek-chat",
      choices: [
        {
          index: 0,
          finish_reason: "tool_calls",
          message: {
            role: "assistant",
            reasoning_content: "hm",
            content: "Sure.",
            tool_calls: [{ id: "c3", type: "function", function: { name: "Bash", arguments: "{}" } }],
          },
        },
      ],
    });
    expect(pathsOf(view)).toEqual([
      [
        "assistant",
        "choices[0].message",
        [
          ["thinking", "choices[0].message.reasoning_content", undefined],
          ["text", "choices[0].message.content", undefined],
          ["tool_call", "choices[0].message.tool_calls[0]", undefined],
        ],
      ],
    ]);
  });
});
