import type { Message } from "../src/core/index.js";
import { formatAdapter } from "../src/formats/registry.js";
import { repair, validateFor } from "../src/repair/pipeline.js";
import { type BenchSection, fixed, sideBySide, table } from "./harness.js";

const MESSAGES = 10_000;

/**
 * A long agent session in the shape of a real one: a user request, then turns of signed thinking + a tool
 * call answered by a result. With `defects`, one turn in fifty is broken the ways resumed sessions break
 * (an interrupted call, unsigned thinking, an orphan result, a split answer).
 */
function agentHistory(defects: boolean): Message[] {
  const messages: Message[] = [
    { role: "user", parts: [{ type: "text", text: "Refactor the parser and keep the tests green." }] },
  ];
  for (let turn = 0; messages.length < MESSAGES; turn++) {
    const id = `toolu_${turn.toString(36).padStart(8, "0")}`;
    const broken = defects && turn % 50 === 49 ? turn % 200 : -1;
    messages.push({
      role: "assistant",
      parts: [
        broken === 49
          ? { type: "thinking", thinking: `Step ${turn}: the stream was cut here` }
          : {
              type: "thinking",
              thinking: `Step ${turn}: read the next file and check its imports.`,
              signature: `EqQBCkYIBRgCKkA${turn}`,
            },
        { type: "text", text: `Reading file ${turn}.` },
        { type: "tool_call", id, name: "Read", input: { file_path: `/src/parser/part-${turn}.ts` } },
      ],
    });
    if (broken === 99) continue;
    const result = {
      type: "tool_result" as const,
      toolCallId: broken === 149 ? `${id}_gone` : id,
      content: `export const part${turn} = ${turn};\n`.repeat(8),
    };
    messages.push({
      role: "user",
      parts: broken === 199 ? [{ type: "text", text: "also check the lexer" }, result] : [result],
    });
  }
  return messages;
}

export default async (): Promise<BenchSection> => {
  const rows: Array<Array<string | number>> = [];
  for (const [label, defects] of [
    ["valid history", false],
    ["one turn in 50 broken", true],
  ] as const) {
    const history = agentHistory(defects);
    const target = formatAdapter("anthropic").upstream.repairTarget;
    const work = () => {
      const { messages } = repair(history, target);
      validateFor(messages, target);
    };
    const copy = () => structuredClone(history);
    const measured = sideBySide(work, copy);
    const microsecondsPerMessage = 1e6 / measured.subject / history.length;
    rows.push([label, history.length, fixed(microsecondsPerMessage, 3), fixed(1 / measured.ratio)]);
  }
  return {
    title: "Repair",
    markdown: [
      table(
        ["history", "messages", "repair + validate, µs per message", "time relative to a deep copy (target < 5)"],
        rows,
      ),
      "",
      "`repair` for Anthropic then `validateFor` on the result, against `structuredClone` of the same",
      "history, measured in alternating rounds. Unchanged messages are returned as they are, never copied, so a",
      "valid history costs a few scans; a broken one pays only for the messages it changes.",
    ].join("\n"),
  };
};
