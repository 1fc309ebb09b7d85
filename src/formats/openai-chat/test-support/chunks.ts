import { mergeReasoningDetails } from "../reasoning-details.js";
import type {
  OpenAIChatResponse,
  OpenAIMessage,
  OpenAIReasoningDetail,
  OpenAIToolCall,
  OpenAIToolCallDelta,
} from "../wire-types.js";

/**
 * Rebuilds the whole response a server would have sent for these chunks (what the OpenAI SDK's
 * accumulator does: strings concatenate; a tool call is keyed by index, and a new id opens a new one).
 */
// biome-ignore lint/suspicious/noExplicitAny: test support reads loose recorded JSON
export function rebuildResponse(chunks: any[]): OpenAIChatResponse {
  // biome-ignore lint/suspicious/noExplicitAny: as above
  const message: Record<string, any> = { role: "assistant" };
  const details: OpenAIReasoningDetail[] = [];
  const calls: OpenAIToolCall[] = [];
  const slots = new Map<number, OpenAIToolCall>();
  let id = "";
  let model = "";
  let finish: string | null = null;
  let usage: unknown;
  for (const chunk of chunks) {
    if (chunk.error) break;
    if (!id && chunk.id) id = chunk.id;
    if (!model && chunk.model) model = chunk.model;
    if (chunk.usage) usage = chunk.usage;
    else if (chunk.x_groq?.usage) usage = chunk.x_groq.usage;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const delta = choice.delta ?? {};
    for (const key of ["reasoning_content", "reasoning", "refusal"]) {
      if (typeof delta[key] === "string") message[key] = (message[key] ?? "") + delta[key];
    }
    if (Array.isArray(delta.reasoning_details)) mergeReasoningDetails(details, delta.reasoning_details);
    if (typeof delta.content === "string" && !Array.isArray(message.content))
      message.content = (message.content ?? "") + delta.content;
    else if (Array.isArray(delta.content))
      message.content = [...(Array.isArray(message.content) ? message.content : []), ...delta.content];
    (delta.tool_calls ?? []).forEach((call: OpenAIToolCallDelta, position: number) => {
      const index = typeof call.index === "number" ? call.index : position;
      let slot = slots.get(index);
      if (slot === undefined || (call.id && call.id !== slot.id)) {
        slot = {
          id: call.id ?? `call_${calls.length}`,
          type: "function",
          function: { name: call.function?.name ?? "", arguments: "" },
        };
        slots.set(index, slot);
        calls.push(slot);
      }
      slot.function.arguments += call.function?.arguments ?? "";
    });
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  for (const key of ["reasoning_content", "reasoning"]) if (message[key] === "") delete message[key];
  if (details.length > 0) message.reasoning_details = details;
  if (calls.length > 0) message.tool_calls = calls;
  return {
    id,
    object: "chat.completion",
    created: 0,
    model,
    choices: [{ index: 0, message: message as OpenAIMessage, finish_reason: finish }],
    usage: usage as never,
  };
}
