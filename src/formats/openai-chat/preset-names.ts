/**
 * The OpenAI-compatible presets' names, apart from their settings (`compat.ts`, whose table must have exactly these):
 * what checks a preset's name, or records it as a provider, need not carry the table.
 */
export const OPENAI_PRESET_NAMES = [
  "generic",
  "nvidia-nim",
  "vllm",
  "sglang",
  "llamacpp",
  "ollama",
  "lmstudio",
  "deepseek",
  "kimi",
  "glm",
  "minimax",
  "openrouter",
  "openai",
  "gemini-openai",
  "vertex-openai",
] as const;

export type OpenAIPresetName = (typeof OPENAI_PRESET_NAMES)[number];
