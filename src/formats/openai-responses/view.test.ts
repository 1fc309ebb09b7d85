import { describe, expect, test } from "vitest";
import type { ConversationRequest, Part } from "../../core/index.js";
import { repair } from "../../repair/index.js";
import type { ViewedBody } from "../adapter.js";
import { formatAdapter } from "../registry.js";

/** Responses bodies read for a person: every part at the path reports name it by, and at its place in the history. */

const responses = formatAdapter("responses");
const view = responses.view!;
const SEALED = "gAAAAABpSealedReasoningOnlyOpenAIReads==";

const pathsOf = (body: ViewedBody | undefined) =>
  body!.messages.map((message) => [
    message.role,
    message.path,
    message.parts.map((part) => [part.part.type, part.path, part.at]),
  ]);

/** A Codex-like turn: instructions, a developer message, reasoning, a function call and a freeform tool's call. */
const codexRequest = {
  model: "gpt-5-codex",
  instructions: "You are Codex.",
  tools: [
    { type: "function", name: "shell", parameters: { type: "object" } },
    { type: "custom", name: "apply_patch" },
    { type: "web_search" },
  ],
  input: [
    { type: "message", role: "developer", content: [{ type: "input_text", text: "Sandbox: read-only." }] },
    {
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "What is in this picture?" },
        { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=" },
      ],
    },
    {
      type: "reasoning",
      id: "rs_1",
      summary: [{ type: "summary_text", text: "Looking at files." }],
      encrypted_content: SEALED,
    },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me look." }] },
    { type: "function_call", call_id: "call_1", name: "shell", arguments: '{"command":["ls"]}' },
    { type: "function_call_output", call_id: "call_1", output: "a.txt" },
    { type: "custom_tool_call", call_id: "call_2", name: "apply_patch", input: "*** Begin Patch" },
    { type: "custom_tool_call_output", call_id: "call_2", output: "Done" },
    { role: "user", content: "Thanks" },
  ],
};

