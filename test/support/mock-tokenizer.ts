import { encode } from "gpt-tokenizer/encoding/o200k_base";

/**
 * The scripted servers' tokenizer: deterministic, so that a test knows the count a server gives before it asks.
 * Text is o200k_base (gpt-tokenizer, the BPE Parley's own estimate uses, so the two differ only by what a template
 * adds); the chat markers and the image placeholders are one token each, with Qwen's ids, as a model's special
 * tokens are. `<|endoftext|>` and its like in user text count as text, never as a special token.
 */
const SPECIAL: Record<string, number> = {
  "<|im_start|>": 151_644,
  "<|im_end|>": 151_645,
  "<|vision_start|>": 151_652,
  "<|vision_end|>": 151_653,
  "<|image_pad|>": 151_655,
};
const SPECIAL_PATTERN = /(<\|im_start\|>|<\|im_end\|>|<\|vision_start\|>|<\|vision_end\|>|<\|image_pad\|>)/;
const TEXT_ONLY = { disallowedSpecial: new Set<string>() };

export function mockTokenize(text: string): number[] {
  const tokens: number[] = [];
  for (const piece of text.split(SPECIAL_PATTERN)) {
    if (piece === "") continue;
    const special = SPECIAL[piece];
    if (special !== undefined) tokens.push(special);
    else tokens.push(...encode(piece, TEXT_ONLY));
  }
  return tokens;
}

export function mockTokenCount(text: string): number {
  return mockTokenize(text).length;
}

type ChatMessage = {
  role?: string;
  content?: unknown;
  reasoning?: unknown;
  reasoning_content?: unknown;
  tool_calls?: Array<{ function?: { name?: string; arguments?: string } }>;
};

/**
 * Chat messages as a Qwen-style ChatML template renders them (the shape of Qwen3-Coder's, which vLLM serves in the
 * recipes): tools in the system turn as JSON lines inside `<tools>`, calls as `<tool_call>` JSON, results as
 * `<tool_response>` in a user turn, an image as its placeholder, reasoning in `<think>`, the generation prompt last.
 */
export function renderChatML(body: {
  messages?: ChatMessage[];
  tools?: unknown[];
  add_generation_prompt?: boolean;
}): string {
  const messages = body.messages ?? [];
  let out = "";
  let rest = messages;
  if (body.tools !== undefined && body.tools.length > 0) {
    const first = messages[0];
    const system = first?.role === "system" ? contentText(first.content) : "";
    if (first?.role === "system") rest = messages.slice(1);
    out += `<|im_start|>system\n${system === "" ? "" : `${system}\n\n`}# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n`;
    out += body.tools.map((tool) => JSON.stringify(tool)).join("\n");
    out +=
      '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';
  }
  for (const message of rest) {
    if (message.role === "tool") {
      out += `<|im_start|>user\n<tool_response>\n${contentText(message.content)}\n</tool_response><|im_end|>\n`;
      continue;
    }
    const role = message.role === "developer" ? "system" : (message.role ?? "user");
    out += `<|im_start|>${role}\n`;
    const reasoning = message.reasoning ?? message.reasoning_content;
    if (role === "assistant" && typeof reasoning === "string" && reasoning !== "")
      out += `<think>\n${reasoning}\n</think>\n\n`;
    out += contentText(message.content);
    for (const call of message.tool_calls ?? []) {
      out += `\n<tool_call>\n{"name": ${JSON.stringify(call.function?.name ?? "")}, "arguments": ${call.function?.arguments ?? "{}"}}\n</tool_call>`;
    }
    out += "<|im_end|>\n";
  }
  if (body.add_generation_prompt !== false) out += "<|im_start|>assistant\n";
  return out;
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: { type?: string; text?: string }) =>
      part.type === "text"
        ? (part.text ?? "")
        : part.type === "image_url"
          ? "<|vision_start|><|image_pad|><|vision_end|>"
          : "",
    )
    .join("");
}
