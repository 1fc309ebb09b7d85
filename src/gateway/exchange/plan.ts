import type { ConversationRequest, LossyEntry, Message } from "../../core/index.js";
import { type RepairEntry, repair } from "../../repair/index.js";
import { replaceTopLevelString } from "../../text/json-splice.js";
import { coreToAnthropicMessages, coreToAnthropicRequest, coreToOpenAIRequest } from "./codecs.js";
import type { ProviderRuntime } from "./providers.js";

/** A client's request, read and converted, before it is planned for a provider. */
export interface ClientRequest {
  format: "anthropic" | "openai";
  clientModel: string;
  stream: boolean;
  /** The request in the canonical model, stored history already in front of the client's messages. */
  core: ConversationRequest;
  /** The client's Anthropic body exactly as parsed, for passing through to an Anthropic upstream. */
  rawAnthropic?: Record<string, unknown>;
  /** That body's text as sent: with nothing to repair it goes on as is, only `model` renamed. */
  rawAnthropicText?: string;
  /** How many stored messages were put in front (0 without a conversation). */
  historyCount: number;
  /** What reading the client's request could not carry. */
  lossy: LossyEntry[];
  /** OpenAI clients: `stream_options.include_usage`. */
  includeUsage?: boolean;
}

export interface UpstreamPlan {
  body: Record<string, unknown>;
  /** The body's text when it is the client's own, byte for byte; otherwise the body is serialised. */
  bodyText?: string;
  lossy: LossyEntry[];
  repair: RepairEntry[];
}

/**
 * The body to send to the provider. History is repaired for the provider's API first; for an Anthropic
 * client and an Anthropic provider with nothing to repair, the client's own JSON goes through with only `model`
 * renamed (invariant 8: blocks, signatures and unknown fields byte-for-byte).
 */
export function planUpstream(request: ClientRequest, provider: ProviderRuntime, upstreamModel: string): UpstreamPlan {
  if (provider.config.type === "anthropic") return planAnthropic(request, provider, upstreamModel);
  const repaired = repair(request.core.messages, provider.connection.repairTarget);
  const converted = coreToOpenAIRequest(
    { ...request.core, model: upstreamModel, messages: repaired.messages, stream: request.stream },
    { reasoning: provider.reasoning, compat: provider.compat, provider: provider.config.name },
  );
  const body = converted.value as unknown as Record<string, unknown>;
  if (request.stream && body.stream_options === undefined && provider.compat.streamUsage !== false) {
    // Usage arrives only when asked for; clients' context meters depend on it.
    body.stream_options = { include_usage: true };
  }
  return { body, lossy: converted.lossy, repair: repaired.report };
}

function planAnthropic(request: ClientRequest, provider: ProviderRuntime, upstreamModel: string): UpstreamPlan {
  const repaired = repair(request.core.messages, provider.connection.repairTarget);
  const raw = request.rawAnthropic;
  if (raw === undefined) {
    const converted = coreToAnthropicRequest({
      ...hoistLeadingSystem({ ...request.core, messages: repaired.messages }),
      model: upstreamModel,
      stream: request.stream,
    });
    return {
      body: converted.value as unknown as Record<string, unknown>,
      lossy: converted.lossy,
      repair: repaired.report,
    };
  }
  if (repaired.report.length === 0 && request.historyCount === 0) {
    const plan: UpstreamPlan = { body: { ...raw, model: upstreamModel }, lossy: [], repair: [] };
    const text = request.rawAnthropicText;
    const bodyText =
      text === undefined || raw.model !== request.clientModel
        ? undefined
        : upstreamModel === request.clientModel
          ? text
          : replaceTopLevelString(text, "model", upstreamModel);
    if (bodyText !== undefined) plan.bodyText = bodyText;
    return plan;
  }
  if (repaired.report.length === 0) {
    // Only the stored history is converted; the client's new messages still go through as sent.
    const history = coreToAnthropicMessages(request.core.messages.slice(0, request.historyCount));
    const clientMessages = Array.isArray(raw.messages) ? raw.messages : [];
    return {
      body: { ...raw, model: upstreamModel, messages: [...history.value, ...clientMessages] },
      lossy: history.lossy,
      repair: [],
    };
  }
  const converted = coreToAnthropicMessages(repaired.messages as Message[]);
  return {
    body: { ...raw, model: upstreamModel, messages: converted.value },
    lossy: converted.lossy,
    repair: repaired.report,
  };
}

/**
 * OpenAI clients put the system prompt first among the messages; Anthropic's place for it is `system`, which
 * every Anthropic-compatible server reads (not all of them take a `system` message in place).
 */
function hoistLeadingSystem(request: ConversationRequest): ConversationRequest {
  let count = 0;
  while (request.messages[count]?.role === "system") count++;
  if (count === 0 || request.system !== undefined) return request;
  const parts = request.messages.slice(0, count).flatMap((message) => message.parts);
  return { ...request, system: { role: "system", parts }, messages: request.messages.slice(count) };
}
