import type { ExchangeView, PreviousView, StreamView } from "../view-types.js";
import { getJson, getText } from "./api.js";
import { append, button, clear, h, link, ms, time } from "./dom.js";
import { noteView, pairingView } from "./rows.js";
import { percent, switchNotice, tokenText } from "./tokens.js";

type BodyName = "clientRequest" | "upstreamRequest" | "upstreamResponse" | "clientResponse";

/** Events listed before the rest is folded. */
const SHOWN_EVENTS = 300;

/** One exchange: the heading, reports no block holds, both requests and both answers aligned, streams, raw bodies. */
export async function showExchange(view: HTMLElement, id: string): Promise<void> {
  const exchange = await getJson<ExchangeView>(`/inspect/api/traces/${encodeURIComponent(id)}`);
  const trace = exchange.trace;
  const raw = h("div", { class: "raw" });
  const showRaw = (body: BodyName) => () => void openRaw(raw, trace.id, body);
  append(
    view,
    heading(exchange),
    exchange.unplaced.length === 0
      ? false
      : h("section", { class: "unplaced" }, h("h2", {}, "Reports not at a block"), ...exchange.unplaced.map(noteView)),
    raw,
    h(
      "section",
      { class: "request" },
      h("h2", {}, "Request"),
      pairingView(
        exchange.request,
        ["Client sent", "Sent upstream"],
        [showRaw("clientRequest"), showRaw("upstreamRequest")],
      ),
    ),
    h(
      "section",
      { class: "response" },
      h("h2", {}, trace.stream ? "Answer (streams assembled)" : "Answer"),
      pairingView(
        exchange.response,
        ["Client received", "Upstream answered"],
        [showRaw("clientResponse"), showRaw("upstreamResponse")],
      ),
    ),
    exchange.streams.client || exchange.streams.upstream ? streams(exchange) : false,
    previousSection(trace.id),
  );
}

function heading(exchange: ExchangeView): HTMLElement {
  const trace = exchange.trace;
  const facts: Array<[string, Node | string]> = [
    ["time", time(trace.createdAt)],
    ["route", trace.route],
    [
      "model",
      `${trace.clientModel ?? "-"} → ${[trace.provider, trace.upstreamModel].filter(Boolean).join(" · ") || "-"}`,
    ],
    ["status", String(trace.status ?? "-")],
    ["duration", ms(trace.durationMs)],
    ["tokens", tokenText(trace)],
    [
      "cache hit",
      trace.cacheHitRatio === undefined
        ? "-"
        : `${percent(trace.cacheHitRatio)} of the prompt read from the provider's cache`,
    ],
    ["request id", trace.requestId],
  ];
  if (trace.conversationId !== undefined) {
    facts.push([
      "conversation",
      link(`#/conversation/${encodeURIComponent(trace.conversationId)}`, trace.conversationId),
    ]);
  }
  if (trace.storedMessages !== undefined) facts.push(["stored history", `${trace.storedMessages} messages in front`]);
  const timings = Object.entries(trace.timings)
    .map(([name, value]) => `${name} ${Math.round(value * 10) / 10}`)
    .join(", ");
  if (timings) facts.push(["timings (ms)", timings]);
  return h(
    "section",
    { class: "exchange-head" },
    h("p", {}, link("#/", "← Exchanges")),
    h(
      "h1",
      {},
      "Exchange ",
      h("code", {}, trace.id),
      trace.repairCount > 0 ? h("span", { class: "badge repair" }, `${trace.repairCount} repaired`) : false,
      trace.lossyCount > 0 ? h("span", { class: "badge lossy" }, `${trace.lossyCount} lost`) : false,
    ),
    switchNotice(trace),
    h("dl", {}, ...facts.flatMap(([name, value]) => [h("dt", {}, name), h("dd", {}, value)])),
  );
}

async function openRaw(target: HTMLElement, id: string, body: BodyName): Promise<void> {
  clear(target);
  append(target, h("p", {}, "Loading…"));
  const text = await getText(`/inspect/api/traces/${encodeURIComponent(id)}/raw?body=${body}`);
  let shown = text;
  try {
    shown = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // An event stream or text: as it came.
  }
  clear(target);
  append(
    target,
    h(
      "div",
      { class: "raw-head" },
      h("h2", {}, `Raw ${body}`),
      button("close", () => clear(target)),
    ),
    h("pre", { class: "raw-body" }, shown),
  );
  target.scrollIntoView({ block: "start" });
}

function streams(exchange: ExchangeView): HTMLElement {
  return h(
    "section",
    { class: "streams" },
    h("h2", {}, "Streams, event by event"),
    h(
      "div",
      { class: "stream-pair" },
      streamTable("Client received", exchange.streams.client),
      streamTable("Upstream sent", exchange.streams.upstream),
    ),
  );
}

function streamTable(title: string, stream: StreamView | undefined): HTMLElement {
  const wrapper = h("div", { class: "stream" }, h("h3", {}, title));
  if (stream === undefined) return wrapper;
  const body = h("tbody");
  // Rows are made as they are shown: a long stream's events past the first few hundred cost nothing until asked.
  const row = (event: StreamView["events"][number]) =>
    h(
      "tr",
      {},
      h("td", { class: "number" }, event.ms === undefined ? "" : `+${event.ms}`),
      h("td", {}, event.event ?? "data"),
      h("td", {}, h("code", {}, event.data)),
    );
  body.append(...stream.events.slice(0, SHOWN_EVENTS).map(row));
  append(
    wrapper,
    h("p", { class: "facts" }, `${stream.events.length + stream.more} events; ms since the request arrived`),
    h(
      "table",
      { class: "events" },
      h("thead", {}, h("tr", {}, h("th", {}, "ms"), h("th", {}, "event"), h("th", {}, "data"))),
      body,
    ),
  );
  const hidden = stream.events.length - SHOWN_EVENTS;
  if (hidden > 0) {
    const more = button(`${hidden} more events`, () => {
      body.append(...stream.events.slice(SHOWN_EVENTS).map(row));
      more.remove();
    });
    append(wrapper, more);
  }
  if (stream.more > 0) {
    append(wrapper, h("p", { class: "facts" }, `${stream.more} more events in the raw body, not listed here`));
  }
  return wrapper;
}

/** The client's request against its previous one, on demand (it reads a second trace). */
function previousSection(id: string): HTMLElement {
  const section = h(
    "section",
    { class: "previous" },
    h("h2", {}, "What the client changed since its previous request"),
  );
  const open = button("Compare with the previous request", async () => {
    open.disabled = true;
    const previous = await getJson<PreviousView>(`/inspect/api/traces/${encodeURIComponent(id)}/previous`);
    open.remove();
    append(section, previousView(previous));
  });
  append(section, open);
  return section;
}

export function previousView(previous: PreviousView): HTMLElement {
  if (previous.pairing === undefined || previous.previous === undefined) {
    return h("p", { class: "empty" }, "No earlier request of this conversation or session was found.");
  }
  return h(
    "div",
    {},
    h(
      "p",
      {},
      previous.by === "conversation"
        ? "The previous exchange of this conversation: "
        : "The previous exchange of the same route and model: ",
      link(`#/exchange/${encodeURIComponent(previous.previous.id)}`, time(previous.previous.createdAt)),
    ),
    pairingView(previous.pairing, ["Previous request", "This request"]),
  );
}
