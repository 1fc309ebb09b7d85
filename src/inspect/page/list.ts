import type { TraceList, TraceRow } from "../view-types.js";
import { getJson } from "./api.js";
import { append, clear, h, link, ms, time } from "./dom.js";
import { count, hitTag, switchText } from "./tokens.js";

/** How often the newest page is asked for while the list is on screen (never while the tab is hidden). */
const POLL_MS = 1_500;

interface Filters {
  status: string;
  model: string;
  conversation: string;
  losses: boolean;
}

/**
 * The exchanges, newest first, updating while requests arrive: the newest page is polled (one indexed query,
 * nothing on the gateway's request path), and older pages come as the list is scrolled to its end.
 */
export async function showList(view: HTMLElement, onError: (error: unknown) => void): Promise<() => void> {
  const filters = readFilters();
  const body = h("tbody");
  const shown = new Map<string, HTMLTableRowElement>();
  const more = h("p", { class: "more" });
  let cursor: string | undefined;
  let loading = false;
  let generation = 0;

  const query = (extra: Record<string, string>) => {
    const params = new URLSearchParams(extra);
    if (filters.status) params.set("status", filters.status);
    if (filters.model) params.set("model", filters.model);
    if (filters.conversation) params.set("conversation", filters.conversation);
    if (filters.losses) params.set("losses", "1");
    return `/inspect/api/traces?${params}`;
  };

  const loadMore = async () => {
    if (loading || cursor === undefined) return;
    loading = true;
    const asked = generation;
    try {
      const page = await getJson<TraceList>(query({ limit: "100", cursor }));
      if (asked !== generation) return;
      for (const trace of page.traces) if (!shown.has(trace.id)) body.append(remember(trace));
      cursor = page.nextCursor;
      more.textContent = cursor === undefined ? "" : "Loading more as you scroll…";
    } catch (error) {
      onError(error);
    } finally {
      loading = false;
    }
  };

  const remember = (trace: TraceRow) => {
    const row = traceRow(trace);
    shown.set(trace.id, row);
    return row;
  };

  /** The newest page: rows not shown yet go on top, marked new for a moment. */
  const refresh = async (fresh: boolean) => {
    const asked = generation;
    const page = await getJson<TraceList>(query({ limit: "50" }));
    if (asked !== generation) return;
    if (fresh) {
      clear(body);
      shown.clear();
      cursor = page.nextCursor;
      more.textContent = cursor === undefined ? "" : "Loading more as you scroll…";
    }
    const added = page.traces.filter((trace) => !shown.has(trace.id)).map(remember);
    if (!fresh) for (const row of added) row.classList.add("new");
    body.prepend(...added);
    empty.hidden = shown.size > 0;
  };

  const empty = h("p", { class: "empty" }, "No exchanges recorded yet: they appear here as requests arrive.");
  const table = h(
    "table",
    { class: "traces" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ...["Time", "Route", "Model", "Upstream", "Status", "Duration", "Tokens", "Reports", "Conversation"].map(
          (title) => h("th", { scope: "col" }, title),
        ),
      ),
    ),
    body,
  );
  const form = filterForm(filters, () => {
    generation++;
    writeFilters(filters);
    void refresh(true).catch(onError);
  });
  append(view, h("h1", {}, "Exchanges"), form, empty, table, more);
  await refresh(true);

  const observer = new IntersectionObserver((entries) => {
    if (entries.some((entry) => entry.isIntersecting)) void loadMore();
  });
  observer.observe(more);
  // And by scrolling near the end, in case the observer's first notice came before the rows were laid out.
  const nearEnd = () => {
    if (innerHeight + scrollY >= document.documentElement.scrollHeight - 200) void loadMore();
  };
  addEventListener("scroll", nearEnd, { passive: true });
  const timer = setInterval(() => {
    if (document.visibilityState === "visible") void refresh(false).catch(onError);
  }, POLL_MS);
  return () => {
    clearInterval(timer);
    observer.disconnect();
    removeEventListener("scroll", nearEnd);
    generation++;
  };
}

function traceRow(trace: TraceRow): HTMLTableRowElement {
  const reports = h("td", { class: "reports" });
  if (trace.repairCount > 0) append(reports, h("span", { class: "badge repair" }, `${trace.repairCount} repaired`));
  if (trace.lossyCount > 0) append(reports, h("span", { class: "badge lossy" }, `${trace.lossyCount} lost`));
  const switched = switchText(trace);
  if (switched !== undefined) append(reports, h("span", { class: "badge switch", title: switched }, "model switched"));
  const status = trace.status ?? 0;
  return h(
    "tr",
    { "data-id": trace.id },
    h("td", { class: "time" }, link(`#/exchange/${encodeURIComponent(trace.id)}`, time(trace.createdAt))),
    h("td", {}, trace.route, trace.stream ? h("span", { class: "tag" }, "stream") : false),
    h("td", {}, trace.clientModel ?? "-"),
    h("td", {}, [trace.provider, trace.upstreamModel].filter(Boolean).join(" · ") || "-"),
    h("td", { class: `status s${Math.floor(status / 100)}` }, trace.status === undefined ? "-" : String(status)),
    h("td", { class: "number" }, ms(trace.durationMs)),
    h(
      "td",
      { class: "number tokens" },
      trace.inputTokens === undefined ? "-" : `${count(trace.inputTokens)} / ${count(trace.outputTokens)}`,
      hitTag(trace.cacheHitRatio),
    ),
    reports,
    h(
      "td",
      {},
      trace.conversationId === undefined
        ? ""
        : link(`#/conversation/${encodeURIComponent(trace.conversationId)}`, trace.conversationId),
    ),
  );
}

function filterForm(filters: Filters, changed: () => void): HTMLFormElement {
  const status = h(
    "select",
    { name: "status", "aria-label": "Status" },
    ...[
      ["", "any status"],
      ["ok", "succeeded"],
      ["error", "failed"],
      ["4xx", "4xx"],
      ["5xx", "5xx"],
    ].map(([value, label]) => h("option", { value: value!, selected: value === filters.status }, label!)),
  );
  const model = h("input", { name: "model", placeholder: "model", value: filters.model, "aria-label": "Model" });
  const conversation = h("input", {
    name: "conversation",
    placeholder: "conversation id",
    value: filters.conversation,
    "aria-label": "Conversation",
  });
  const losses = h("input", { type: "checkbox", name: "losses", checked: filters.losses });
  const form = h(
    "form",
    { class: "filters", role: "search" },
    status,
    model,
    conversation,
    h("label", {}, losses, " has losses"),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const update = () => {
    filters.status = status.value;
    filters.model = model.value.trim();
    filters.conversation = conversation.value.trim();
    filters.losses = losses.checked;
    clearTimeout(timer);
    timer = setTimeout(changed, 250);
  };
  form.addEventListener("input", update);
  form.addEventListener("change", update);
  form.addEventListener("submit", (event) => event.preventDefault());
  return form;
}

/** Filters are kept for the tab, so that coming back from an exchange finds the list as it was. */
function readFilters(): Filters {
  try {
    const saved = JSON.parse(sessionStorage.getItem("parley-inspector-filters") ?? "{}") as Partial<Filters>;
    return {
      status: saved.status ?? "",
      model: saved.model ?? "",
      conversation: saved.conversation ?? "",
      losses: saved.losses ?? false,
    };
  } catch {
    return { status: "", model: "", conversation: "", losses: false };
  }
}

function writeFilters(filters: Filters): void {
  sessionStorage.setItem("parley-inspector-filters", JSON.stringify(filters));
}
