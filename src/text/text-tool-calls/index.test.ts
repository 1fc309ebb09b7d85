import { describe, expect, test } from "vitest";
import type { ToolDefinition } from "../../core/conversation.js";
import { createTextToolCallParser, parseTextToolCalls, type TextToolSegment } from "./index.js";

const weather: ToolDefinition = {
  name: "get_weather",
  inputSchema: {
    type: "object",
    properties: {
      city: { type: "string" },
      days: { type: "integer" },
      metric: { type: "boolean" },
      threshold: { type: "number" },
      hours: { type: "array", items: { type: "integer" } },
      options: { type: "object" },
      note: { type: ["string", "null"] },
      zip: { type: "string" },
      limit: { anyOf: [{ type: "integer" }, { type: "null" }] },
    },
  },
};
const tools = [
  weather,
  { name: "read_file", inputSchema: { type: "object", properties: { path: { type: "string" } } } },
];

/** Segments without generated ids, for comparison. */
function shape(segments: readonly TextToolSegment[]) {
  return segments.map((segment) =>
    segment.type === "text" ? segment : { type: segment.type, name: segment.name, input: segment.input },
  );
}

function rebuilt(segments: readonly TextToolSegment[]): string {
  return segments.map((segment) => (segment.type === "text" ? segment.text : segment.rawInput)).join("");
}

