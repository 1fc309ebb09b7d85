import { ApiError, forgetKey, NeedsKey, rememberKey, storedKey } from "./api.js";
import { showConversation } from "./conversation.js";
import { append, button, clear, h, link } from "./dom.js";
import { showExchange } from "./exchange.js";
import { showList } from "./list.js";

/**
 * The inspector: `#/` the exchanges, `#/exchange/ID` one exchange, `#/conversation/ID` one conversation. Ids live
 * in the fragment, which no request carries; the key lives in sessionStorage.
 */
const app = document.getElementById("app")!;
/** Whatever the current view started (a poll, an observer), stopped when another view replaces it. */
let stopView: (() => void) | undefined;

function header(): HTMLElement {
  return h(
    "header",
    {},
    link("#/", h("strong", {}, "Parley"), " inspector"),
    h("nav", {}, link("#/", "Exchanges")),
    storedKey() === null
      ? false
      : button("Forget key", () => {
          forgetKey();
          void route();
        }),
  );
}

async function route(): Promise<void> {
  stopView?.();
  stopView = undefined;
  clear(app);
  const view = h("section", { id: "view" });
  append(app, header(), view);
  const [, kind, ...rest] = location.hash.replace(/^#\/?/, "/").split("/");
  const id = decodeURIComponent(rest.join("/"));
  try {
    if (kind === "exchange" && id) await showExchange(view, id);
    else if (kind === "conversation" && id) await showConversation(view, id);
    else stopView = await showList(view, (error) => failed(view, error));
  } catch (error) {
    failed(view, error);
  }
}

function failed(view: HTMLElement, error: unknown): void {
  stopView?.();
  stopView = undefined;
  clear(view);
  if (error instanceof NeedsKey) {
    append(view, keyForm(error.wrong));
    return;
  }
  const message = error instanceof ApiError || error instanceof Error ? error.message : String(error);
  append(view, h("p", { class: "error", role: "alert" }, message));
}

function keyForm(wrong: boolean): HTMLFormElement {
  const input = h("input", {
    type: "password",
    name: "key",
    autocomplete: "off",
    "aria-label": "API key",
    placeholder: "API key",
  });
  const form = h(
    "form",
    { class: "key-form" },
    h("h2", {}, "This gateway needs an API key"),
    h(
      "p",
      {},
      wrong
        ? "That key was refused. "
        : "Type one of the gateway's client keys; you will see the exchanges and conversations of its tenant. ",
      "The key stays in this tab (sessionStorage) and goes to the gateway as a header only.",
    ),
    input,
    h("button", { type: "submit" }, "Open"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (input.value === "") return;
    rememberKey(input.value);
    void route();
  });
  queueMicrotask(() => input.focus());
  return form;
}

window.addEventListener("hashchange", () => void route());
void route();
