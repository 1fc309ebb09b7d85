import { StoreUnavailableError } from "../../store/errors.js";
import { type Context, sendJson } from "../http/context.js";
import type { GatewayState } from "../state.js";

/**
 * `GET /ready`: whether the gateway can serve stored turns now. 200 once the store could take a write within its
 * deadline (`Store.ready`: SQLite's write lock taken and let go, a round trip to PostgreSQL), else a 503 naming the
 * store and why. `/health` never touches the store: it says the process answers, this what its store does.
 */
export async function handleReady(ctx: Context, state: GatewayState): Promise<void> {
  const store = state.store;
  const name = backendName(state.config.store);
  if (store === undefined) {
    sendJson(ctx, 200, { status: "ready", store: "none" });
    return;
  }
  try {
    await store.ready();
    sendJson(ctx, 200, { status: "ready", store: name });
  } catch (error) {
    state.logger.warn({ err: error, store: name }, "the store is not ready");
    const message =
      error instanceof StoreUnavailableError ? error.message : `the store (${name}) could not take a write`;
    sendJson(ctx, 503, { status: "unavailable", store: name, error: { type: "api_error", message } });
  }
}

/** The store's kind, never its URL (a PostgreSQL URL may hold a password). */
function backendName(url: string): string {
  if (url.startsWith("sqlite:")) return "sqlite";
  if (/^postgres(ql)?:/.test(url)) return "postgres";
  if (url.startsWith("memory:")) return "memory";
  return "unknown";
}
