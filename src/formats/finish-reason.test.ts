import { describe, expect, test } from "vitest";
import type { ConversationResponse } from "../core/index.js";
import { accumulate, parseSse } from "../stream/index.js";
import { coreToAnthropicResponse } from "./anthropic/from-core.js";
import { createAnthropicStreamEncoder } from "./anthropic/stream-encoder.js";
import { coreToOpenAIResponse } from "./openai-chat/from-core.js";
import { createOpenAIStreamDecoder } from "./openai-chat/stream-decoder.js";
import { createOpenAIStreamEncoder } from "./openai-chat/stream-encoder.js";
import { openaiResponseToCore } from "./openai-chat/to-core.js";
import type { OpenAIChatResponse, OpenAIMessage } from "./openai-chat/wire-types.js";

/**
 * Finish reasons as upstreams really send them: `stop` beside tool calls (vLLM, Gemini's OpenAI endpoint,
 * LiteLLM) and none at all. Each case is read whole and streamed, and must give the same stop reason both ways.
 */

const toolCall = { id: "call_1", type: "function" as const, function: { name: "get_weather", arguments: '{"c":1}' } };

function whole(message: OpenAIMessage, finish: string | null | undefined): OpenAIChatResponse {
  const choice: Record<string, unknown> = { index: 0, message };
  if (finish !== undefined) choice.finish_reason = finish;
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [choice as never],
    usage: { prompt_tokens: 3, completion_tokens: 2 },
  };
}

/** The same answer as a server streams it: content, then each call in two fragments, then the finish chunk. */
function streamed(message: OpenAIMessage, finish: string | null | undefined): ConversationResponse {
  const chunk = (delta: object, finishReason?: string | null) => {
    const choice: Record<string, unknown> = { index: 0, delta };
    if (finishReason !== undefined) choice.finish_reason = finishReason;
    return `data: ${JSON.stringify({ id: "chatcmpl-1", model: "m", choices: [choice] })}\n\n`;
  };
  let sse = chunk({ role: "assistant" }, null);
  if (typeof message.content === "string") sse += chunk({ content: message.content }, null);
  (message.tool_calls ?? []).forEach((call, index) => {
    const args = call.function.arguments;
    sse += chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name } }] });
    sse += chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, 3) } }] });
    sse += chunk({ tool_calls: [{ index, function: { arguments: args.slice(3) } }] });
  });
  sse += chunk({}, finish);
  sse += `data: ${JSON.stringify({ id: "chatcmpl-1", model: "m", choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } })}\n\n`;
  sse += "data: [DONE]\n\n";
  const decoder = createOpenAIStreamDecoder();
  return accumulate([...parseSse(sse).flatMap((sseMessage) => decoder.push(sseMessage)), ...decoder.finish()]);
}

const cases: Array<[string, OpenAIMessage, string | null | undefined, string, string]> = [
  // name, message, finish_reason, Anthropic stop_reason, OpenAI client's finish_reason
  [
    "tool calls that finished with stop",
    { role: "assistant", content: null, tool_calls: [toolCall] },
    "stop",
    "tool_use",
    "tool_calls",
  ],
  [
    "tool calls with a null finish_reason",
    { role: "assistant", content: "Checking.", tool_calls: [toolCall] },
    null,
    "tool_use",
    "tool_calls",
  ],
  [
    "tool calls with no finish_reason at all",
    { role: "assistant", content: null, tool_calls: [toolCall] },
    undefined,
    "tool_use",
    "tool_calls",
  ],
  [
    "tool calls with a made-up finish_reason",
    { role: "assistant", content: null, tool_calls: [toolCall] },
    "eos",
    "tool_use",
    "tool_calls",
  ],
  ["text with a null finish_reason", { role: "assistant", content: "Hello." }, null, "end_turn", "stop"],
  ["text with no finish_reason at all", { role: "assistant", content: "Hello." }, undefined, "end_turn", "stop"],
  [
    "tool calls cut at the token limit",
    { role: "assistant", content: null, tool_calls: [toolCall] },
    "length",
    "max_tokens",
    "length",
  ],
  [
    "tool calls stopped by a content filter",
    { role: "assistant", content: null, tool_calls: [toolCall] },
    "content_filter",
    "refusal",
    "content_filter",
  ],
];

describe("finish reasons upstreams really send", () => {
  test.each(cases)("%s", (_name, message, finish, anthropicStopReason, openaiFinishReason) => {
    const fromWhole = openaiResponseToCore(whole(message, finish)).value;
    const fromStream = streamed(message, finish);
    for (const response of [fromWhole, fromStream]) {
      // The raw value is kept beside the mapped one.
      expect(response.stopReason).toEqual({ unified: anthropicStopReason, raw: finish ?? null });
      expect(coreToAnthropicResponse(response).value.stop_reason).toBe(anthropicStopReason);
      expect(coreToOpenAIResponse(response).value.choices[0]?.finish_reason).toBe(openaiFinishReason);
    }
    expect(fromStream.message).toEqual(fromWhole.message);

    // The streams the clients get say the same.
    const events = [
      { type: "message-start" as const, id: "msg_1", model: "m" },
      { type: "finish" as const, stopReason: fromStream.stopReason, usage: fromStream.usage },
    ];
    const anthropic = createAnthropicStreamEncoder();
    expect(events.map((event) => anthropic.encode(event)).join("")).toContain(`"stop_reason":"${anthropicStopReason}"`);
    const openai = createOpenAIStreamEncoder({ model: "m" });
    expect(events.map((event) => openai.encode(event)).join("")).toContain(`"finish_reason":"${openaiFinishReason}"`);
  });
});
