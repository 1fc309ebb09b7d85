import { describe, expect, test } from "vitest";
import { formatAdapter } from "../formats/registry.js";
import { alignSides, sideBlocks } from "./align.js";
import { readRequest } from "./exchange-view.js";

/** Two sides' messages lined up block by block: what moved, merged, changed or vanished is on its row. */

const anthropic = formatAdapter("anthropic");
const openai = formatAdapter("openai");

function align(leftFormat: typeof anthropic, left: unknown, rightFormat: typeof anthropic, right: unknown) {
  const a = readRequest(leftFormat, JSON.stringify(left));
  const b = readRequest(rightFormat, JSON.stringify(right));
  const leftSide = sideBlocks(a.messages);
  const rightSide = sideBlocks(b.messages);
  return { rows: alignSides(leftSide, rightSide, a.messages, b.messages), leftSide, rightSide };
}

const request = (messages: unknown[]) => ({ model: "m", max_tokens: 10, messages });

describe("aligning two sides", () => {
  test("the same conversation in two APIs: every block paired, none changed", () => {
    const { rows } = align(
      anthropic,
      request([
        { role: "user", content: "Weather?" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "t1", name: "weather", input: { city: "Paris", unit: "c" } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "18" }] },
      ]),
      openai,
      request([
        { role: "user", content: "Weather?" },
        {
          role: "assistant",
          content: "Checking.",
          tool_calls: [
            // The same input, keys in another order.
            { id: "t1", type: "function", function: { name: "weather", arguments: '{"unit":"c","city":"Paris"}' } },
          ],
        },
        { role: "tool", tool_call_id: "t1", content: "18" },
      ]),
    );
    expect(rows.map((row) => [row.change, row.left?.path, row.right?.path])).toEqual([
      ["same", "messages[0].content", "messages[0].content"],
      ["same", "messages[1].content[0]", "messages[1].content"],
      ["same", "messages[1].content[1]", "messages[1].tool_calls[0]"],
      ["same", "messages[2].content[0]", "messages[2].content"],
    ]);
    expect(rows[0]!.leftMessage?.role).toBe("user");
    expect(rows[3]!.rightMessage?.role).toBe("tool");
  });

  test("changed text, thinking become text, a block gone and one new, each on its row", () => {
    const { rows } = align(
      anthropic,
      request([
        { role: "user", content: "Hi" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Greet back.", signature: "s" },
            { type: "text", text: "Hello!" },
            { type: "text", text: "Anything else?" },
          ],
        },
        { role: "user", content: "Bye" },
      ]),
      anthropic,
      request([
        { role: "user", content: "Hi" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Greet back." },
            { type: "text", text: "Hello there!" },
          ],
        },
        {
          role: "user",
          content: [
            { type: "text", text: "Bye" },
            { type: "text", text: "See you." },
          ],
        },
      ]),
    );
    expect(rows.map((row) => [row.change, row.detail, row.left?.path, row.right?.path])).toEqual([
      ["same", undefined, "messages[0].content", "messages[0].content"],
      ["changed", "thinking became text", "messages[1].content[0]", "messages[1].content[0]"],
      ["changed", "text differs", "messages[1].content[1]", "messages[1].content[1]"],
      ["removed", undefined, "messages[1].content[2]", undefined],
      ["same", undefined, "messages[2].content", "messages[2].content[0]"],
      ["added", undefined, undefined, "messages[2].content[1]"],
    ]);
  });

  test("the same content with a signature or an error flag gone is changed, and says what went", () => {
    const { rows } = align(
      anthropic,
      request([
        { role: "user", content: "Hi" },
        { role: "assistant", content: [{ type: "thinking", thinking: "Plan.", signature: "sig" }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "boom", is_error: true }] },
      ]),
      anthropic,
      request([
        { role: "user", content: "Hi" },
        { role: "assistant", content: [{ type: "thinking", thinking: "Plan." }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "boom" }] },
      ]),
    );
    expect(rows.map((row) => [row.change, row.detail])).toEqual([
      ["same", undefined],
      ["changed", "thinking (signed) became thinking"],
      ["changed", "tool result (t1), error became tool result (t1)"],
    ]);
  });

  test("a block that moved is marked with where it went; messages merged into one say so", () => {
    const { rows, rightSide } = align(
      anthropic,
      request([
        { role: "user", content: [{ type: "text", text: "first" }] },
        { role: "user", content: [{ type: "text", text: "second" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "A" },
            { type: "text", text: "B" },
          ],
        },
      ]),
      anthropic,
      request([
        {
          role: "user",
          content: [
            { type: "text", text: "first" },
            { type: "text", text: "second" },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "text", text: "B" },
            { type: "text", text: "A" },
          ],
        },
      ]),
    );
    expect(rightSide.heads[0]!.remarks).toEqual(["merged from messages[0], messages[1]"]);
    const moved = rows.filter((row) => row.change === "moved");
    expect(moved.map((row) => row.detail)).toEqual(["to messages[1].content[1]", "from messages[2].content[0]"]);
  });

  test("thousands of blocks on each side align (matched greedily past the table size), in seconds at most", () => {
    const messages = Array.from({ length: 3000 }, (_, index) => ({
      role: index % 2 === 0 ? "user" : "assistant",
      content: [{ type: "text", text: `turn ${index}` }],
    }));
    const shuffled = messages.map((message, index) =>
      index % 100 === 0 ? { ...message, content: [{ type: "text", text: `edited ${index}` }] } : message,
    );
    const started = performance.now();
    const { rows } = align(anthropic, request(messages), anthropic, request(shuffled));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(rows.filter((row) => row.change === "changed")).toHaveLength(30);
  });
});
