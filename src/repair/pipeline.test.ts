import { describe, expect, test } from "vitest";
import { encodeOriginSignature, type Message, type Part } from "../core/index.js";
import { CONTINUE_TEXT } from "./alternate-roles.js";
import { INTERRUPTED_RESULT_TEXT } from "./close-orphaned-tool-calls.js";
import { repair, validateFor } from "./pipeline.js";
import { MISSING_REASONING_TEXT } from "./reasoning-on-tool-turns.js";
import { anthropicTarget as anthropic, openaiTarget } from "./test-support/targets.js";

const signature = "Es8DCkYICxgCKkBROcM3239oIjVRtMTZin6UAjoE9xO0SXVQMr4UmHPaf8ABCrDZU7HQV0rZBBQjHz";

const user = (...parts: Array<Part | string>): Message => ({ role: "user", parts: parts.map(asPart) });
const assistant = (...parts: Array<Part | string>): Message => ({ role: "assistant", parts: parts.map(asPart) });
const asPart = (part: Part | string): Part => (typeof part === "string" ? { type: "text", text: part } : part);
const thinking = (text: string, sig = signature): Part => ({ type: "thinking", thinking: text, signature: sig });
const unsigned = (text: string): Part => ({ type: "thinking", thinking: text });
const call = (id: string, name = "read_file"): Part => ({
  type: "tool_call",
  id,
  name,
  input: { path: `/src/${id}.ts` },
});
const result = (id: string, content = `contents of ${id}`): Part => ({ type: "tool_result", toolCallId: id, content });

