import type { TextToolCallFormat } from "../../text/text-tool-calls/index.js";

import type { ReasoningMode } from "../adapter.js";

export type { ReasoningMode } from "../adapter.js";

/** How a server is told to think. */
export type ThinkingSwitch =
  | { type: "none" }
  /** vLLM / SGLang / NIM chat templates: `chat_template_kwargs: {enable_thinking}`. */
  | { type: "chat_template_kwargs" }
  | { type: "reasoning_effort" }
  /** DeepSeek, Z.ai, Moonshot: `thinking: {type: "enabled" | "disabled"}`. */
  | { type: "thinking" }
  /** Ollama: `think: true | false`. */
  | { type: "ollama_think" }
  /** NVIDIA Nemotron: a system prompt `detailed thinking on | off`. */
  | { type: "nemotron_system_prompt" }
  /** OpenRouter: `reasoning: {max_tokens} | {enabled}`. */
  | { type: "openrouter_reasoning" };

/** Provider quirks as data: guessed from the base URL, overridable in config. */
export interface OpenAICompat {
  id: string;
  /** Where this provider's own reasoning is sent back. */
  reasoningMode: ReasoningMode;
  thinkingSwitch: ThinkingSwitch;
  /** Tool messages must directly follow the assistant's tool_calls (api.openai.com enforces it). */
  strictToolMessageOrder: boolean;
  supportsToolChoice: boolean;
  supportsImages: boolean;
  /** Almost nobody takes Anthropic `cache_control`: stripped and reported. */
  supportsCacheControl: boolean;
  maxTokensField: "max_tokens" | "max_completion_tokens";
  maxTokensCap?: number;
  /** The server leaves tool calls as text in `content` in this syntax. */
  textToolCallFormat?: TextToolCallFormat;
  /** Every earlier assistant tool-call message must carry non-empty reasoning (Kimi, DeepSeek). */
  requiresReasoningOnToolCallTurns: boolean;
  /** Send `stream_options.include_usage` so the last chunk carries usage. */
  streamUsage: boolean;
}

const base: Omit<OpenAICompat, "id"> = {
  reasoningMode: "think-tags",
  thinkingSwitch: { type: "none" },
  strictToolMessageOrder: false,
  supportsToolChoice: true,
  supportsImages: true,
  supportsCacheControl: false,
  maxTokensField: "max_tokens",
  requiresReasoningOnToolCallTurns: false,
  streamUsage: true,
};

