import type { Usage } from "../../core/index.js";
import type { Context } from "../http/context.js";
import type { GatewayState } from "../state.js";
import type { Exchange } from "./exchange.js";

/**
 * An answer's usage as the client got it (the upstream's, or the input estimate where it counted none), once per
 * answer, streamed or whole: into the request's log line, its trace, and `/metrics` under the provider and the model
 * it was sent to.
 */
export function recordUsage(ctx: Context, state: GatewayState, exchange: Exchange, usage: Usage): void {
  ctx.log.inputTokens = usage.inputTokens;
  ctx.log.outputTokens = usage.outputTokens;
  if (usage.cacheReadInputTokens !== undefined) ctx.log.cacheReadTokens = usage.cacheReadInputTokens;
  if (usage.cacheCreationInputTokens !== undefined) ctx.log.cacheWriteTokens = usage.cacheCreationInputTokens;
  exchange.trace.usage = usage;
  state.metrics.countTokens(exchange.provider.config.name, exchange.upstreamModel, usage);
}
