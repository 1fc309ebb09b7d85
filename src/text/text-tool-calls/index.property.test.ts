import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { cutAt } from "../../../test/support/cut.js";
import type { ToolDefinition } from "../../core/conversation.js";
import { assertNever } from "../../core/parts.js";
import {
  createTextToolCallParser,
  mergeTextSegments,
  parseTextToolCalls,
  TEXT_TOOL_CALL_FORMATS,
  type TextToolCallFormat,
  type TextToolSegment,
} from "./index.js";

interface Call {
  name: string;
  input: { s: string; n: number; b: boolean };
}

const tools: ToolDefinition[] = [
  {
    name: "tool",
    inputSchema: {
      type: "object",
      properties: { s: { type: "string" }, n: { type: "integer" }, b: { type: "boolean" } },
    },
  },
];

/** Writes calls the way each model family does. */
function render(format: TextToolCallFormat, calls: readonly Call[]): string {
  const xmlPairs = (call: Call, pair: (key: string, value: string) => string) =>
    Object.entries(call.input)
      .map(([key, value]) => pair(key, String(value)))
      .join("");
  switch (format) {
    case "hermes":
      return calls
        .map((call) => `<tool_call>\n${JSON.stringify({ name: call.name, arguments: call.input })}\n</tool_call>`)
        .join("\n");
    case "qwen3-coder":
      return calls
        .map(
          (call) =>
            `<tool_call>\n<function=${call.name}>\n` +
            xmlPairs(call, (key, value) => `<parameter=${key}>\n${value}\n</parameter>\n`) +
            "</function>\n</tool_call>",
        )
        .join("\n");
    case "glm":
      return calls
        .map(
          (call) =>
            `<tool_call>${call.name}\n` +
            xmlPairs(call, (key, value) => `<arg_key>${key}</arg_key>\n<arg_value>${value}</arg_value>\n`) +
            "</tool_call>",
        )
        .join("\n");
    case "kimi-k2":
      return (
        "<|tool_calls_section_begin|>" +
        calls
          .map(
            (call, index) =>
              `<|tool_call_begin|>functions.${call.name}:${index}<|tool_call_argument_begin|>${JSON.stringify(call.input)}<|tool_call_end|>`,
          )
          .join("") +
        "<|tool_calls_section_end|>"
      );
    case "deepseek-v3":
      return (
        "<｜tool▁calls▁begin｜>" +
        calls
          .map(
            (call) =>
              `<｜tool▁call▁begin｜>function<｜tool▁sep｜>${call.name}\n\`\`\`json\n${JSON.stringify(call.input)}\n\`\`\`<｜tool▁call▁end｜>`,
          )
          .join("\n") +
        "<｜tool▁calls▁end｜>"
      );
    case "deepseek-v3.1":
      return (
        "<｜tool▁calls▁begin｜>" +
        calls
          .map(
            (call) => `<｜tool▁call▁begin｜>${call.name}<｜tool▁sep｜>${JSON.stringify(call.input)}<｜tool▁call▁end｜>`,
          )
          .join("") +
        "<｜tool▁calls▁end｜>"
      );
    case "minimax":
      return (
        "<minimax:tool_call>\n" +
        calls
          .map(
            (call) =>
              `<invoke name="${call.name}">\n` +
              xmlPairs(call, (key, value) => `<parameter name="${key}">${value}</parameter>\n`) +
              "</invoke>\n",
          )
          .join("") +
        "</minimax:tool_call>"
      );
    case "llama3-json":
      return calls.map((call) => JSON.stringify({ name: call.name, parameters: call.input })).join("; ");
    case "mistral":
      return calls.map((call) => `[TOOL_CALLS]${call.name}[ARGS]${JSON.stringify(call.input)}`).join("");
    default:
      return assertNever(format, "format");
  }
}

