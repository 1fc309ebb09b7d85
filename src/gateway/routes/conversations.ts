import { InvalidRequestError, ParleyError } from "../../core/index.js";
import type { FormatAdapter, ProviderSettings } from "../../formats/adapter.js";
import { FORMAT_IDS, findFormat, formatAdapter, orList, PARLEY_FORMAT } from "../../formats/registry.js";
import type { ConversationStore, CreateOptions, StoredMessage } from "../../store/conversations/conversation-store.js";
import { ConversationExistsError } from "../../store/errors.js";
import { messageSources } from "../exchange/message-sources.js";
import { expectObject, readJsonBodyText, readOptionalJsonBody } from "../http/body.js";
import { type Context, sendJson, sendJsonText } from "../http/context.js";
import { targetModel } from "../models/route-model.js";
import type { GatewayState } from "../state.js";

function requireStore(state: GatewayState): ConversationStore {
  if (state.store === undefined) throw new ParleyError("api_error", "no store is configured");
  return state.store.conversations;
}

/** `POST /v1/conversations`: `201 {"id"}`. An empty body is fine; `{"id"?, "metadata"?}` are honoured. */
export async function handleCreateConversation(ctx: Context, state: GatewayState): Promise<void> {
  const store = requireStore(state);
  // A body sent chunked (no content-length) is a body too.
  const sent = await readOptionalJsonBody(ctx, state.config.limits.maxBodyBytes);
  const body = sent === undefined ? {} : expectObject(sent);
  const options: CreateOptions = { owner: ctx.tenant };
  if (body.id !== undefined) {
    if (typeof body.id !== "string" || !/^[A-Za-z0-9_.:-]{1,128}$/.test(body.id)) {
      throw new InvalidRequestError("must be a string of letters, digits, _ . : - (at most 128)", "id");
    }
    options.id = body.id;
  }
  if (body.metadata !== undefined) options.metadata = expectObject(body.metadata, "metadata");
  let created: { id: string };
  try {
    created = await store.create(options);
  } catch (error) {
    // Ids are unique across tenants: one taken by another is taken all the same (its content stays theirs).
    if (error instanceof ConversationExistsError) {
      throw new ParleyError("invalid_request_error", `conversation '${options.id}' already exists`, { status: 409 });
    }
    throw error;
  }
  sendJson(ctx, 201, { id: created.id });
}

/** Parley's own routes speak Anthropic messages. */
const OWN_FORMAT = formatAdapter(PARLEY_FORMAT);

/**
 * `POST /v1/conversations/{id}/messages`: appends `{"messages":[Anthropic messages]}`, each kept with its own
 * JSON as sent, so that the conversation reads back byte for byte (invariant 12).
 */
export async function handleAppendMessages(ctx: Context, state: GatewayState): Promise<void> {
  const store = requireStore(state);
  const id = ctx.params.id!;
  const { value, text } = await readJsonBodyText(ctx, state.config.limits.maxBodyBytes);
  const body = expectObject(value);
  const { messages } = OWN_FORMAT.history.toCore(body.messages);
  const owner = ctx.tenant;
  if (!(await store.has(id, { owner }))) {
    throw new ParleyError("not_found_error", `conversation '${id}' not found`);
  }
  const stored = await store.append(id, messages, {
    ...messageSources(OWN_FORMAT.id, text, messages.length),
    owner,
  });
  sendJson(ctx, 200, { id, appended: stored.length, seq: stored.map((entry) => entry.seq) });
}

/**
 * `GET /v1/conversations/{id}`: Anthropic messages, or another format's with `?format=` (`openai`), written for
 * the provider the conversation's model routes to (`?model=`), else the default provider: its reasoning mode
 * and quirks. Thinking another API produced reads back signed with its origin, as the answer carried it.
 */
export async function handleGetConversation(ctx: Context, state: GatewayState): Promise<void> {
  const store = requireStore(state);
  const id = ctx.params.id!;
  const format = findFormat(ctx.query.get("format") ?? PARLEY_FORMAT);
  if (format === undefined) throw new InvalidRequestError(`must be ${orList(FORMAT_IDS)}`, "format");
  const stored = await store.load(id, { owner: ctx.tenant });
  if (stored === undefined) throw new ParleyError("not_found_error", `conversation '${id}' not found`);
  const model = ctx.query.get("model");
  const provider =
    model === null ? state.config.providers[state.config.defaultProvider]! : targetModel(state, model).provider;
  sendJsonText(ctx, 200, `{"id":${JSON.stringify(id)},"messages":${viewText(stored, format, provider)}}`);
}

/**
 * The messages in `format` as JSON text: a message a client appended in that format is the JSON it sent, byte
 * for byte; the others (an upstream's answer, messages from another format) are converted run by run, thinking
 * another API produced signed with its origin as the answer carried it.
 */
function viewText(stored: readonly StoredMessage[], format: FormatAdapter, provider: ProviderSettings): string {
  const texts: string[] = [];
  let run: StoredMessage[] = [];
  const flush = () => {
    if (run.length === 0) return;
    const converted = format.history.fromCore(
      run.map((entry) => entry.message),
      { provider, signOriginThinking: true },
    );
    for (const message of converted.value) texts.push(JSON.stringify(message));
    run = [];
  };
  for (const entry of stored) {
    if (entry.source?.format === format.id) {
      flush();
      texts.push(entry.source.json);
    } else run.push(entry);
  }
  flush();
  return `[${texts.join(",")}]`;
}
