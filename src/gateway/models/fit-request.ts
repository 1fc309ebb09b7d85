import { type ConversationRequest, InvalidRequestError, type LossyEntry } from "../../core/index.js";
import type { ResolvedLimits } from "./catalogue.js";

/**
 * The prompt estimate is a one-pass approximation of o200k_base (see docs/gateway.md), and open models' tokenizers
 * and chat templates count differently: of what the window leaves after the prompt, the answer gets all but a
 * reserve for that difference, the estimate times `PROMPT_MARGIN - 1` plus `PROMPT_SLACK` tokens for the template's
 * own framing, and never less than half of it.
 */
export const PROMPT_MARGIN = 1.2;
export const PROMPT_SLACK = 1_024;

/**
 * How far above the o200k_base count the one-pass approximation runs at most (1.0 on prose, up to 1.35 on tool
 * schemas: `token-count-accuracy.test.ts`): without the tokenizer, the approximation divided by this is the count
 * a refusal rests on.
 */
export const APPROXIMATION_OVERCOUNT = 1.35;

/** The prompt's size in tokens, two ways. */
export interface PromptCount {
  /** The one-pass approximation, cheap enough for every request. */
  approximate(): number;
  /** The o200k_base count (the tokenizer, on its own thread), asked only when the approximation fills the window. */
  exact(): Promise<number>;
}

export interface Fitted {
  request: ConversationRequest;
  lossy: LossyEntry[];
}

/**
 * Fits a request to its model's limits. A prompt that alone fills the model's known window, by Parley's count, is
 * refused at once with the client's own context-overflow error (a `ContextOverflow`), which clients compact on,
 * rather than sent to a server that refuses it or (Ollama) silently cuts it. A `max_tokens` the model cannot honour
 * (above its output limit, or above what its window leaves after the prompt) is lowered: servers answer it with a
 * 400 ("'max_tokens' is too large", "Invalid max_tokens value") that clients show as "prompt is too long". Each
 * change is reported.
 *
 * The refusal rests on the o200k_base count of the prompt's text, asked for only when the approximation reaches
 * the window: that count measured at most 1.12 of a provider's own (docs/gateway.md), and open models' templates add
 * tokens it does not see, so a prompt it puts over the window is over it for the server too. A prompt the count
 * puts just under goes on with what is left for the answer, and a server that counts it over answers with its own
 * overflow error, which reaches the client in the same words (`src/upstream/context-overflow.ts`).
 */
export async function fitRequest(
  request: ConversationRequest,
  model: string,
  limits: ResolvedLimits,
  count: PromptCount,
): Promise<Fitted> {
  const window = limits.contextWindow;
  let prompt: number | undefined;
  if (window !== undefined) {
    prompt = count.approximate();
    if (prompt >= window) prompt = await exactCount(count, prompt);
    if (prompt >= window) {
      throw new InvalidRequestError(
        `the prompt is ${prompt} tokens by Parley's count, and ${model}'s context window is ${window} tokens ` +
          `(from ${limits.contextSource ?? "the configuration"})`,
        "messages",
        { contextOverflow: { promptTokens: prompt, contextWindow: window } },
      );
    }
  }
  const requested = request.maxTokens;
  if (requested === undefined) return { request, lossy: [] };
  let allowed = requested;
  let reason = "";
  if (limits.maxOutputTokens !== undefined && allowed > limits.maxOutputTokens) {
    allowed = limits.maxOutputTokens;
    reason = `${model}'s output limit (from ${limits.outputSource})`;
  }
  if (window !== undefined && prompt !== undefined) {
    const room = answerRoom(window, prompt);
    if (allowed > room) {
      allowed = room;
      reason =
        `what ${model}'s context window of ${window} tokens (from ${limits.contextSource}) leaves ` +
        `after a prompt of about ${prompt} tokens`;
    }
  }
  if (allowed === requested) return { request, lossy: [] };
  const fitted: ConversationRequest = { ...request, maxTokens: allowed };
  let budgetNote = "";
  const budget = request.thinking?.budgetTokens;
  if (request.thinking !== undefined && budget !== undefined && budget >= allowed) {
    const lowered = Math.floor(allowed / 2);
    fitted.thinking = { ...request.thinking, budgetTokens: lowered };
    budgetNote = `; the thinking budget ${budget} with it, to ${lowered}`;
  }
  return {
    request: fitted,
    lossy: [
      {
        code: "max_tokens-lowered",
        message: `max_tokens ${requested} lowered to ${allowed}: ${reason}${budgetNote}`,
        path: "max_tokens",
      },
    ],
  };
}

/**
 * What the window leaves for the answer after a prompt of `prompt` tokens (less than the window): all of it but the
 * reserve for miscounting, which takes at most half, so that a prompt near the window still leaves an answer room
 * (at least one token) and a longer prompt never leaves more.
 */
export function answerRoom(window: number, prompt: number): number {
  const left = window - prompt;
  const reserve = Math.min(Math.ceil(prompt * (PROMPT_MARGIN - 1)) + PROMPT_SLACK, Math.floor(left / 2));
  return left - reserve;
}

/** The tokenizer's count; without the tokenizer (a library install without the package), the approximation's floor. */
async function exactCount(count: PromptCount, approximation: number): Promise<number> {
  try {
    return await count.exact();
  } catch {
    return Math.floor(approximation / APPROXIMATION_OVERCOUNT);
  }
}
