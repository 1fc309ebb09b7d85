import { type ConversationResponse, type Message, ParleyError, UpstreamError } from "../../core/index.js";
import type { MessageSource } from "../../store/conversations/conversation-store.js";
import type { Context } from "../http/context.js";
import { formatLossyHeader, lossyHeaderEntries } from "../lossy-header.js";
import { routeRequest } from "../models/route-request.js";
import { planExchange } from "../off-loop/plan-exchange.js";
import type { GatewayState } from "../state.js";
import { explainUpstreamFailure } from "../upstream-hints.js";
import { answerOnce } from "./answer-once.js";
import { conversationCacheKey } from "./cache-key.js";
import type { Exchange } from "./exchange.js";
import { type ClientRequest, forwardsClientQuery, sameApiPassthrough } from "./plan.js";
import { reasoningRefusalOf } from "./providers.js";
import { recordTrace } from "./record-trace.js";
import { conversationStart, routeKey } from "./route-switch.js";
import { streamAnswer } from "./stream-answer.js";

export interface ExchangeOptions {
  /** The stored conversation this turn belongs to. */
  conversationId?: string;
  /**
   * The client's new messages. They are stored once the upstream has answered (with the whole answer, or when a
   * stream's first content arrives), so that a turn the upstream refuses leaves the conversation as it was and
   * the client's retry does not store them twice.
   */
  newMessages?: Message[];
  /** Each new message's JSON as the client sent it, stored beside it (read back byte for byte). */
  newMessageSources?: ReadonlyArray<MessageSource | undefined> | undefined;
  /** The client's body text as received, for the trace. */
  clientBodyText: string;
  /** Keeps the finished answer for later turns (the client's `store`), before the client sees its end. */
  keepAnswer?: (answer: ConversationResponse) => Promise<void>;
}

/** Routes a client request to its provider, answers it (streamed or not), persists and traces it. */
export async function runExchange(
  ctx: Context,
  state: GatewayState,
  clientRequest: ClientRequest,
  options: ExchangeOptions,
): Promise<void> {
  const { route, provider, request, estimateInputTokens } = await routeRequest(state, clientRequest);
  Object.assign(ctx.log, {
    provider: provider.config.name,
    upstreamModel: route.upstreamModel,
    clientModel: request.clientModel,
    stream: request.stream,
  });
  // Derived only for a provider that takes one: it hashes the conversation's start.
  if (provider.connection.takesCacheKey === true)
    request.cacheKey ??= conversationCacheKey(ctx.req.headers, request.core, options.conversationId);
  // Where the conversation's previous answered turn went, if not here: this turn finds none of its prompt cache.
  const routed = { provider: provider.config.name, model: route.upstreamModel };
  const turnKey = routeKey(
    ctx.tenant,
    ctx.req.headers,
    request.core.userId,
    options.conversationId,
    request.conversationStart ?? conversationStart(request.core),
  );
  const switchedFrom = state.routes.switchedFrom(turnKey, routed);
  const plan = await planExchange(request, provider, route.upstreamModel);
  const headers: Record<string, string> = {};
  const lossy = lossyHeaderEntries([...request.lossy, ...plan.lossy], plan.repair);
  const lossyHeader = formatLossyHeader(lossy);
  if (lossyHeader !== undefined) headers["x-parley-lossy"] = lossyHeader;

  const exchange: Exchange = {
    request,
    provider,
    upstreamModel: route.upstreamModel,
    plan,
    bodyText: plan.bodyText ?? JSON.stringify(plan.body),
    lossy,
    // A query string means something to its own API only: a client of another's keeps it.
    query: forwardsClientQuery(request.format, provider) ? ctx.query : undefined,
    // Parley compacting for a provider of the client's own API (one that does not compact): the answer is Parley's.
    passthrough: plan.compaction === undefined ? sameApiPassthrough(request.format, provider) : undefined,
    tracing: state.config.traces.enabled && state.store !== undefined,
    estimateInputTokens,
    trace: {
      upstreamResponse: "",
      clientResponse: "",
      responseLossy: [],
      timings: { planMs: performance.now() - ctx.startedAt },
    },
  };
  if (options.keepAnswer !== undefined) exchange.keepAnswer = options.keepAnswer;
  if (switchedFrom !== undefined) exchange.switchedFrom = switchedFrom;
  const { conversationId } = options;
  if (conversationId !== undefined) {
    exchange.conversationId = conversationId;
    ctx.log.conversationId = conversationId;
  }
  const store = state.store;
  if (conversationId !== undefined && store === undefined) throw new ParleyError("api_error", "no store is configured");
  const newMessages = options.newMessages ?? [];
  const sources = options.newMessageSources;
  const owner = ctx.tenant;

  let status: number | undefined;
  const answer = async (headers: Record<string, string>): Promise<void> => {
    if (request.stream) {
      await streamAnswer(ctx, state, exchange, headers, async () => {
        if (conversationId === undefined) return undefined;
        // The question and the answer's place in one write: no other turn's messages come between them.
        return store!.conversations.startMessage(
          conversationId,
          "assistant",
          sources === undefined ? { owner, question: newMessages } : { owner, question: newMessages, sources },
        );
      });
    } else {
      const keepAnswer = exchange.keepAnswer;
      await answerOnce(
        ctx,
        state,
        exchange,
        headers,
        conversationId === undefined && keepAnswer === undefined
          ? undefined
          : async (answer) => {
              if (conversationId !== undefined) {
                const options = sources === undefined ? { owner } : { sources: [...sources, undefined], owner };
                await store!.conversations.append(conversationId, [...newMessages, answer.message], options);
              }
              await keepAnswer?.(answer);
            },
      );
    }
  };
  try {
    await resendOnReasoningRefusal(ctx, state, exchange, headers, answer);
    status = exchange.trace.status ?? ctx.res.statusCode;
  } catch (error) {
    const explained = explainUpstreamFailure(error, provider, state);
    status = explained instanceof ParleyError ? explained.status : 500;
    throw explained;
  } finally {
    // Only an answered turn is the conversation's last: after a failed one, its retry is compared with the turn
    // before, and flagged again if it goes elsewhere; the switch is counted once, answered.
    if (status !== undefined && status < 400) {
      state.routes.remember(turnKey, routed);
      if (switchedFrom !== undefined) {
        state.metrics.routeSwitches.inc({
          from_provider: switchedFrom.provider,
          from_model: switchedFrom.model,
          provider: routed.provider,
          model: routed.model,
        });
      }
    }
    recordTrace(ctx, state, exchange, options.clientBodyText, status);
  }
}

