import { InvalidRequestError } from "../../core/index.js";
import {
  type ClientForwarding,
  type NotAnAnswer,
  type ProviderSettings,
  type RepairTarget,
  SettingError,
  type UpstreamConnection,
  type UpstreamSide,
} from "../adapter.js";
import { bearerDiscovery, bearerTarget } from "../forwarded.js";
import { refusesReasoning } from "../reasoning-refusal.js";
import { coreToResponsesRequest } from "./from-core.js";
import { streamErrorFromResponses } from "./status.js";
import { createResponsesStreamDecoder } from "./stream-decoder.js";
import { responsesResponseToCore } from "./to-core.js";

/**
 * What a Responses API refuses in a history: every call answered by its output (`No tool output found for function
 * call`), no output without its call. Outputs may sit anywhere before the next assistant turn. Thinking is the
 * encoder's to place: a provider's own reasoning goes back as its items, anything else as text.
 */
export const RESPONSES_REPAIR_TARGET: RepairTarget = {
  toolResultZone: "until-next-assistant",
  emptiness: "no-content",
  alternatingRoles: false,
  toolResultsFirst: false,
  noTrailingWhitespaceAtEnd: false,
  reasoningOnToolCallTurns: false,
};

/** Nothing of the client's own request goes to a Responses API: its body is all the API reads. */
const RESPONSES_FORWARDED: ClientForwarding = { headers: [], queryParameters: [] };

/** OpenAI's code for sealed reasoning (or a compaction) made under another organisation or key. */
export const RESPONSES_REASONING_REFUSALS: readonly RegExp[] = [
  /"code"\s*:\s*"invalid_encrypted_content"/,
  /encrypted content[^"]*could not be (?:decrypted|verified)/i,
];

/** Parley calling an OpenAI Responses API (OpenAI itself, or a server that speaks it: vLLM, NIM...). */
export const responsesUpstream: UpstreamSide = {
  type: "openai-responses",
  repairTarget: RESPONSES_REPAIR_TARGET,
  connect: connectResponses,
  encodeRequest: (request, options = {}) =>
    coreToResponsesRequest(request, { reasoning: options.reasoning === "drop" ? "drop" : "think-tags" }),
  decodeResponse: (body) => responsesResponseToCore(body),
  streamDecoder: () => createResponsesStreamDecoder(),
  notAnAnswer: responsesNotAnAnswer,
  checkAnswer: checkResponsesAnswer,
  forwarded: RESPONSES_FORWARDED,
  compacts: true,
  isReasoningRefusal: refusesReasoning(RESPONSES_REASONING_REFUSALS),
};

/** An error object instead of a response (a 2xx some servers send), a response that failed, or no output. */
export function responsesNotAnAnswer(body: Record<string, unknown>): NotAnAnswer | undefined {
  if (body.object !== "response" && body.error !== undefined && body.error !== null && !Array.isArray(body.output))
    return { error: streamErrorFromResponses(body.error) };
  if (body.status === "failed")
    return { error: streamErrorFromResponses(body.error ?? { message: "the response failed" }) };
  if (!Array.isArray(body.output)) return { noAnswer: "upstream answered without an output" };
  return undefined;
}

export function checkResponsesAnswer(body: Record<string, unknown>): void {
  if (!Array.isArray(body.output))
    throw new InvalidRequestError("must be an array of output items (is this a Responses API response?)", "output");
}

function connectResponses(provider: ProviderSettings): UpstreamConnection {
  if (provider.preset !== undefined)
    throw new SettingError(
      "preset",
      "presets describe OpenAI-compatible Chat servers; an openai-responses provider has none",
    );
  const compat = Object.keys(provider.compat);
  if (compat.length > 0) throw new SettingError(`compat.${compat[0]}`, "unknown setting");
  const mode = provider.reasoning;
  if (mode !== undefined && mode !== "think-tags" && mode !== "drop")
    throw new SettingError(
      "reasoning",
      "an openai-responses provider takes think-tags or drop (its own reasoning goes back as its items)",
    );
  const reasoning = mode ?? "think-tags";
  const endpoint = `${provider.baseUrl}/responses`;
  const decodeOptions = { provider: provider.name };
  // OpenAI compacts (`compaction_trigger`, `POST /responses/compact`); a server that does not is configured so.
  const compacts = provider.compacts ?? true;
  return {
    endpoint,
    ...(compacts ? { compactEndpoint: `${endpoint}/compact` } : { compacts: false }),
    repairTarget: { ...RESPONSES_REPAIR_TARGET, provider: provider.name },
    // With other Responses providers a conversation could move to, its sealed reasoning must say whose it is.
    ...((provider.peers?.length ?? 0) > 0 ? { signatureOwner: provider.name } : {}),
    target: bearerTarget(provider, endpoint, RESPONSES_FORWARDED),
    takesCacheKey: true,
    encodeRequest: (request) => coreToResponsesRequest(request, { provider: provider.name, reasoning }),
    decodeResponse: (body) => responsesResponseToCore(body, decodeOptions),
    streamDecoder: () => createResponsesStreamDecoder(decodeOptions),
    // A server that ignores `stream: true` answered whole: the events that answer stands for.
    wholeAnswerAsStream: (body) =>
      `event: response.completed\ndata: ${JSON.stringify({ type: "response.completed", response: body })}\n\n`,
    discovery: bearerDiscovery(provider),
  };
}
