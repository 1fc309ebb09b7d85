import type { ContextOverflow } from "../core/index.js";

/**
 * How servers say that a prompt does not fit the model's context window, as data: a client recognises only its own
 * API's words (Claude Code compacts on `prompt is too long`, Codex and the OpenAI SDK on `context_length_exceeded`),
 * so an upstream's own are read here, numbers and all, and each client's API words them again (its `errorBody`).
 * A new server is one row.
 */
interface OverflowWording {
  /** Who says it this way, for the reader. */
  server: string;
  pattern: RegExp;
  /** The capture groups holding the prompt's tokens and the window, where the wording has them. */
  prompt?: number;
  window?: number;
}

const WORDINGS: readonly OverflowWording[] = [
  {
    // {"error":{"code":400,"type":"exceed_context_size_error","n_prompt_tokens":N,"n_ctx":M,"message":...}}
    server: "llama.cpp",
    pattern: /request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/,
    prompt: 1,
    window: 2,
  },
  {
    server: "vLLM, DeepSeek, OpenAI (completion tokens included in N)",
    pattern: /maximum context length is (\d+) tokens\. However, you requested (\d+) tokens/,
    window: 1,
    prompt: 2,
  },
  {
    server: "OpenAI",
    pattern: /maximum context length is (\d+) tokens\. However, your messages resulted in (\d+) tokens/,
    window: 1,
    prompt: 2,
  },
  {
    server: "vLLM (0.10 and later)",
    pattern: /maximum context length is (\d+) tokens\. However, your request has (\d+) input tokens/,
    window: 1,
    prompt: 2,
  },
  { server: "Anthropic", pattern: /prompt is too long: (\d+) tokens > (\d+) maximum/, prompt: 1, window: 2 },
  {
    server: "SGLang",
    pattern: /input \((\d+) tokens\) is longer than the model's context length \((\d+) tokens\)/,
    prompt: 1,
    window: 2,
  },
  {
    server: "Text Generation Inference",
    pattern: /`inputs` tokens \+ `max_new_tokens` must be <= (\d+)\. Given: (\d+) `inputs` tokens/,
    window: 1,
    prompt: 2,
  },
  {
    server: "Mistral",
    pattern: /Prompt contains (\d+) tokens.*? too large for model with (\d+) maximum context length/,
    prompt: 1,
    window: 2,
  },
  {
    server: "Gemini",
    pattern: /input token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)/,
    prompt: 1,
    window: 2,
  },
  {
    server: "LM Studio",
    pattern: /keep the first (\d+) tokens .*? context length of only (\d+) tokens/,
    prompt: 1,
    window: 2,
  },
  // Without numbers: the window alone, then wordings that only say it.
  { server: "OpenAI-compatible servers", pattern: /maximum context length is (\d+) tokens/, window: 1 },
  { server: "llama.cpp (older)", pattern: /exceeds the available context size/ },
  {
    server: "Ollama and others",
    pattern: /(?:input|prompt) (?:length )?exceeds (?:the )?(?:maximum )?context length/i,
  },
  { server: "OpenAI Responses", pattern: /exceeds the context window of this model/ },
];

/** Error codes and types that say it whatever the message: OpenAI's (Groq, Azure...), llama.cpp's. */
const CODES: ReadonlySet<string> = new Set(["context_length_exceeded", "exceed_context_size_error"]);

/**
 * The context overflow an upstream's error body reports, with its numbers where it gives them; undefined when the
 * body says nothing of the kind. Only the error's own message, code and type are read (never the whole body, which
 * may quote the prompt).
 */
export function contextOverflowIn(bodyText: string): ContextOverflow | undefined {
  const error = errorObject(bodyText);
  const message = error?.message ?? bodyText.slice(0, 2_000);
  const coded = error !== undefined && (CODES.has(String(error.code)) || CODES.has(String(error.type)));
  for (const wording of WORDINGS) {
    const match = wording.pattern.exec(message);
    if (match === null) continue;
    const overflow: ContextOverflow = { ...countsOf(error) };
    if (wording.prompt !== undefined) overflow.promptTokens ??= Number(match[wording.prompt]);
    if (wording.window !== undefined) overflow.contextWindow ??= Number(match[wording.window]);
    return overflow;
  }
  return coded ? countsOf(error) : undefined;
}

interface ErrorObject {
  message?: string;
  code?: unknown;
  type?: unknown;
  n_prompt_tokens?: unknown;
  n_ctx?: unknown;
}

/** The error object of an OpenAI-style (`{error:{...}}`), Anthropic-style or bare body; undefined for other text. */
function errorObject(bodyText: string): ErrorObject | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== "object") return undefined;
  const outer = parsed as Record<string, unknown>;
  const inner = outer.error !== null && typeof outer.error === "object" ? (outer.error as ErrorObject) : undefined;
  const object = inner ?? (outer as ErrorObject);
  const message =
    typeof object.message === "string"
      ? object.message
      : typeof outer.message === "string"
        ? outer.message
        : typeof outer.error === "string"
          ? outer.error
          : undefined;
  return message === undefined ? { ...object, message: "" } : { ...object, message };
}

/** llama.cpp's own fields, which hold the counts whatever its message says. */
function countsOf(error: ErrorObject | undefined): ContextOverflow {
  const counts: ContextOverflow = {};
  if (typeof error?.n_prompt_tokens === "number") counts.promptTokens = error.n_prompt_tokens;
  if (typeof error?.n_ctx === "number") counts.contextWindow = error.n_ctx;
  return counts;
}