describe("the examples of each format", () => {
  const paris = { type: "tool-call", name: "get_weather", input: { city: "Paris" } };
  const examples: Array<[Parameters<typeof parseTextToolCalls>[1], string]> = [
    ["hermes", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'],
    ["glm", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>"],
    [
      "kimi-k2",
      '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|><|tool_calls_section_end|>',
    ],
    [
      "deepseek-v3",
      '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city":"Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    ],
    [
      "deepseek-v3.1",
      '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city":"Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    ],
    ["mistral", '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]'],
    ["mistral", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'],
    ["llama3-json", '{"name": "get_weather", "parameters": {"city": "Paris"}}'],
    [
      "qwen3-coder",
      "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    ],
    [
      "minimax",
      '<minimax:tool_call><invoke name="get_weather"><parameter name="city">Paris</parameter></invoke></minimax:tool_call>',
    ],
  ];
  for (const [format, text] of examples) {
    test(`${format}: ${text.slice(0, 40)}`, () => {
      const segments = parseTextToolCalls(text, format, tools);
      expect(shape(segments)).toEqual([paris]);
      expect(rebuilt(segments)).toBe(text);
    });
  }
});

describe("text around calls and parallel calls", () => {
  test("hermes: text before, two calls, text after; whitespace between calls joins the next call", () => {
    const text =
      'Let me look.\n\n<tool_call>\n{"name": "read_file", "arguments": {"path": "/etc/hosts"}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}\n</tool_call>\nDone.';
    const segments = parseTextToolCalls(text, "hermes", tools);
    expect(shape(segments)).toEqual([
      { type: "text", text: "Let me look.\n\n" },
      { type: "tool-call", name: "read_file", input: { path: "/etc/hosts" } },
      { type: "tool-call", name: "get_weather", input: { city: "Oslo" } },
      { type: "text", text: "\nDone." },
    ]);
    expect(segments[2]?.type === "tool-call" && segments[2].rawInput.startsWith("\n<tool_call>")).toBe(true);
    expect(rebuilt(segments)).toBe(text);
  });

  test("each call gets its own id; Kimi keeps its ids", () => {
    const hermes = parseTextToolCalls(
      '<tool_call>{"name":"a","arguments":{}}</tool_call><tool_call>{"name":"a","arguments":{}}</tool_call>',
      "hermes",
    );
    const ids = hermes.flatMap((segment) => (segment.type === "tool-call" ? [segment.id] : []));
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(id).toMatch(/^call_[0-9a-f]{16}[0-9a-z]{2,}$/);

    const kimi = parseTextToolCalls(
      "I'll check both.<|tool_calls_section_begin|>" +
        '<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city":"Paris"}<|tool_call_end|>\n' +
        '<|tool_call_begin|>functions.get_weather:1<|tool_call_argument_begin|>{"city":"Rome"}<|tool_call_end|>' +
        "<|tool_calls_section_end|>",
      "kimi-k2",
    );
    expect(kimi.map((segment) => (segment.type === "tool-call" ? segment.id : segment.text))).toEqual([
      "I'll check both.",
      "functions.get_weather:0",
      "functions.get_weather:1",
    ]);
  });

  test("deepseek: parallel calls in one section, reasoning text first", () => {
    const text =
      "Checking.<｜tool▁calls▁begin｜>" +
      '<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city":"Paris"}\n```<｜tool▁call▁end｜>\n' +
      '<｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n{"path":"/a"}\n```<｜tool▁call▁end｜>' +
      "<｜tool▁calls▁end｜>";
    const segments = parseTextToolCalls(text, "deepseek-v3");
    expect(shape(segments)).toEqual([
      { type: "text", text: "Checking." },
      { type: "tool-call", name: "get_weather", input: { city: "Paris" } },
      { type: "tool-call", name: "read_file", input: { path: "/a" } },
    ]);
    expect(rebuilt(segments)).toBe(text);
  });

  test("mistral: array of parallel calls, model ids kept, text after", () => {
    const text =
      '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abc123XYZ"}, {"name": "read_file", "arguments": {"path": "/b"}, "id": "def456UVW"}] ok';
    const segments = parseTextToolCalls(text, "mistral");
    expect(segments.map((segment) => (segment.type === "tool-call" ? segment.id : segment.text))).toEqual([
      "abc123XYZ",
      "def456UVW",
      " ok",
    ]);
    expect(rebuilt(segments)).toBe(text);
  });

  test("mistral v11 with a call id, two calls in a row", () => {
    const text =
      '[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city":"Paris"}[TOOL_CALLS]read_file[ARGS]{"path":"/c"}';
    const segments = parseTextToolCalls(text, "mistral");
    expect(segments.map((segment) => (segment.type === "tool-call" ? [segment.id, segment.name] : segment))).toEqual([
      ["a1b2c3d4e", "get_weather"],
      [expect.stringMatching(/^call_/), "read_file"],
    ]);
  });

  test("qwen3-coder and minimax: several calls", () => {
    const qwen =
      "<tool_call>\n<function=read_file>\n<parameter=path>\n/x\n</parameter>\n</function>\n</tool_call>\n" +
      "<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n</function>\n</tool_call>";
    expect(shape(parseTextToolCalls(qwen, "qwen3-coder", tools))).toEqual([
      { type: "tool-call", name: "read_file", input: { path: "/x" } },
      { type: "tool-call", name: "get_weather", input: { city: "Rome" } },
    ]);
    const minimax =
      '<think>plan</think>\n<minimax:tool_call>\n<invoke name="read_file">\n<parameter name="path">/y</parameter>\n</invoke>\n' +
      '<invoke name="get_weather">\n<parameter name="days">2</parameter>\n</invoke>\n</minimax:tool_call>';
    const segments = parseTextToolCalls(minimax, "minimax", tools);
    expect(shape(segments)).toEqual([
      { type: "text", text: "<think>plan</think>\n" },
      { type: "tool-call", name: "read_file", input: { path: "/y" } },
      { type: "tool-call", name: "get_weather", input: { days: 2 } },
    ]);
    expect(rebuilt(segments)).toBe(minimax);
  });
});

describe("values typed by the tool's schema", () => {
  test("qwen3-coder: integer, number, boolean, array, object, null, strings kept", () => {
    const parameter = (key: string, value: string) => `<parameter=${key}>\n${value}\n</parameter>\n`;
    const text =
      "<tool_call>\n<function=get_weather>\n" +
      parameter("city", "New York") +
      parameter("days", "3") +
      parameter("threshold", "2.5") +
      parameter("metric", "True") +
      parameter("hours", "[1, 2]") +
      parameter("options", "{'units': 'si'}") +
      parameter("note", "null") +
      parameter("zip", "01234") +
      parameter("limit", "10") +
      parameter("unknown_number", "7") +
      parameter("unknown_text", "hello there") +
      "</function>\n</tool_call>";
    const [call] = parseTextToolCalls(text, "qwen3-coder", tools);
    expect(call?.type === "tool-call" && call.input).toEqual({
      city: "New York",
      days: 3,
      threshold: 2.5,
      metric: true,
      hours: [1, 2],
      options: { units: "si" },
      note: null,
      zip: "01234",
      limit: 10,
      unknown_number: 7,
      unknown_text: "hello there",
    });
  });

  test("a value that does not fit its type stays the model's string", () => {
    const text = "<tool_call>get_weather<arg_key>days</arg_key><arg_value>three</arg_value></tool_call>";
    expect(shape(parseTextToolCalls(text, "glm", tools))).toEqual([
      { type: "tool-call", name: "get_weather", input: { days: "three" } },
    ]);
  });

  test("without tools, glm values are JSON when they parse, else strings", () => {
    const text =
      "<tool_call>f\n<arg_key>n</arg_key>\n<arg_value>42</arg_value>\n<arg_key>s</arg_key>\n<arg_value>hi</arg_value>\n</tool_call>";
    expect(shape(parseTextToolCalls(text, "glm"))).toEqual([
      { type: "tool-call", name: "f", input: { n: 42, s: "hi" } },
    ]);
  });
});

describe("malformed calls", () => {
  test("an unclosed hermes call cut by max_tokens is repaired", () => {
    const segments = parseTextToolCalls('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par', "hermes");
    expect(shape(segments)).toEqual([{ type: "tool-call", name: "get_weather", input: { city: "Par" } }]);
  });

  test("a call beyond repair stays text, and a later good call is still found", () => {
    const text =
      'I can write <tool_call> tags. <tool_call>not json at all</tool_call> then <tool_call>{"name":"a"}</tool_call>';
    const segments = parseTextToolCalls(text, "hermes");
    expect(shape(segments)).toEqual([
      { type: "text", text: "I can write <tool_call> tags. <tool_call>not json at all</tool_call> then " },
      { type: "tool-call", name: "a", input: {} },
    ]);
    expect(rebuilt(segments)).toBe(text);
  });

  test("llama3-json: JSON inside prose, or an answer that is JSON, is not a call", () => {
    const prose = 'Use {"name": "get_weather", "parameters": {"city": "Paris"}} to call it.';
    expect(parseTextToolCalls(prose, "llama3-json", tools)).toEqual([{ type: "text", text: prose }]);
    const answer = '{"name": "Alice", "age": 30}';
    expect(parseTextToolCalls(answer, "llama3-json")).toEqual([{ type: "text", text: answer }]);
    const unknownTool = '{"name": "launch", "parameters": {}}';
    expect(parseTextToolCalls(unknownTool, "llama3-json", tools)).toEqual([{ type: "text", text: unknownTool }]);
  });

  test("llama3-json: python tag and two calls separated by a semicolon", () => {
    const text =
      '<|python_tag|>{"name": "get_weather", "parameters": {"city": "A"}}; {"name": "read_file", "parameters": {"path": "/p"}}';
    const segments = parseTextToolCalls(text, "llama3-json", tools);
    expect(shape(segments)).toEqual([
      { type: "tool-call", name: "get_weather", input: { city: "A" } },
      { type: "tool-call", name: "read_file", input: { path: "/p" } },
    ]);
    expect(rebuilt(segments)).toBe(text);
  });

  test("mistral marker in prose is given back as soon as no call can follow it", () => {
    const parser = createTextToolCallParser("mistral");
    expect(parser.push("The [TOOL_CALLS] tok")).toEqual([{ type: "text", text: "The " }]);
    expect(parser.push("en is special")).toEqual([{ type: "text", text: "[TOOL_CALLS] token is special" }]);
    expect(parser.finish()).toEqual([]);
  });
});

describe("streaming", () => {
  test("holds back a partial start marker only while it may still be one", () => {
    const parser = createTextToolCallParser("hermes");
    expect(parser.push("Hi <tool_")).toEqual([{ type: "text", text: "Hi " }]);
    expect(parser.push("x")).toEqual([{ type: "text", text: "<tool_x" }]);
    expect(parser.push(" <tool_c")).toEqual([{ type: "text", text: " " }]);
    expect(parser.push('all>{"name":"a","argu')).toEqual([]);
    const done = parser.push('ments":{"k":1}}</tool_call>');
    expect(shape(done)).toEqual([{ type: "tool-call", name: "a", input: { k: 1 } }]);
    expect(parser.finish()).toEqual([]);
  });

  test("whitespace after the last call comes out at the end as text", () => {
    const parser = createTextToolCallParser("hermes");
    const out = [...parser.push('<tool_call>{"name":"a"}</tool_call>\n'), ...parser.push("\n")];
    expect(out.map((segment) => segment.type)).toEqual(["tool-call"]);
    expect(parser.finish()).toEqual([{ type: "text", text: "\n\n" }]);
  });
});
