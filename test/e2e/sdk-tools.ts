import type Anthropic from "@anthropic-ai/sdk";

/** The tools the recorded fixtures call, and the test's own implementation of each. */

export const weatherTool: Anthropic.Tool = {
  name: "weather",
  description: "Current weather at a location",
  input_schema: {
    type: "object",
    properties: { location: { type: "string" }, unit: { type: "string" } },
    required: ["location"],
  },
};

const numberPair = {
  type: "object" as const,
  properties: { a: { type: "number" }, b: { type: "number" } },
  required: ["a", "b"],
};

export const addTool: Anthropic.Tool = { name: "add", description: "Adds a and b", input_schema: numberPair };
export const multiplyTool: Anthropic.Tool = {
  name: "multiply",
  description: "Multiplies a and b",
  input_schema: numberPair,
};
export const magicTool: Anthropic.Tool = {
  name: "nonUsefulTool",
  description: "Returns a magic number",
  input_schema: { type: "object", properties: {} },
};

/** Runs one tool call the way a client would; an unknown tool is an error the test sees. */
export function runTool(name: string, input: unknown): string {
  const args = (input ?? {}) as Record<string, unknown>;
  switch (name) {
    case "weather":
      return `${String(args.location)}: 21 degrees and sunny`;
    case "add":
      return String(Number(args.a) + Number(args.b));
    case "multiply":
      return String(Number(args.a) * Number(args.b));
    case "nonUsefulTool":
      return "42";
    default:
      throw new Error(`the model called an unknown tool '${name}'`);
  }
}

/** The tool_result blocks answering every tool_use block of an answer, in order. */
export function toolResultsFor(content: Anthropic.ContentBlock[]): Anthropic.ToolResultBlockParam[] {
  return content
    .filter((block): block is Anthropic.ToolUseBlock => block.type === "tool_use")
    .map((block) => ({ type: "tool_result", tool_use_id: block.id, content: runTool(block.name, block.input) }));
}
