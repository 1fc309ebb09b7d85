import { describe, expect, test } from "vitest";
import type { Message } from "../../core/index.js";
import { PRESETS } from "./compat.js";
import { coreToOpenAIRequest } from "./from-core.js";
import { openaiRequestToCore } from "./to-core.js";
import { parseOpenAIRequest } from "./validate-request.js";

/** Requests as clients really send them: reasoning in two fields, fields only Anthropic has. */

describe("a client's reasoning in both reasoning_content and reasoning", () => {
  const body = parseOpenAIRequest({
    model: "m",
    messages: [
      { role: "user", content: "q" },
      { role: "assistant", content: "a", reasoning_content: "plan", reasoning: "plan" },
    ],
  });

  test("goes back as it came where it goes back to its own field", () => {
    const core = openaiRequestToCore(body).value;
    expect(coreToOpenAIRequest(core, { reasoning: "think-tags" }).value).toEqual(body);
  });

  test.each([
    ["think-tags", { role: "assistant", content: "<think>plan</think>a" }],
    ["reasoning", { role: "assistant", content: "a", reasoning: "plan" }],
    ["reasoning_content", { role: "assistant", content: "a", reasoning_content: "plan" }],
    ["drop", { role: "assistant", content: "a" }],
  ] as const)("goes once to another upstream in mode %s", (reasoning, expected) => {
    const core = openaiRequestToCore(body).value;
    const sent = coreToOpenAIRequest(core, { reasoning, provider: "vllm", compat: PRESETS.generic! });
    expect(sent.value.messages[1]).toEqual(expected);
    const moved = sent.lossy.filter((entry) => entry.code === "reasoning-field-changed");
    expect(moved).toHaveLength(reasoning === "think-tags" || reasoning === "reasoning" ? 1 : 0);
  });
});

describe("fields only Anthropic has, on a message or a tool", () => {
  test("are dropped for an OpenAI-compatible upstream and reported, never sent", () => {
    const messages: Message[] = [
      { role: "user", parts: [{ type: "text", text: "hi" }] },
      {
        role: "system",
        parts: [{ type: "text", text: "env" }],
        extra: { anthropic: { output_config: { effort: "low" } } },
      },
    ];
    const tools = [
      {
        name: "Bash",
        inputSchema: { type: "object" },
        extra: {
          anthropic: { eager_input_streaming: true, input_examples: [{ command: "ls" }], allowed_callers: ["direct"] },
        },
      },
    ];
    const { value, lossy } = coreToOpenAIRequest(
      { model: "m", messages, tools },
      { reasoning: "think-tags", compat: PRESETS.generic! },
    );
    expect(value.messages[1]).toEqual({ role: "system", content: [{ type: "text", text: "env" }] });
    expect(value.tools).toEqual([{ type: "function", function: { name: "Bash", parameters: { type: "object" } } }]);
    expect(lossy.map((entry) => [entry.code, entry.path])).toEqual([
      ["field-dropped-output_config", "messages[1].output_config"],
      ["field-dropped-eager_input_streaming", "tools[0].eager_input_streaming"],
      ["field-dropped-input_examples", "tools[0].input_examples"],
      ["field-dropped-allowed_callers", "tools[0].allowed_callers"],
    ]);
  });
});

describe("llama.cpp's switches (its server at commit 80fb11a)", () => {
  const tools = [
    { name: "weather", inputSchema: { type: "object" } },
    { name: "clock", inputSchema: { type: "object" } },
  ];
  const user: Message[] = [{ role: "user", parts: [{ type: "text", text: "hi" }] }];

  test("a named tool choice goes as `required` with only that tool offered: the server drops the object form", () => {
    const { value } = coreToOpenAIRequest(
      { model: "m", messages: user, tools, toolChoice: { type: "tool", name: "clock" } },
      { reasoning: "reasoning_content", compat: PRESETS.llamacpp! },
    );
    expect(value.tool_choice).toBe("required");
    expect(value.tools?.map((tool) => tool.function.name)).toEqual(["clock"]);
    const generic = coreToOpenAIRequest(
      { model: "m", messages: user, tools, toolChoice: { type: "tool", name: "clock" } },
      { reasoning: "think-tags", compat: PRESETS.generic! },
    ).value;
    expect(generic.tool_choice).toEqual({ type: "function", function: { name: "clock" } });
    expect(generic.tools).toHaveLength(2);
  });

  test.each([
    [{ type: "disabled" as const }, { chat_template_kwargs: { enable_thinking: false } }],
    [
      { type: "enabled" as const, budgetTokens: 1024 },
      { chat_template_kwargs: { enable_thinking: true }, thinking_budget_tokens: 1024 },
    ],
  ])("thinking %j goes through the template's switch and the budget field", (thinking, expected) => {
    const { value, lossy } = coreToOpenAIRequest(
      { model: "m", messages: user, thinking },
      { reasoning: "reasoning_content", compat: PRESETS.llamacpp! },
    );
    expect(value).toMatchObject(expected);
    if (thinking.type === "disabled") expect(value).not.toHaveProperty("thinking_budget_tokens");
    expect(lossy.map((entry) => entry.code)).not.toContain("thinking-config-dropped");
  });
});
