import type { ConversationRequest, LossyEntry } from "../../core/index.js";
import type { ResolvedLimits } from "./catalogue.js";

/**
 * The prompt estimate is a one-pass approximation of o200k_base (see docs/gateway.md), and open models' tokenizers
 * and chat templates count differently: the room left for the answer is taken as the window less the estimate
 * times this, less `PROMPT_SLACK` tokens for the template's own framing.
 */
export const PROMPT_MARGIN = 1.2;
export const PROMPT_SLACK = 1_024;

export interface Fitted {
  request: ConversationRequest;
  lossy: LossyEntry[];
}

/**
 * Lowers a `max_tokens` the model cannot honour: above its output limit, or above what its context window leaves
 * after the prompt. Servers answer both with a 400 ("'max_tokens' is too large", "Invalid max_tokens value"), which
 * clients show as "prompt is too long"; lowered, the request goes through and the answer is cut at a length the
 * model can write. Each change is reported. A prompt that alone fills the window is left to the upstream, whose
 * "maximum context length" error clients recognise and compact on.
 */
export function fitMaxTokens(
  request: ConversationRequest,
  model: string,
  limits: ResolvedLimits,
  estimatePrompt: () => number,
): Fitted {
  const requested = request.maxTokens;
  if (requested === undefined) return { request, lossy: [] };
  let allowed = requested;
  let reason = "";
  if (limits.maxOutputTokens !== undefined && allowed > limits.maxOutputTokens) {
    allowed = limits.maxOutputTokens;
    reason = `${model}'s output limit (from ${limits.outputSource})`;
  }
  if (limits.contextWindow !== undefined) {
    const prompt = estimatePrompt();
    const room = limits.contextWindow - Math.ceil(prompt * PROMPT_MARGIN) - PROMPT_SLACK;
    if (room >= 1 && allowed > room) {
      allowed = room;
      reason =
        `what ${model}'s context window of ${limits.contextWindow} tokens (from ${limits.contextSource}) leaves ` +
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
