import type { RepairTarget } from "../../formats/adapter.js";
import { formatAdapter } from "../../formats/registry.js";

/** What the Anthropic Messages API takes. */
export const anthropicTarget: RepairTarget = formatAdapter("anthropic").upstream.repairTarget;

/** What an OpenAI-compatible provider with these quirks takes, as its connection gives it. */
export function openaiTarget(
  compat: { strictToolMessageOrder?: boolean; requiresReasoningOnToolCallTurns?: boolean } = {},
  provider = "test",
): RepairTarget {
  return formatAdapter("openai").upstream.connect({
    name: provider,
    baseUrl: "http://127.0.0.1:1/v1",
    compat,
    headers: {},
  }).repairTarget;
}
