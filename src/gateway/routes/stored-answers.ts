import { ParleyError } from "../../core/index.js";
import type { FormatAdapter, StoredAnswers } from "../../formats/adapter.js";
import type { Store } from "../../store/open-store.js";
import { type Context, sendJson } from "../http/context.js";
import type { GatewayState } from "../state.js";

/** `GET /v1/responses/{id}` and its like: an answer Parley kept, as its client got it; only for its owner (the tenant that kept it). */
export async function handleGetStoredAnswer(ctx: Context, state: GatewayState, format: FormatAdapter): Promise<void> {
  const { store, stored } = requireStored(state, format);
  const id = ctx.params.id!;
  const answer = await store.answers.get(id, { owner: ctx.tenant });
  if (answer === undefined) throw new ParleyError("not_found_error", stored.notFound(id));
  sendJson(ctx, 200, answer.body);
}

/** `DELETE /v1/responses/{id}` and its like. */
export async function handleDeleteStoredAnswer(
  ctx: Context,
  state: GatewayState,
  format: FormatAdapter,
): Promise<void> {
  const { store, stored } = requireStored(state, format);
  const id = ctx.params.id!;
  if (!(await store.answers.delete(id, { owner: ctx.tenant })))
    throw new ParleyError("not_found_error", stored.notFound(id));
  sendJson(ctx, 200, stored.deleted(id));
}

function requireStored(state: GatewayState, format: FormatAdapter): { store: Store; stored: StoredAnswers } {
  if (state.store === undefined) throw new ParleyError("api_error", "no store is configured");
  return { store: state.store, stored: format.client.stored! };
}
