import type { ConversationResponse, LossyEntry } from "../core/index.js";
import { coreToAnthropicResponse } from "../formats/anthropic/from-core.js";
import type { ReasoningMode } from "../formats/openai-chat/compat.js";
import { coreToOpenAIResponse } from "../formats/openai-chat/from-core.js";

/**
 * What a streamed answer could not carry to a client in `format`: what converting the same answer whole
 * reports (a stream gives what the whole conversion gives), and tool arguments that are not JSON: repaired
 * for an Anthropic client (its encoder sends each input whole, as an object), passed on as they came in
 * an OpenAI client's `arguments` string.
 */
export function answerLossy(
  answer: ConversationResponse,
  format: "anthropic" | "openai",
  reasoning: ReasoningMode,
): LossyEntry[] {
  const lossy =
    format === "anthropic" ? coreToAnthropicResponse(answer).lossy : coreToOpenAIResponse(answer, { reasoning }).lossy;
  answer.message.parts.forEach((part, index) => {
    if (part.type !== "tool_call" || part.rawInput === undefined) return;
    const path = `message.content[${index}]`;
    lossy.push(
      format === "anthropic"
        ? {
            code: "tool-arguments-repaired",
            message: `tool call '${part.name}' arguments were not valid JSON; the input was repaired`,
            path,
          }
        : {
            code: "tool-arguments-not-json",
            message: `tool call '${part.name}' arguments are not valid JSON; streamed as received`,
            path,
          },
    );
  });
  return lossy;
}
