/**
 * Providers that speak the Anthropic Messages API, as data: guessed from the base URL, or named in the
 * configuration (`preset`). The ids are the providers' (the same as their OpenAI-compatible endpoints'), so that
 * what is known of a provider (its models' limits) is found under one name whichever API reaches it.
 */
export interface AnthropicPreset {
  id: string;
  /**
   * Whose thinking signatures its answers carry. `anthropic`: Anthropic's own, which Anthropic checks wherever they
   * come back (its API, Bedrock, Vertex). `own`: the provider's own, or made up (vLLM's `uuid4().hex`), which only it
   * can take back and Anthropic answers with 400 "Invalid signature". `unknown`: a server Parley does not know, taken
   * at its word while it is the gateway's only Anthropic-format provider, and as `own` beside others.
   */
  signatures: "anthropic" | "own" | "unknown";
}

/** The base URL each provider documents for its Anthropic endpoint is in docs/configuration.md. */
const PRESET_TABLE = {
  /** api.anthropic.com, or a proxy that forwards to it unchanged. */
  anthropic: { id: "anthropic", signatures: "anthropic" },
  /** api.deepseek.com/anthropic: its signatures break a session resumed on Anthropic. */
  deepseek: { id: "deepseek", signatures: "own" },
  /** api.moonshot.ai/anthropic, api.kimi.com/coding. */
  kimi: { id: "kimi", signatures: "own" },
  /** api.z.ai/api/anthropic (open.bigmodel.cn/api/anthropic): keeps replayed thinking, unlike its OpenAI endpoint. */
  glm: { id: "glm", signatures: "own" },
  /** api.minimax.io/anthropic. */
  minimax: { id: "minimax", signatures: "own" },
  /** openrouter.ai/api: routes to many models, and splits a signature from its thinking at times. */
  openrouter: { id: "openrouter", signatures: "own" },
  /** vLLM's `/v1/messages` makes signatures up. */
  vllm: { id: "vllm", signatures: "own" },
  /** Self-hosted NIM 2.0 serves `/v1/messages` with vLLM inside. */
  "nvidia-nim": { id: "nvidia-nim", signatures: "own" },
  sglang: { id: "sglang", signatures: "own" },
  llamacpp: { id: "llamacpp", signatures: "own" },
  ollama: { id: "ollama", signatures: "own" },
  /** A server Parley does not know. */
  generic: { id: "generic", signatures: "unknown" },
} satisfies Record<string, AnthropicPreset>;

/** The name of an Anthropic-format preset. */
export type AnthropicPresetName = keyof typeof PRESET_TABLE;

export const ANTHROPIC_PRESETS: Readonly<Record<string, AnthropicPreset>> = PRESET_TABLE;

/** Every preset's name, in the table's order. */
export const ANTHROPIC_PRESET_NAMES = /* @__PURE__ */ Object.keys(PRESET_TABLE) as readonly AnthropicPresetName[];

const hostRules: Array<[RegExp, string]> = [
  [/^api\.anthropic\.com$/, "anthropic"],
  [/api\.deepseek\.com/, "deepseek"],
  [/api\.moonshot\.(ai|cn)|api\.kimi\.com/, "kimi"],
  [/api\.z\.ai|open\.bigmodel\.cn/, "glm"],
  [/api\.minimaxi?\.(io|com|chat)/, "minimax"],
  [/openrouter\.ai/, "openrouter"],
];

/** The local servers' usual ports, as for their OpenAI-compatible endpoints. */
const portRules: Array<[string, string]> = [
  ["11434", "ollama"],
  ["8000", "vllm"],
  ["30000", "sglang"],
  ["8080", "llamacpp"],
];

/** The named preset, or the one the base URL points to; undefined for a name that is not a preset. */
export function anthropicPreset(preset: string | undefined, baseUrl: string): AnthropicPreset | undefined {
  if (preset !== undefined) return Object.hasOwn(ANTHROPIC_PRESETS, preset) ? ANTHROPIC_PRESETS[preset] : undefined;
  let host = baseUrl;
  let port = "";
  try {
    const url = new URL(baseUrl);
    host = url.hostname;
    port = url.port;
  } catch {
    // Not a URL: match the text as given.
  }
  for (const [pattern, id] of hostRules) if (pattern.test(host)) return ANTHROPIC_PRESETS[id];
  for (const [wanted, id] of portRules) if (port === wanted) return ANTHROPIC_PRESETS[id];
  return ANTHROPIC_PRESETS.generic;
}