/** Text that cannot begin any marker or JSON: CJK, emoji, letters, spaces, newlines. */
const plainText = fc
  .string({ unit: fc.constantFrom("a", "Z", " ", "\n", "。", "用", "户", "😀", "👍🏽", "é", "ok "), maxLength: 12 })
  .filter((text) => text.trim() !== "");
const value = fc
  .string({ unit: fc.constantFrom("a", "b", " ", "用", "😀", "x"), maxLength: 8 })
  .map((text) => `v${text}v`);
const call: fc.Arbitrary<Call> = fc.record({
  name: fc.constant("tool"),
  input: fc.record({ s: value, n: fc.integer({ min: -1000, max: 1000 }), b: fc.boolean() }),
});
const splits = fc.array(fc.nat(), { maxLength: 14 });

function streamed(format: TextToolCallFormat, pieces: readonly string[]): TextToolSegment[] {
  const parser = createTextToolCallParser(format, tools);
  const out: TextToolSegment[] = [];
  for (const piece of pieces) out.push(...parser.push(piece));
  out.push(...parser.finish());
  return out;
}

function withoutIds(segments: readonly TextToolSegment[]) {
  return segments.map((segment) => (segment.type === "text" ? segment : { ...segment, id: "" }));
}

function rebuilt(segments: readonly TextToolSegment[]): string {
  return segments.map((segment) => (segment.type === "text" ? segment.text : segment.rawInput)).join("");
}

/** Checks streaming against whole-text parsing for one input and split; returns the whole-text result. */
function checkSplit(format: TextToolCallFormat, input: string, points: readonly number[]): TextToolSegment[] {
  const whole = parseTextToolCalls(input, format, tools);
  const out = streamed(format, cutAt(input, points));
  expect(withoutIds(mergeTextSegments(out))).toEqual(withoutIds(whole));
  expect(rebuilt(out)).toBe(input);
  for (const segment of out) if (segment.type === "text") expect(segment.text).not.toBe("");
  return whole;
}

describe.each(TEXT_TOOL_CALL_FORMATS)("%s", (format) => {
  test("calls between random text are found whole, in order, however the text is cut", () => {
    const groups =
      format === "llama3-json"
        ? fc.constant([])
        : fc.array(fc.tuple(plainText, fc.array(call, { minLength: 1, maxLength: 3 })), { maxLength: 3 });
    fc.assert(
      fc.property(
        groups,
        fc.array(call, { minLength: 1, maxLength: 2 }),
        plainText,
        splits,
        (before, last, after, points) => {
          const trailing = format === "llama3-json" ? "" : after;
          const input =
            before.map(([text, calls]) => text + render(format, calls)).join("") + render(format, last) + trailing;
          const whole = checkSplit(format, input, points);
          const expected = [...before.flatMap(([, calls]) => calls), ...last];
          const found = whole.flatMap((segment) =>
            segment.type === "tool-call" ? [{ name: segment.name, input: segment.input }] : [],
          );
          expect(found).toEqual(expected);
          const texts = whole.flatMap((segment) => (segment.type === "text" ? [segment.text] : []));
          expect(texts.join("").trim()).toBe([...before.map(([text]) => text), trailing].join("").trim());
        },
      ),
      { numRuns: 150 },
    );
  });

  test("any text, markers and fragments of them included: streaming equals whole, nothing lost", () => {
    const sample = render(format, [{ name: "tool", input: { s: "v", n: 1, b: true } }]);
    const fragments = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 10 }),
      fc
        .nat({ max: sample.length })
        .chain((start) => fc.nat({ max: sample.length }).map((end) => sample.slice(start, end))),
      fc.constant(sample),
      fc.constantFrom("<", "[", "{", "}", "]", '"', "\\", "\n", "｜", "\ud83d", "\ude00"),
    );
    fc.assert(
      fc.property(fc.array(fragments, { maxLength: 10 }), splits, (parts, points) => {
        checkSplit(format, parts.join(""), points);
      }),
      { numRuns: 300 },
    );
  });
});
