import { describe, expect, test } from "vitest";
import { answerEvents } from "../test-support/regression-history.js";
import { PartBuilder } from "./part-builder.js";

describe("part builder", () => {
  test("folds an answer into its parts and reports only what changed", () => {
    const builder = new PartBuilder();
    const events = answerEvents();
    for (const event of events.slice(0, 6)) builder.apply(event);
    expect(builder.takeChanges()).toEqual([
      { position: 0, part: '{"type":"thinking","thinking":"Let me check.","signature":"EqQBCgIYAh"}' },
    ]);
    for (const event of events.slice(6)) builder.apply(event);
    expect(builder.takeChanges().map((change) => change.position)).toEqual([0, 1, 2].slice(1));
    expect(builder.takeChanges()).toEqual([]);
    expect(builder.parts()).toEqual([
      { type: "thinking", thinking: "Let me check.", signature: "EqQBCgIYAh" },
      { type: "text", text: "Reading it now." },
      { type: "tool_call", id: "toolu_09", name: "read_file", input: { path: "a.txt" } },
    ]);
  });

  test("does not modify the events it is given", () => {
    const builder = new PartBuilder();
    const events = answerEvents();
    const before = JSON.stringify(events);
    for (const event of events) builder.apply(event);
    expect(JSON.stringify(events)).toBe(before);
  });

  test("repairs cut arguments as a whole answer does, keeping their text, and absorbs deltas for unopened blocks", () => {
    const builder = new PartBuilder();
    builder.apply({ type: "block-start", index: 0, part: { type: "tool_call", id: "c1", name: "f", input: {} } });
    builder.apply({ type: "tool-input-delta", index: 0, partialJson: '{"a": tru' });
    builder.apply({ type: "block-end", index: 0 });
    builder.apply({ type: "text-delta", index: 1, text: "orphan" });
    builder.apply({
      type: "opaque-delta",
      index: 1,
      delta: { type: "citations_delta", citation: { cited_text: "x" } },
    });
    expect(builder.parts()).toEqual([
      { type: "tool_call", id: "c1", name: "f", input: { a: "tru" }, rawInput: '{"a": tru' },
      { type: "text", text: "orphan", extra: { anthropic: { citations: [{ cited_text: "x" }] } } },
    ]);
  });

  test("server tools take their streamed input, as in the whole answer", () => {
    const builder = new PartBuilder();
    const block = { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} };
    builder.apply({ type: "message-start", id: "m", model: "m" });
    builder.apply({ type: "block-start", index: 0, part: { type: "opaque", format: "anthropic", block } });
    builder.apply({ type: "tool-input-delta", index: 0, partialJson: '{"query": "weather' });
    expect(builder.takeChanges()).toEqual([
      {
        position: 0,
        part: JSON.stringify({
          type: "opaque",
          format: "anthropic",
          block: { ...block, input: { query: "weather" } },
        }),
      },
    ]);
    builder.apply({ type: "tool-input-delta", index: 0, partialJson: ' in Paris"}' });
    builder.apply({ type: "block-end", index: 0 });
    expect(builder.parts()).toEqual([
      { type: "opaque", format: "anthropic", block: { ...block, input: { query: "weather in Paris" } } },
    ]);
  });
});
