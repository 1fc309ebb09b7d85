import { InvalidRequestError, ParleyError } from "../../core/index.js";
import { ConversationExistsError } from "../../store/errors.js";
import type { ConversationStore } from "../../store/types.js";
import { resolveRoute } from "../config/routing.js";
import {
  anthropicMessagesToCore,
  coreToAnthropicMessages,
  coreToOpenAIMessages,
  parseAnthropicMessages,
} from "../exchange/codecs.js";
import { expectObject, readJsonBody, readOptionalJsonBody } from "../http/body.js";
import { type Context, sendJson } from "../http/context.js";
import type { GatewayState } from "../state.js";

function requireStore(state: GatewayState): ConversationStore {
  if (state.store === undefined) throw new ParleyError("api_error", "no store is configured");
  return state.store;
}

/** `POST /v1/conversations`: `201 {"id"}`. An empty body is fine; `{"id"?, "metadata"?}` are honoured. */
export async function handleCreateConversation(ctx: Context, state: GatewayState): Promise<void> {
  const store = requireStore(state);
  // A body sent chunked (no content-length) is a body too.
  const sent = await readOptionalJsonBody(ctx, state.config.limits.maxBodyBytes);
  const body = sent === undefined ? {} : expectObject(sent);
  const options: { id?: string; metadata?: Record<string, unknown>; owner: string } = { owner: ctx.tenant };
  if (body.id !== undefined) {
    if (typeof body.id !== "string" || !/^[A-Za-z0-9_.:-]{1,128}$/.test(body.id)) {
      throw new InvalidRequestError("must be a string of letters, digits, _ . : - (at most 128)", "id");
    }
    options.id = body.id;
  }
  if (body.metadata !== undefined) options.metadata = expectObject(body.metadata, "metadata");
  let created: { id: string };
  try {
    created = await store.createConversation(options);
  } catch (error) {
    // Ids are unique across tenants: one taken by another is taken all the same (its content stays theirs).
    if (error instanceof ConversationExistsError) {
      throw new ParleyError("invalid_request_error", `conversation '${options.id}' already exists`, { status: 409 });
    }
    throw error;
  }
  sendJson(ctx, 201, { id: created.id });
}

/** `POST /v1/conversations/{id}/messages`: appends `{"messages":[Anthropic messages]}`. */
export async function handleAppendMessages(ctx: Context, state: GatewayState): Promise<void> {
  const store = requireStore(state);
  const id = ctx.params.id!;
  const body = expectObject(await readJsonBody(ctx, state.config.limits.maxBodyBytes));
  const messages = anthropicMessagesToCore(parseAnthropicMessages(body.messages, "messages"));
  if (!(await store.hasConversation(id, ctx.tenant))) {
    throw new ParleyError("not_found_error", `conversation '${id}' not found`);
  }
  const stored = await store.appendMessages(id, messages, ctx.tenant);
  sendJson(ctx, 200, { id, appended: stored.length, seq: stored.map((entry) => entry.seq) });
}

/** `GET /v1/conversations/{id}`: Anthropic messages, or OpenAI chat messages with `?format=openai`. */
export async function handleGetConversation(ctx: Context, state: GatewayState): Promise<void> {
  const store = requireStore(state);
  const id = ctx.params.id!;
  const format = ctx.query.get("format") ?? "anthropic";
  if (format !== "anthropic" && format !== "openai") {
    throw new InvalidRequestError("must be anthropic or openai", "format");
  }
  const stored = await store.loadConversation(id, ctx.tenant);
  if (stored === undefined) throw new ParleyError("not_found_error", `conversation '${id}' not found`);
  const messages = stored.map((entry) => entry.message);
  if (format === "anthropic") {
    // Thinking from an OpenAI-compatible upstream reads back signed with its origin, as the answer carried it.
    sendJson(ctx, 200, { id, messages: coreToAnthropicMessages(messages, { signOriginThinking: true }).value });
    return;
  }
  // The routed provider's reasoning mode (by `?model=`), else the default provider's.
  const model = ctx.query.get("model");
  const provider =
    model === null ? state.config.providers[state.config.defaultProvider]! : resolveRoute(state.config, model).provider;
  const runtime = state.providers[provider.name]!;
  const converted = coreToOpenAIMessages(messages, {
    reasoning: runtime.reasoning,
    compat: runtime.compat,
    provider: provider.name,
  });
  sendJson(ctx, 200, { id, messages: converted.value });
}