describe("Responses requests", () => {
  test("instructions as system, each item with its parts at their paths and their places in the history", () => {
    const read = view.request(codexRequest);
    expect(read!.model).toBe("gpt-5-codex");
    expect(read!.tools).toEqual(["shell", "apply_patch", "web_search"]);
    expect(pathsOf(read)).toEqual([
      ["system", "instructions", [["text", "instructions", undefined]]],
      ["developer", "input[0]", [["text", "input[0].content[0]", [0, 0]]]],
      [
        "user",
        "input[1]",
        [
          ["text", "input[1].content[0]", [1, 0]],
          ["image", "input[1].content[1]", [1, 1]],
        ],
      ],
      ["reasoning", "input[2]", [["thinking", "input[2]", [2, 0]]]],
      ["assistant", "input[3]", [["text", "input[3].content[0]", [2, 1]]]],
      ["function_call", "input[4]", [["tool_call", "input[4]", [2, 2]]]],
      ["function_call_output", "input[5]", [["tool_result", "input[5]", [3, 0]]]],
      ["custom_tool_call", "input[6]", [["tool_call", "input[6]", [4, 0]]]],
      ["custom_tool_call_output", "input[7]", [["tool_result", "input[7]", [5, 0]]]],
      // A user message right after call outputs is one message with them, as a user message holding both is written.
      ["user", "input[8]", [["text", "input[8].content", [5, 1]]]],
    ]);
  });

  test("each place is the part of the history the request reads as, the one repair is given", () => {
    const read = responses.client.readRequest(codexRequest).value;
    for (const message of view.request(codexRequest)!.messages) {
      for (const viewed of message.parts) {
        if (viewed.at === undefined) continue;
        expect(read.messages[viewed.at[0]]!.parts[viewed.at[1]]).toEqual(viewed.part);
      }
    }
  });

  test("reasoning shows its summary, never its sealed content", () => {
    const reasoning = view.request(codexRequest)!.messages[3]!.parts[0]!.part;
    expect(reasoning).toMatchObject({ type: "thinking", thinking: "Looking at files." });
    expect(reasoning.type === "thinking" && reasoning.origin?.sealed).toBe(SEALED);
    // An item carried as is (a compaction) shows its sealed content by length only.
    const compacted = view.request({
      model: "gpt-5-codex",
      input: [
        { type: "compaction", id: "cmp_1", encrypted_content: SEALED },
        { role: "user", content: "Go on" },
      ],
    });
    const opaque = compacted!.messages[0]!.parts[0]!;
    expect(opaque.path).toBe("input[0]");
    expect(JSON.stringify(opaque.part)).not.toContain(SEALED);
    expect(opaque.part).toMatchObject({ type: "opaque", block: { encrypted_content: "[sealed, 40 characters]" } });
  });

  test("a string input is one user message at input", () => {
    expect(pathsOf(view.request({ model: "gpt-5", input: "Hi" }))).toEqual([
      ["user", "input", [["text", "input", [0, 0]]]],
    ]);
  });

  test("a loss reported while reading the request names a path below its part's", () => {
    const body = {
      model: "gpt-5",
      input: [
        { role: "user", content: "Sum them." },
        { type: "function_call", call_id: "call_1", name: "sum", arguments: '{"a":1,' },
        { type: "function_call_output", call_id: "call_1", output: "3" },
      ],
    };
    const [loss] = responses.client.readRequest(body).lossy;
    expect(loss).toMatchObject({ code: "tool-arguments-repaired", path: "input[1].arguments" });
    const parts = view.request(body)!.messages.flatMap((message) => message.parts);
    const at = parts.filter((viewed) => loss!.path!.startsWith(`${viewed.path}.`));
    expect(at.map((viewed) => viewed.part.type)).toEqual(["tool_call"]);
  });

  test("a loss reported while writing a Responses request is at the part it names in the written body", () => {
    // A Claude Code-like history: Anthropic's signed thinking cannot go to a Responses provider as reasoning.
    const anthropic = formatAdapter("anthropic").client.readRequest({
      model: "claude-sonnet-4-5",
      max_tokens: 100,
      system: "Be brief.",
      messages: [
        { role: "user", content: "List the files." },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "I will run ls.", signature: "EqQBCkYIBxgCKkA" },
            { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } },
          ],
        },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "a.txt", is_error: true }],
        },
      ],
    }).value;
    const written = responses.upstream.encodeRequest(anthropic);
    const losses = written.lossy.filter((entry) => entry.path?.startsWith("messages["));
    expect(losses.map((entry) => [entry.code, entry.path])).toEqual([
      ["thinking-to-text", "messages[1].content[0]"],
      ["tool-error-flag-dropped", "messages[2].content[0]"],
    ]);
    const parts = view.request(written.value)!.messages.flatMap((message) => message.parts);
    const placed = losses.map((entry) => {
      const [, message, part] = /^messages\[(\d+)\]\.content\[(\d+)\]$/.exec(entry.path!)!.map(Number);
      const viewed = parts.find((candidate) => candidate.at?.[0] === message && candidate.at?.[1] === part);
      return [viewed?.path, viewed?.part.type];
    });
    expect(placed).toEqual([
      ["input[1].content[0]", "text"],
      ["input[3]", "tool_result"],
    ]);
    expect(parts.find((viewed) => viewed.path === "input[1].content[0]")!.part).toMatchObject({
      text: "<think>I will run ls.</think>",
    });
  });

  test("a written request's places are those of the history it was written from, whatever items it became", () => {
    // A block system prompt becomes input[0]; a user message holding a tool result and text becomes a call output
    // and a message item. Each loss's place is the part it is about.
    const history: ConversationRequest = {
      model: "gpt-5",
      system: {
        role: "system",
        parts: [
          { type: "text", text: "You are a coding agent." },
          { type: "text", text: "Be brief." },
        ],
      },
      messages: [
        { role: "user", parts: [{ type: "text", text: "List the files." }] },
        {
          role: "assistant",
          parts: [
            { type: "thinking", thinking: "I will run ls.", signature: "EqQBCkYIBxgCKkA" },
            { type: "text", text: "Running ls." },
            { type: "tool_call", id: "toolu_1", name: "Bash", input: { command: "ls" } },
          ],
        },
        {
          role: "user",
          parts: [
            { type: "tool_result", toolCallId: "toolu_1", content: "ls: permission denied", isError: true },
            { type: "text", text: "Try sudo." },
          ],
        },
      ],
    };
    const written = responses.upstream.encodeRequest(history);
    const input = (written.value as { input: Array<{ type?: string; role?: string }> }).input;
    expect(input.map((item) => item.type ?? item.role)).toEqual([
      "system",
      "user",
      "message",
      "function_call",
      "function_call_output",
      "user",
    ]);
    const losses = written.lossy.filter((entry) => entry.path?.startsWith("messages["));
    expect(losses.map((entry) => entry.code)).toEqual(["thinking-to-text", "tool-error-flag-dropped"]);
    const parts = view.request(written.value)!.messages.flatMap((message) => message.parts);
    const about: Record<string, (part: Part) => boolean> = {
      "thinking-to-text": (part) => part.type === "text" && part.text === "<think>I will run ls.</think>",
      "tool-error-flag-dropped": (part) => part.type === "tool_result" && part.toolCallId === "toolu_1",
    };
    for (const entry of losses) {
      const [, message, part] = /^messages\[(\d+)\]\.content\[(\d+)\]$/.exec(entry.path!)!.map(Number);
      const viewed = parts.filter((candidate) => candidate.at?.[0] === message && candidate.at?.[1] === part);
      expect(viewed, entry.code).toHaveLength(1);
      expect(about[entry.code]!(viewed[0]!.part), entry.code).toBe(true);
    }
    // Every part written is at its place in the history: the system prompt first, as Chat numbers it.
    const canonical = [history.system!, ...history.messages];
    for (const viewed of parts) {
      const [message, part] = viewed.at!;
      const source = canonical[message]!.parts[part]!;
      expect(viewed.part.type, viewed.path).toBe(source.type === "thinking" ? "text" : source.type);
    }
  });

  test("a repair's place is the block of the part it names", () => {
    // An interrupted call: the call has no output before the next user message.
    const body = {
      model: "gpt-5",
      input: [
        { role: "user", content: "List the files." },
        { type: "function_call", call_id: "call_1", name: "shell", arguments: "{}" },
        { role: "user", content: "Never mind." },
      ],
    };
    const history = responses.client.readRequest(body).value.messages;
    const [entry] = repair(history, formatAdapter("openai").upstream.repairTarget).report;
    expect(entry).toMatchObject({ action: "added-interrupted-tool-result", messageIndex: 1, partIndex: 0 });
    const parts = view.request(body)!.messages.flatMap((message) => message.parts);
    const viewed = parts.find(
      (candidate) => candidate.at?.[0] === entry!.messageIndex && candidate.at?.[1] === entry!.partIndex,
    );
    expect([viewed?.path, viewed?.part]).toMatchObject(["input[1]", { type: "tool_call", id: "call_1" }]);
  });

  test("what is not a Responses request is undefined, never an error", () => {
    expect(view.request({ model: "gpt-5", input: [{ type: "message", role: "robot", content: "x" }] })).toBeUndefined();
    expect(view.request({ messages: [] })).toBeUndefined();
    expect(view.request("text")).toBeUndefined();
  });
});

describe("Responses answers", () => {
  test("a whole answer: each output item with its parts at their paths, reasoning sealed", () => {
    const read = view.response({
      id: "resp_1",
      object: "response",
      created_at: 1,
      status: "completed",
      error: null,
      incomplete_details: null,
      model: "gpt-5-codex",
      output: [
        { id: "rs_2", type: "reasoning", summary: [], encrypted_content: SEALED },
        {
          id: "msg_2",
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "Running it.", annotations: [] }],
        },
        { id: "fc_2", type: "function_call", call_id: "call_3", name: "shell", arguments: "{}", status: "completed" },
      ],
      usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    });
    expect(read!.model).toBe("gpt-5-codex");
    expect(pathsOf(read)).toEqual([
      ["reasoning", "output[0]", [["thinking", "output[0]", undefined]]],
      ["assistant", "output[1]", [["text", "output[1].content[0]", undefined]]],
      ["function_call", "output[2]", [["tool_call", "output[2]", undefined]]],
    ]);
  });

  test("what is not a Responses answer is undefined", () => {
    expect(view.response({ choices: [] })).toBeUndefined();
    expect(view.response({ output: [7] })).toBeUndefined();
  });
});