/** Values from the protocol notes, sections C (reasoning) and B (OpenAI rules); the source is named per preset. */
export const PRESETS: Readonly<Record<string, OpenAICompat>> = {
  /** Unknown OpenAI-compatible server: inline tags are the one form every chat template reads. */
  generic: { id: "generic", ...base },
  /** NIM: `reasoning_content`; thinking via chat_template_kwargs (Nemotron uses the system prompt: override). */
  "nvidia-nim": {
    id: "nvidia-nim",
    ...base,
    reasoningMode: "reasoning_content",
    thinkingSwitch: { type: "chat_template_kwargs" },
  },
  /** vLLM renamed `reasoning_content` to `reasoning` (PR #27752) and its interleaved-thinking example sends `reasoning`. */
  vllm: { id: "vllm", ...base, reasoningMode: "reasoning", thinkingSwitch: { type: "chat_template_kwargs" } },
  /** SGLang `--reasoning-parser`: `reasoning_content`; Qwen3 `enable_thinking`. */
  sglang: {
    id: "sglang",
    ...base,
    reasoningMode: "reasoning_content",
    thinkingSwitch: { type: "chat_template_kwargs" },
  },
  /** llama-server `--reasoning-format deepseek` reads `reasoning_content`; images depend on the model. */
  llamacpp: { id: "llamacpp", ...base, reasoningMode: "reasoning_content", thinkingSwitch: { type: "none" } },
  /** LM Studio: reasoning models answer in `reasoning_content`; no thinking switch of its own. */
  lmstudio: { id: "lmstudio", ...base, reasoningMode: "reasoning_content", thinkingSwitch: { type: "none" } },
  /** Ollama's OpenAI endpoint answers with `reasoning`; the native `think` switch is accepted there too. */
  ollama: { id: "ollama", ...base, reasoningMode: "reasoning", thinkingSwitch: { type: "ollama_think" } },
  /** DeepSeek: `reasoning_content` must come back on tool-call turns, else 400. */
  deepseek: {
    id: "deepseek",
    ...base,
    reasoningMode: "reasoning_content",
    thinkingSwitch: { type: "thinking" },
    supportsImages: false,
    requiresReasoningOnToolCallTurns: true,
  },
  /** Moonshot Kimi: "reasoning_content is missing in assistant tool call message" 400; `""` is rejected too. */
  kimi: {
    id: "kimi",
    ...base,
    reasoningMode: "reasoning_content",
    thinkingSwitch: { type: "thinking" },
    requiresReasoningOnToolCallTurns: true,
  },
  /** Z.ai GLM: `reasoning_content`, `thinking: {type}`; preserved thinking goes back unmodified. */
  glm: { id: "glm", ...base, reasoningMode: "reasoning_content", thinkingSwitch: { type: "thinking" } },
  /** MiniMax native API keeps `<think>` inline in content and wants it back completely. */
  minimax: { id: "minimax", ...base, reasoningMode: "think-tags", thinkingSwitch: { type: "none" } },
  /** OpenRouter: `reasoning` + `reasoning_details`, details replayed complete. */
  openrouter: {
    id: "openrouter",
    ...base,
    reasoningMode: "reasoning_details",
    thinkingSwitch: { type: "openrouter_reasoning" },
  },
  /** api.openai.com: strict tool-message order, `max_completion_tokens`, no reasoning text to send back. */
  openai: {
    id: "openai",
    ...base,
    reasoningMode: "drop",
    thinkingSwitch: { type: "reasoning_effort" },
    strictToolMessageOrder: true,
    maxTokensField: "max_completion_tokens",
  },
};

const hostRules: Array<[RegExp, string]> = [
  [/integrate\.api\.nvidia\.com/, "nvidia-nim"],
  [/api\.deepseek\.com/, "deepseek"],
  [/api\.moonshot\.(ai|cn)/, "kimi"],
  [/api\.z\.ai|open\.bigmodel\.cn/, "glm"],
  [/api\.minimaxi?\.(io|com|chat)/, "minimax"],
  [/openrouter\.ai/, "openrouter"],
  [/api\.openai\.com/, "openai"],
];

const portRules: Array<[string, string]> = [
  ["11434", "ollama"],
  ["8000", "vllm"],
  ["30000", "sglang"],
  ["8080", "llamacpp"],
  ["1234", "lmstudio"],
];

/** Guesses the preset from the base URL; an unknown server gets `generic`. */
export function detectPreset(baseUrl: string): OpenAICompat {
  let host = baseUrl;
  let port = "";
  try {
    const url = new URL(baseUrl);
    host = url.hostname;
    port = url.port;
  } catch {
    // Not a URL: match the text as given.
  }
  for (const [pattern, id] of hostRules) if (pattern.test(host)) return presetOrGeneric(id);
  for (const [wanted, id] of portRules) if (port === wanted) return presetOrGeneric(id);
  return presetOrGeneric("generic");
}

/** A named preset (or the one guessed from the URL), with config overrides on top. */
export function resolveCompat(
  preset: string | undefined,
  baseUrl: string,
  overrides?: Partial<OpenAICompat>,
): OpenAICompat {
  const chosen = preset !== undefined ? PRESETS[preset] : undefined;
  if (preset !== undefined && chosen === undefined) {
    throw new Error(`unknown OpenAI-compatible preset '${preset}' (known: ${Object.keys(PRESETS).join(", ")})`);
  }
  const found = chosen ?? detectPreset(baseUrl);
  return { ...found, thinkingSwitch: { ...found.thinkingSwitch }, ...stripUndefined(overrides ?? {}) };
}

function presetOrGeneric(id: string): OpenAICompat {
  const found = PRESETS[id] ?? PRESETS.generic!;
  return { ...found, thinkingSwitch: { ...found.thinkingSwitch } };
}

function stripUndefined(overrides: Partial<OpenAICompat>): Partial<OpenAICompat> {
  return Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined));
}