/**
 * Fail soft, once. A provider that answers 400 to reasoning it cannot verify (its API's words: a signature or sealed
 * content made under another key, organisation or model) gets the same request once more, before anything reached
 * the client, with the history's reasoning as text (`RepairTarget.reasoningAsText`), reported in `x-parley-lossy`
 * and the trace. A second refusal, or a history with no reasoning to turn, reaches the client as it came.
 */
async function resendOnReasoningRefusal(
  ctx: Context,
  state: GatewayState,
  exchange: Exchange,
  headers: Record<string, string>,
  answer: (headers: Record<string, string>) => Promise<void>,
): Promise<void> {
  try {
    await answer(headers);
    return;
  } catch (error) {
    const refuses = reasoningRefusalOf(exchange.provider);
    const status = error instanceof UpstreamError ? error.upstreamStatus : undefined;
    if (refuses === undefined || status === undefined || ctx.res.headersSent) throw error;
    if (!refuses(status, (error as UpstreamError).body ?? "")) throw error;
    const plan = await planExchange(exchange.request, exchange.provider, exchange.upstreamModel, {
      reasoningAsText: true,
    });
    if (plan.repair.length === 0) throw error;
    const provider = exchange.provider.config.name;
    plan.lossy.unshift({
      code: "reasoning-refused-resent",
      message: `provider '${provider}' refused reasoning it could not verify (${(error as UpstreamError).message}); sent again with the history's reasoning as text`,
    });
    exchange.plan = plan;
    exchange.bodyText = plan.bodyText ?? JSON.stringify(plan.body);
    exchange.lossy = lossyHeaderEntries([...exchange.request.lossy, ...plan.lossy], plan.repair);
    const header = formatLossyHeader(exchange.lossy);
    state.logger.warn({ requestId: ctx.requestId, provider }, "reasoning refused; sending again with it as text");
    await answer(header === undefined ? headers : { ...headers, "x-parley-lossy": header });
  }
}
