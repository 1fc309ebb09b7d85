import { type Message, ParleyError } from "../../core/index.js";
import type { ClientRoute, FormatAdapter } from "../../formats/adapter.js";
import { messageSources } from "../exchange/message-sources.js";
import { runExchange } from "../exchange/run.js";
import { expectObject, readJsonBodyText } from "../http/body.js";
import type { Context } from "../http/context.js";
import type { GatewayState } from "../state.js";

export const CONVERSATION_HEADER = "x-parley-conversation-id";

/**
 * A conversation turn in the client's API (`POST /v1/messages`, `POST /v1/chat/completions`...), to whichever
 * provider the model routes to; stateful with the conversation header, on a route that takes it.
 */
export async function handleAnswer(
  ctx: Context,
  state: GatewayState,
  format: FormatAdapter,
  route: ClientRoute,
): Promise<void> {
  const { value, text } = await readJsonBodyText(ctx, state.config.limits.maxBodyBytes);
  const raw = expectObject(value);
  const converted = format.client.readRequest(raw);
  const conversationId = route.conversations ? headerValue(ctx, CONVERSATION_HEADER) : undefined;
  let history: Message[] = [];
  if (conversationId !== undefined) {
    if (state.store === undefined) throw new ParleyError("api_error", "no store is configured");
    const stored = await state.store.loadConversation(conversationId, { owner: ctx.tenant });
    if (stored === undefined) throw new ParleyError("not_found_error", `conversation '${conversationId}' not found`);
    history = stored.map((entry) => entry.message);
  }
  const core =
    history.length === 0
      ? converted.value
      : { ...converted.value, messages: [...history, ...converted.value.messages] };
  await runExchange(
    ctx,
    state,
    {
      format,
      clientModel: converted.value.model,
      stream: converted.value.stream === true,
      core,
      raw,
      rawText: text,
      historyCount: history.length,
      lossy: converted.lossy,
      ...(converted.includeUsage === undefined ? {} : { includeUsage: converted.includeUsage }),
    },
    {
      clientBodyText: text,
      ...(conversationId === undefined
        ? {}
        : {
            conversationId,
            newMessages: converted.value.messages,
            newMessageSources: messageSources(format.id, text, converted.value.messages.length).sources,
          }),
    },
  );
}

function headerValue(ctx: Context, name: string): string | undefined {
  const value = ctx.req.headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text.trim() === "" ? undefined : text.trim();
}
