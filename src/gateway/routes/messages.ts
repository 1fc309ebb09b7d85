import { type Message, ParleyError } from "../../core/index.js";
import {
  anthropicRequestToCore,
  openaiRequestToCore,
  parseAnthropicRequest,
  parseOpenAIRequest,
} from "../exchange/codecs.js";
import { runExchange } from "../exchange/run.js";
import { expectObject, readJsonBodyText } from "../http/body.js";
import type { Context } from "../http/context.js";
import type { GatewayState } from "../state.js";

export const CONVERSATION_HEADER = "x-parley-conversation-id";

/** `POST /v1/messages`: the Anthropic Messages API, stateless or (with the conversation header) stateful. */
export async function handleMessages(ctx: Context, state: GatewayState): Promise<void> {
  const { value, text } = await readJsonBodyText(ctx, state.config.limits.maxBodyBytes);
  const raw = expectObject(value);
  const body = parseAnthropicRequest(raw);
  const converted = anthropicRequestToCore(body);
  const conversationId = headerValue(ctx, CONVERSATION_HEADER);
  let history: Message[] = [];
  if (conversationId !== undefined) {
    if (state.store === undefined) throw new ParleyError("api_error", "no store is configured");
    const stored = await state.store.loadConversation(conversationId);
    if (stored === undefined) throw new ParleyError("not_found_error", `conversation '${conversationId}' not found`);
    history = stored.map((entry) => entry.message);
  }
  const core = { ...converted.value, messages: [...history, ...converted.value.messages] };
  await runExchange(
    ctx,
    state,
    {
      format: "anthropic",
      clientModel: converted.value.model,
      stream: converted.value.stream === true,
      core,
      rawAnthropic: raw,
      rawAnthropicText: text,
      historyCount: history.length,
      lossy: converted.lossy,
    },
    {
      clientBodyText: text,
      ...(conversationId === undefined ? {} : { conversationId, newMessages: converted.value.messages }),
    },
  );
}

/** `POST /v1/chat/completions`: OpenAI Chat Completions, to whichever provider the model routes to. */
export async function handleChatCompletions(ctx: Context, state: GatewayState): Promise<void> {
  const { value, text } = await readJsonBodyText(ctx, state.config.limits.maxBodyBytes);
  const raw = expectObject(value);
  const body = parseOpenAIRequest(raw);
  const converted = openaiRequestToCore(body);
  const streamOptions = raw.stream_options as { include_usage?: unknown } | undefined;
  await runExchange(
    ctx,
    state,
    {
      format: "openai",
      clientModel: converted.value.model,
      stream: converted.value.stream === true,
      core: converted.value,
      historyCount: 0,
      lossy: converted.lossy,
      includeUsage: streamOptions?.include_usage === true,
    },
    { clientBodyText: text },
  );
}

function headerValue(ctx: Context, name: string): string | undefined {
  const value = ctx.req.headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text.trim() === "" ? undefined : text.trim();
}