describe("repair for Anthropic", () => {
  test("a final assistant prefill ending in whitespace is trimmed, and only that", () => {
    const earlier = assistant("Earlier answer.  ");
    const history = [user("q"), earlier, user("go on"), assistant(thinking("plan"), "Sure, here it is:\n ")];
    expect(validateFor(history, anthropic)).toEqual([
      { path: "messages[3].content[1]", message: "final assistant content cannot end with trailing whitespace" },
    ]);
    const { messages, report } = repair(history, anthropic);
    expect(messages[1]).toBe(earlier);
    expect(messages[3]!.parts).toEqual([thinking("plan"), { type: "text", text: "Sure, here it is:" }]);
    expect(report).toEqual([
      expect.objectContaining({ action: "trimmed-final-whitespace", messageIndex: 3, partIndex: 1 }),
    ]);
    expect(validateFor(messages, anthropic)).toEqual([]);
  });

  test("a final text of whitespace only goes, the thinking before it stays as it was", () => {
    const signed = thinking("plan");
    const { messages, report } = repair([user("q"), assistant(signed, "  ")], anthropic);
    expect(messages[1]!.parts).toEqual([signed]);
    expect(messages[1]!.parts[0]).toBe(signed);
    expect(report).toEqual([expect.objectContaining({ messageIndex: 1, partIndex: 1 })]);
    expect(validateFor(messages, anthropic)).toEqual([]);
  });

  test("the interrupted-tool-call crash: two signed thinking + tool_use turns, then user text", () => {
    const first = assistant(thinking("I should read a.ts"), call("toolu_a"));
    const second = assistant(thinking("Now b.ts"), call("toolu_b"));
    const history = [user("Fix the bug"), first, second, user("Stop, look at c.ts instead")];
    expect(validateFor(history, anthropic).map((violation) => violation.path)).toEqual([
      "messages[1]",
      "messages[2]",
      "messages[2]",
    ]);

    const { messages, report } = repair(history, anthropic);
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(messages[1]).toBe(first);
    expect(messages[3]).toBe(second);
    expect(messages[2]!.parts).toEqual([
      { type: "tool_result", toolCallId: "toolu_a", content: INTERRUPTED_RESULT_TEXT, isError: true },
    ]);
    expect(messages[4]!.parts).toEqual([
      { type: "tool_result", toolCallId: "toolu_b", content: INTERRUPTED_RESULT_TEXT, isError: true },
      { type: "text", text: "Stop, look at c.ts instead" },
    ]);
    expect(report).toEqual([
      expect.objectContaining({ action: "added-interrupted-tool-result", messageIndex: 1, partIndex: 1 }),
      expect.objectContaining({ action: "added-interrupted-tool-result", messageIndex: 2, partIndex: 1 }),
    ]);
    expect(validateFor(messages, anthropic)).toEqual([]);
  });

  test("a user interrupt mid tool flow: the synthetic result goes first, before the user's text", () => {
    const history = [
      user("Run the tests"),
      assistant(thinking("Running them"), call("toolu_1", "bash"), call("toolu_2", "bash")),
      user(result("toolu_1", "ok"), "never mind"),
    ];
    const { messages, report } = repair(history, anthropic);
    expect(messages[2]!.parts.map((part) => (part.type === "tool_result" ? part.toolCallId : part.type))).toEqual([
      "toolu_1",
      "toolu_2",
      "text",
    ]);
    expect(report).toEqual([
      expect.objectContaining({ action: "added-interrupted-tool-result", messageIndex: 1, partIndex: 2 }),
    ]);
    expect(report[0]!.reason).toContain("interrupted");
  });

  test("a tool call at the very end gets its result in a new user message", () => {
    const { messages } = repair([user("go"), assistant(call("toolu_9"))], anthropic);
    expect(messages).toHaveLength(3);
    expect(messages[2]).toEqual({
      role: "user",
      parts: [expect.objectContaining({ toolCallId: "toolu_9", isError: true })],
    });
  });

  test("an aborted stream's unsigned thinking becomes text, never dropped", () => {
    const history = [user("Explain"), assistant(unsigned("half a thought")), user("Are you there?")];
    const { messages, report } = repair(history, anthropic);
    expect(messages[1]!.parts).toEqual([{ type: "text", text: "half a thought" }]);
    expect(report).toEqual([expect.objectContaining({ action: "thinking-to-text", messageIndex: 1, partIndex: 0 })]);
  });

  test("a cross-provider handoff: an OpenAI-compatible model's thinking resumed on Anthropic becomes text", () => {
    const envelope = encodeOriginSignature({ format: "openai", provider: "kimi", field: "reasoning_content" });
    const kimiTurn = assistant(thinking("Kimi's reasoning", envelope), "Kimi's answer", call("functions.read:0"));
    const claudeTurn = assistant(thinking("Claude's reasoning"), "Claude's answer");
    const history = [user("q1"), kimiTurn, user(result("functions.read:0")), claudeTurn, user("q2")];
    const { messages, report } = repair(history, anthropic);
    expect(messages[1]!.parts[0]).toEqual({ type: "text", text: "Kimi's reasoning" });
    // Kimi's tool ids do not match Anthropic's pattern: the call and its result are renamed alike.
    expect(messages[1]!.parts.slice(1)).toEqual([
      kimiTurn.parts[1],
      { ...call("functions.read:0"), id: "functions_read_0" },
    ]);
    expect(messages[2]!.parts).toEqual([{ ...result("functions.read:0"), toolCallId: "functions_read_0" }]);
    expect(messages[3]).toBe(claudeTurn);
    expect(report.map((entry) => [entry.action, entry.messageIndex, entry.partIndex])).toEqual([
      ["thinking-to-text", 1, 0],
      ["renamed-tool-call-id", 1, 2],
      ["renamed-tool-result-id", 2, 0],
    ]);
    expect(report[0]!.reason).toContain("kimi");
    expect(validateFor(messages, anthropic)).toEqual([]);
  });

  test("a blank text block inside a tool result goes too, the rest of the result stays", () => {
    const blankInside: Part = {
      type: "tool_result",
      toolCallId: "call_1",
      content: [
        { type: "text", text: " " },
        { type: "text", text: "output" },
      ],
    };
    const history = [user("q"), assistant(call("call_1")), user(blankInside)];
    expect(validateFor(history, anthropic).map((violation) => violation.path)).toEqual([
      "messages[2].content[0].content[0]",
    ]);
    const { messages, report } = repair(history, anthropic);
    expect(messages[2]!.parts).toEqual([{ ...blankInside, content: [{ type: "text", text: "output" }] }]);
    expect(report).toEqual([expect.objectContaining({ action: "removed-empty-block", messageIndex: 2, partIndex: 0 })]);
    expect(validateFor(messages, anthropic)).toEqual([]);
  });

  test("a tool id used twice gets a new one; the results follow their calls in order", () => {
    const history = [
      user("q"),
      assistant(call("call_0"), call("call_0", "other")),
      user(result("call_0", "first"), result("call_0", "second")),
      assistant(call("call_0_2")),
      user(result("call_0_2")),
    ];
    expect(validateFor(history, anthropic).map((violation) => violation.message)).toContain(
      "`tool_use` ids must be unique",
    );
    const { messages, report } = repair(history, anthropic);
    // call_0_2 is taken by a later call, so the second call_0 becomes call_0_3.
    expect(messages[1]!.parts.map((part) => part.type === "tool_call" && part.id)).toEqual(["call_0", "call_0_3"]);
    expect(messages[2]!.parts).toEqual([
      result("call_0", "first"),
      { ...result("call_0", "second"), toolCallId: "call_0_3" },
    ]);
    expect(messages[3]).toBe(history[3]);
    expect(report.map((entry) => entry.action)).toEqual(["renamed-tool-call-id", "renamed-tool-result-id"]);
    expect(validateFor(messages, anthropic)).toEqual([]);
  });

  test("the last assistant message's foreign thinking becomes text while its signed thinking stays identical", () => {
    const signedThinking = thinking("signed");
    const redacted: Part = { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw" };
    const unsigned = thinking("cut off", "");
    const history = [user("q"), assistant(signedThinking, redacted, "answer", unsigned)];
    const { messages } = repair(history, anthropic);
    expect(messages[1]!.parts[0]).toBe(signedThinking);
    expect(messages[1]!.parts[1]).toBe(redacted);
    expect(messages[1]!.parts[3]).toEqual({ type: "text", text: "cut off" });
  });

  test("an orphan tool result is kept as text, with its images", () => {
    const image: Part = { type: "image", source: { type: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" } };
    const orphan: Part = {
      type: "tool_result",
      toolCallId: "toolu_gone",
      content: [{ type: "text", text: "screenshot taken" }, image],
    };
    const history = [user("look"), assistant("Sure."), user(orphan, "what do you see?")];
    expect(validateFor(history, anthropic)).toEqual([
      {
        path: "messages[2].content[0]",
        message:
          "unexpected `tool_use_id` found in `tool_result` blocks: toolu_gone. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
      },
    ]);
    const { messages, report } = repair(history, anthropic);
    expect(messages[2]!.parts).toEqual([
      { type: "text", text: "[tool result for toolu_gone]\nscreenshot taken" },
      image,
      { type: "text", text: "what do you see?" },
    ]);
    expect(report).toEqual([expect.objectContaining({ action: "tool-result-to-text", messageIndex: 2, partIndex: 0 })]);
  });

  test("a thinking-only assistant message is kept", () => {
    const thinkingOnly = assistant(thinking("I considered it and had nothing to add"));
    const history = [user("hm?"), thinkingOnly, user("well?")];
    const { messages, report } = repair(history, anthropic);
    expect(messages).toBe(history);
    expect(report).toEqual([]);
    const omitted = assistant(thinking("", signature));
    expect(repair([user("q"), omitted], anthropic).messages[1]).toBe(omitted);
  });

  test("consecutive same-role messages merge, but an answer that starts with thinking is kept apart", () => {
    const answer = assistant(thinking("second answer's thinking"), "second answer");
    const history = [user("a"), user("b"), assistant("first answer"), answer];
    const { messages, report } = repair(history, anthropic);
    expect(messages).toEqual([
      { role: "user", parts: [asPart("a"), asPart("b")] },
      assistant("first answer"),
      { role: "user", parts: [{ type: "text", text: CONTINUE_TEXT }] },
      answer,
    ]);
    expect(messages[3]).toBe(answer);
    expect(report.map((entry) => [entry.action, entry.messageIndex])).toEqual([
      ["merged-consecutive-messages", 1],
      ["inserted-user-turn", 3],
    ]);
  });

  test("assistant records split per block merge into one message", () => {
    const history = [
      user("q"),
      assistant(thinking("t")),
      assistant("text"),
      assistant(call("toolu_x")),
      user(result("toolu_x")),
    ];
    const { messages } = repair(history, anthropic);
    expect(messages[1]!.parts.map((part) => part.type)).toEqual(["thinking", "text", "tool_call"]);
    expect(validateFor(messages, anthropic)).toEqual([]);
  });

  test("tool_result blocks not first in their user message move to the front", () => {
    const history = [
      user("q"),
      assistant(call("toolu_1"), call("toolu_2")),
      user("here you go", result("toolu_1"), "and", result("toolu_2")),
    ];
    const { messages, report } = repair(history, anthropic);
    expect(messages[2]!.parts).toEqual([result("toolu_1"), result("toolu_2"), asPart("here you go"), asPart("and")]);
    expect(report.map((entry) => [entry.action, entry.messageIndex, entry.partIndex])).toEqual([
      ["moved-tool-result-first", 2, 1],
      ["moved-tool-result-first", 2, 3],
    ]);
  });

  test("empty messages and blank text blocks are removed and reported; the neighbours then merge", () => {
    const history: Message[] = [
      user("q"),
      { role: "assistant", parts: [] },
      { role: "user", parts: [asPart("  ")], textShorthand: true },
      user("again", "\n"),
      assistant("a"),
    ];
    const { messages, report } = repair(history, anthropic);
    expect(messages).toEqual([user("q", "again"), assistant("a")]);
    expect(report.map((entry) => [entry.action, entry.messageIndex])).toEqual([
      ["removed-empty-message", 1],
      ["removed-empty-message", 2],
      ["removed-empty-block", 3],
      ["merged-consecutive-messages", 3],
    ]);
  });

  test("a history that starts with the assistant gets a user turn first; system messages stay in place", () => {
    const system: Message = { role: "system", parts: [asPart("You are terse.")] };
    const { messages, report } = repair([system, assistant("Hello"), user("hi")], anthropic);
    expect(messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(messages[0]).toBe(system);
    expect(report).toEqual([expect.objectContaining({ action: "inserted-user-turn", messageIndex: 1 })]);
  });

  test("a valid history comes back identical, with an empty report", () => {
    const history = [
      user("q"),
      assistant(thinking("t"), call("toolu_1")),
      user(result("toolu_1"), "thanks"),
      assistant("done"),
    ];
    const repaired = repair(history, anthropic);
    expect(repaired.messages).toBe(history);
    expect(repaired.report).toEqual([]);
  });

  test("does not modify its input, and a second repair changes nothing", () => {
    const history = [assistant(call("toolu_1")), assistant(unsigned("x")), user("u", result("toolu_zz")), user("")];
    const snapshot = structuredClone(history);
    const once = repair(history, anthropic);
    expect(history).toEqual(snapshot);
    const twice = repair(once.messages, anthropic);
    expect(twice.report).toEqual([]);
    expect(twice.messages).toBe(once.messages);
    expect(validateFor(once.messages, anthropic)).toEqual([]);
  });
});

describe("repair for OpenAI-compatible targets", () => {
  test("keeps [text, tool_result] order by default and closes orphaned calls", () => {
    const history = [user("q"), assistant(call("call_1"), call("call_2")), user("note", result("call_1"))];
    const { messages, report } = repair(history, openaiTarget());
    expect(messages[2]!.parts.map((part) => (part.type === "tool_result" ? part.toolCallId : part.type))).toEqual([
      "call_2",
      "text",
      "call_1",
    ]);
    expect(report).toEqual([
      expect.objectContaining({ action: "added-interrupted-tool-result", messageIndex: 1, partIndex: 1 }),
    ]);
  });

  test("accepts results spread over consecutive user messages (tool messages) and leaves a valid history alone", () => {
    const history = [
      user("q"),
      assistant(call("call_1"), call("call_2")),
      user(result("call_1")),
      user(result("call_2")),
      user("next"),
    ];
    expect(validateFor(history, openaiTarget())).toEqual([]);
    expect(repair(history, openaiTarget()).messages).toBe(history);
  });

  test("the strict rule moves tool results right after the assistant message", () => {
    const target = openaiTarget({ strictToolMessageOrder: true });
    const history = [user("q"), assistant(call("call_1")), user("wait"), user(result("call_1"))];
    expect(validateFor(history, target).map((violation) => violation.path)).toEqual(["messages[3].content[0]"]);
    const { messages, report } = repair(history, target);
    expect(messages).toEqual([user("q"), assistant(call("call_1")), user(result("call_1"), "wait")]);
    expect(report).toEqual([
      expect.objectContaining({ action: "moved-tool-result-first", messageIndex: 3, partIndex: 0 }),
    ]);
  });

  test("the strict rule: a message its result was moved out of, left with only empty text, goes", () => {
    // Found by the property test: the move left `user [""]` behind, which the API refuses.
    const target = openaiTarget({ strictToolMessageOrder: true });
    const history = [assistant(call("toolu_5")), user("alpha"), user(result("toolu_5"), "")];
    const { messages, report } = repair(history, target);
    expect(messages).toEqual([assistant(call("toolu_5")), user(result("toolu_5"), "alpha")]);
    expect(report.map((entry) => [entry.action, entry.messageIndex])).toEqual([
      ["moved-tool-result-first", 2],
      ["removed-empty-message", 2],
    ]);
    expect(validateFor(messages, target)).toEqual([]);
  });

  test("an assistant message of redacted thinking only goes (it would reach the API empty); repairing again changes nothing", () => {
    const redacted: Part = { type: "redacted_thinking", data: "EmwKAhgBEgy3" };
    const history = [user("q"), assistant(redacted), user("q2")];
    const target = openaiTarget();
    expect(validateFor(history, target).map((violation) => violation.path)).toEqual(["messages[1]"]);
    const { messages, report } = repair(history, target);
    expect(messages).toEqual([user("q"), user("q2")]);
    expect(report).toEqual([expect.objectContaining({ action: "removed-empty-message", messageIndex: 1 })]);
    expect(repair(messages, target).report).toEqual([]);
  });

  test("Kimi and DeepSeek get placeholder reasoning on tool-call turns that lack it", () => {
    const target = openaiTarget({ requiresReasoningOnToolCallTurns: true }, "kimi");
    const withReasoning = assistant(unsigned("why"), call("functions.a:0"));
    const history = [
      user("q"),
      assistant(call("functions.b:1")),
      user(result("functions.b:1")),
      withReasoning,
      user(result("functions.a:0")),
    ];
    expect(validateFor(history, target)).toEqual([
      {
        path: "messages[1]",
        message: "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1",
      },
    ]);
    const { messages, report } = repair(history, target);
    expect(messages[1]!.parts[0]).toEqual({ type: "thinking", thinking: MISSING_REASONING_TEXT });
    expect(messages[3]).toBe(withReasoning);
    expect(report).toEqual([expect.objectContaining({ action: "added-placeholder-reasoning", messageIndex: 1 })]);
    expect(validateFor(messages, target)).toEqual([]);
    expect(validateFor(history, { ...target, provider: "deepseek" })[0]!.message).toContain("must be passed back");
  });

  test("an orphan tool message is kept as text, in OpenAI's words", () => {
    const history = [user("q"), assistant("hi"), user(result("call_gone"))];
    expect(validateFor(history, openaiTarget())[0]).toEqual({
      path: "messages[2].content[0]",
      message:
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    });
    expect(repair(history, openaiTarget()).messages[2]!.parts).toEqual([
      { type: "text", text: "[tool result for call_gone]\ncontents of call_gone" },
    ]);
  });

  test("unsigned thinking is left for the codec: OpenAI-compatible APIs take reasoning in any form", () => {
    const history = [user("q"), assistant(unsigned("plain reasoning"), "a")];
    expect(repair(history, openaiTarget()).messages).toBe(history);
  });
});

describe("repair reads the target's rules, never its API's name", () => {
  test("a next-message target without a tool id pattern keeps ids Anthropic would rename, and closes calls as Anthropic's does", () => {
    const { toolIdPattern: _, ...rules } = anthropic;
    const history = [
      user("q"),
      assistant(call("functions.read:0")),
      user(result("functions.read:0")),
      assistant("done"),
    ];
    expect(repair(history, rules).messages).toBe(history);
    expect(repair(history, anthropic).report.map((entry) => entry.action)).toEqual([
      "renamed-tool-call-id",
      "renamed-tool-result-id",
    ]);
    const interrupted = repair([user("q"), assistant(call("functions.read:0")), user("go on")], rules);
    expect(interrupted.report.map((entry) => entry.action)).toEqual(["added-interrupted-tool-result"]);
  });

  test("thinking is foreign to a target by its signer: thinking another format signed becomes text", () => {
    const signedElsewhere: Part = {
      type: "thinking",
      thinking: "plan",
      signature: signature,
      origin: { format: "openai", provider: "deepseek" },
    };
    const history = [user("q"), assistant(signedElsewhere, "a")];
    expect(repair(history, anthropic).report.map((entry) => entry.action)).toEqual(["thinking-to-text"]);
    expect(repair(history, { ...anthropic, thinkingSignedBy: "openai" }).messages).toBe(history);
  });
});
