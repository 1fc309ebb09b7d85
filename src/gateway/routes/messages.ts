import { type ConversationResponse, InvalidRequestError, type Message, ParleyError } from "../../core/index.js";
import type { AnswerState, ClientRequestRead, ClientRoute, FormatAdapter } from "../../formats/adapter.js";
import { messageSources } from "../exchange/message-sources.js";
import { encodeOptions } from "../exchange/plan.js";
import { runExchange } from "../exchange/run.js";
import { expectObject, parseJsonText, readJsonText } from "../http/body.js";
import type { Context } from "../http/context.js";
import { preparedClientRequest } from "../off-loop/plan-exchange.js";
import { OFF_LOOP_BODY_CHARACTERS, type PreparedRequest, preparePool } from "../off-loop/prepare-pool.js";
import type { GatewayState } from "../state.js";

export const CONVERSATION_HEADER = "x-parley-conversation-id";

/**
 * A conversation turn in the client's API (`POST /v1/messages`, `POST /v1/chat/completions`...), to whichever
 * provider the model routes to; stateful with the conversation header, on a route that takes it, or with the
 * stored answers of an API that has them (`previous_response_id`, `store`).
 */
export async function handleAnswer(
  ctx: Context,
  state: GatewayState,
  format: FormatAdapter,
  route: ClientRoute,
): Promise<void> {
  const text = await readJsonText(ctx, state.config.limits.maxBodyBytes);
  const conversationId = route.conversations ? headerValue(ctx, CONVERSATION_HEADER) : undefined;
  if (conversationId === undefined && text.length > OFF_LOOP_BODY_CHARACTERS) {
    const prepared = await readOffLoop(ctx, state, format, route, text);
    if (prepared !== undefined) {
      try {
        await runExchange(ctx, state, preparedClientRequest(format, prepared), { clientBodyText: text });
      } finally {
        prepared.release();
      }
      return;
    }
  }
  const raw = expectObject(parseJsonText(text).value);
  const converted = format.client.readRequest(raw, { route, params: ctx.params, query: ctx.query });
  let history: Message[] = [];
  if (conversationId !== undefined) {
    if (state.store === undefined) throw new ParleyError("api_error", "no store is configured");
    const stored = await state.store.conversations.load(conversationId, { owner: ctx.tenant });
    if (stored === undefined) throw new ParleyError("not_found_error", `conversation '${conversationId}' not found`);
    history = stored.map((entry) => entry.message);
  }
  const answers = await storedAnswers(ctx, state, format, converted);
  history = [...history, ...answers.history];
  const core =
    history.length === 0
      ? converted.value
      : { ...converted.value, messages: [...history, ...converted.value.messages] };
  const request = {
    format,
    clientModel: converted.value.model,
    stream: converted.value.stream === true,
    core,
    raw,
    rawText: text,
    historyCount: history.length,
    lossy: converted.lossy,
    ...(converted.includeUsage === undefined ? {} : { includeUsage: converted.includeUsage }),
    ...(answers.state === undefined ? {} : { state: answers.state }),
    ...(answers.id === undefined ? {} : { answerId: answers.id, createdAt: Math.floor(Date.now() / 1000) }),
    ...(route.kind === "compact" ? { endpoint: "compact" as const } : {}),
  };
  const keep = answers.id;
  await runExchange(ctx, state, request, {
    clientBodyText: text,
    ...(conversationId === undefined
      ? {}
      : {
          conversationId,
          newMessages: converted.value.messages,
          newMessageSources: messageSources(format.id, text, converted.value.messages.length).sources,
        }),
    ...(keep === undefined
      ? {}
      : {
          keepAnswer: async (answer: ConversationResponse) => {
            await state.store!.answers.save(
              {
                id: keep,
                createdAt: new Date().toISOString(),
                ...(answers.state?.previous === undefined ? {} : { previousId: answers.state.previous }),
                messages: [...converted.value.messages, answer.message],
                body: format.client.encodeResponse(answer, encodeOptions(request)).value,
              },
              { owner: ctx.tenant },
            );
          },
        }),
  });
}

/**
 * The stored answers a request involves: the history of the one it continues (the whole chain, its owner's own
 * only) and, when its answer is to be kept, the id that answer gets. Without a store nothing is kept.
 */
async function storedAnswers(
  ctx: Context,
  state: GatewayState,
  format: FormatAdapter,
  converted: ClientRequestRead,
): Promise<{ history: Message[]; state?: AnswerState; id?: string }> {
  const asked = converted.state;
  const stored = format.client.stored;
  if (asked === undefined || stored === undefined) return { history: [] };
  let history: Message[] = [];
  if (asked.previous !== undefined) {
    if (state.store === undefined) throw new ParleyError("api_error", "no store is configured");
    const chain = await state.store.answers.chain(asked.previous, { owner: ctx.tenant });
    if (chain === undefined) throw new InvalidRequestError(stored.notFound(asked.previous), stored.previousParam);
    history = chain.flatMap((answer) => answer.messages);
  }
  const kept = asked.kept && state.store !== undefined;
  const answerState: AnswerState = { kept };
  if (asked.previous !== undefined) answerState.previous = asked.previous;
  return { history, state: answerState, ...(kept ? { id: stored.newId() } : {}) };
}

/** A large stateless request read on a prepare thread; undefined when it needs the store, and is read here. */
function readOffLoop(
  ctx: Context,
  state: GatewayState,
  format: FormatAdapter,
  route: ClientRoute,
  text: string,
): Promise<PreparedRequest | undefined> {
  const sessionHeaders: Record<string, string> = {};
  for (const name of ["x-claude-code-session-id", "session_id"]) {
    const value = ctx.req.headers[name];
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) sessionHeaders[name] = first;
  }
  return preparePool(state).read({
    format: format.id,
    route: format.client.routes.indexOf(route),
    params: ctx.params,
    query: ctx.query.toString(),
    text,
    sessionHeaders,
    hasStore: state.store !== undefined,
  });
}

function headerValue(ctx: Context, name: string): string | undefined {
  const value = ctx.req.headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text.trim() === "" ? undefined : text.trim();
}
