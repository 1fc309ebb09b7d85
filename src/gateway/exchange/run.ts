import { type Message, ParleyError } from "../../core/index.js";
import { resolveRoute } from "../config/routing.js";
import type { Context } from "../http/context.js";
import { formatLossyHeader, lossyHeaderEntries } from "../lossy-header.js";
import type { GatewayState } from "../state.js";
import { approximateInputTokens } from "../token-count.js";
import { answerOnce } from "./answer-once.js";
import type { Exchange } from "./exchange.js";
import { type ClientRequest, planUpstream } from "./plan.js";
import { recordTrace } from "./record-trace.js";
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
  /** The client's body text as received, for the trace. */
  clientBodyText: string;
}

/** Routes a client request to its provider, answers it (streamed or not), persists and traces it. */
export async function runExchange(
  ctx: Context,
  state: GatewayState,
  request: ClientRequest,
  options: ExchangeOptions,
): Promise<void> {
  const route = resolveRoute(state.config, request.clientModel);
  const provider = state.providers[route.provider.name]!;
  Object.assign(ctx.log, {
    provider: provider.config.name,
    upstreamModel: route.upstreamModel,
    clientModel: request.clientModel,
    stream: request.stream,
  });
  const plan = planUpstream(request, provider, route.upstreamModel);
  const headers: Record<string, string> = {};
  const lossy = lossyHeaderEntries([...request.lossy, ...plan.lossy], plan.repair);
  const lossyHeader = formatLossyHeader(lossy);
  if (lossyHeader !== undefined) headers["x-parley-lossy"] = lossyHeader;

  let estimate: number | undefined;
  const exchange: Exchange = {
    request,
    provider,
    upstreamModel: route.upstreamModel,
    plan,
    bodyText: plan.bodyText ?? JSON.stringify(plan.body),
    lossy,
    query: provider.config.type === "anthropic" ? ctx.query.toString() : "",
    estimateInputTokens: () => {
      estimate ??= approximateInputTokens(request.core);
      return estimate;
    },
    trace: {
      upstreamResponse: "",
      clientResponse: "",
      responseLossy: [],
      timings: { planMs: performance.now() - ctx.startedAt },
    },
  };
  const { conversationId } = options;
  if (conversationId !== undefined) {
    exchange.conversationId = conversationId;
    ctx.log.conversationId = conversationId;
  }
  const store = state.store;
  if (conversationId !== undefined && store === undefined) throw new ParleyError("api_error", "no store is configured");
  const newMessages = options.newMessages ?? [];

  let status: number | undefined;
  try {
    if (request.stream) {
      await streamAnswer(ctx, state, exchange, headers, async () => {
        if (conversationId === undefined) return undefined;
        if (newMessages.length > 0) await store!.appendMessages(conversationId, newMessages);
        return store!.startMessage(conversationId, "assistant");
      });
    } else {
      await answerOnce(
        ctx,
        state,
        exchange,
        headers,
        conversationId === undefined
          ? undefined
          : async (answer) => void (await store!.appendMessages(conversationId, [...newMessages, answer.message])),
      );
    }
    status = ctx.res.statusCode;
  } catch (error) {
    status = error instanceof ParleyError ? error.status : 500;
    throw error;
  } finally {
    recordTrace(ctx, state, exchange, options.clientBodyText, status);
  }
}
