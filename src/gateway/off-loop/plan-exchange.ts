import type { FormatAdapter } from "../../formats/adapter.js";
import { type ClientRequest, planUpstream, type UpstreamPlan } from "../exchange/plan.js";
import { type ProviderRuntime, reasoningRefusalOf } from "../exchange/providers.js";
import type { PreparedRequest } from "./prepare-pool.js";

/**
 * A request read on a prepare thread, as the exchange sees it: its settings, tools and reports, without its history
 * (which the thread holds and plans). Routing and fitting read it as any other.
 */
export function preparedClientRequest(format: FormatAdapter, prepared: PreparedRequest): ClientRequest {
  const { summary } = prepared;
  const request: ClientRequest = {
    format,
    clientModel: summary.clientModel,
    stream: summary.stream,
    core: summary.slim,
    historyCount: 0,
    lossy: summary.lossy,
    cacheKey: summary.cacheKey,
    conversationStart: summary.conversationStart,
    prepared,
  };
  if (summary.includeUsage !== undefined) request.includeUsage = summary.includeUsage;
  if (summary.state !== undefined) request.state = summary.state;
  return request;
}

/** The request's plan: on its prepare thread when it was read there, else here (`planUpstream`). */
export async function planExchange(
  request: ClientRequest,
  provider: ProviderRuntime,
  upstreamModel: string,
  options: { reasoningAsText?: boolean } = {},
): Promise<UpstreamPlan> {
  const prepared = request.prepared;
  if (prepared === undefined) return planUpstream(request, provider, upstreamModel, options);
  const reasoningAsText = options.reasoningAsText === true;
  const planned = await prepared.plan({
    provider: provider.config.name,
    preset: provider.connection.modelFacts?.preset,
    upstreamModel,
    maxTokens: request.core.maxTokens,
    cacheKey: request.cacheKey,
    reasoningAsText,
  });
  // Only a provider that may refuse the history's reasoning asks for a second plan; otherwise the thread is free now.
  if (reasoningAsText || reasoningRefusalOf(provider) === undefined) prepared.release();
  return { body: undefined, bodyText: planned.bodyText, lossy: planned.lossy, repair: planned.repair };
}
