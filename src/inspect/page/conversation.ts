import type { ConversationView, PreviousView, TraceRow, TurnView } from "../view-types.js";
import { getJson } from "./api.js";
import { append, button, h, link, time } from "./dom.js";
import { previousView } from "./exchange.js";
import { blockView } from "./rows.js";
import { hitTag, switchNotice, tokenText, totalsText } from "./tokens.js";

/** A stored conversation turn by turn: each exchange, the messages it stored, and what its request changed. */
export async function showConversation(view: HTMLElement, id: string): Promise<void> {
  const conversation = await getJson<ConversationView>(`/inspect/api/conversations/${encodeURIComponent(id)}`);
  const traces = new Map(conversation.traces.map((trace) => [trace.id, trace]));
  append(
    view,
    h("p", {}, link("#/", "← Exchanges")),
    h("h1", {}, "Conversation ", h("code", {}, conversation.id)),
    h(
      "p",
      { class: "facts" },
      `${conversation.messages.length} stored messages, ${conversation.traces.length} exchanges`,
    ),
    conversation.tokens.exchanges > 0 || conversation.tokens.switches > 0
      ? h("p", { class: "facts conversation-tokens" }, totalsText(conversation.tokens))
      : false,
  );
  let group: { trace?: TraceRow; messages: TurnView[] } | undefined;
  const groups: Array<NonNullable<typeof group>> = [];
  for (const message of conversation.messages) {
    const trace = message.traceId === undefined ? undefined : traces.get(message.traceId);
    if (group === undefined || group.trace?.id !== trace?.id) {
      group = trace === undefined ? { messages: [] } : { trace, messages: [] };
      groups.push(group);
    }
    group.messages.push(message);
  }
  append(view, ...groups.map((turn, index) => turnView(turn, index + 1)));
  if (groups.length === 0) append(view, h("p", { class: "empty" }, "No messages stored yet."));
}

function turnView(turn: { trace?: TraceRow; messages: TurnView[] }, number: number): HTMLElement {
  const trace = turn.trace;
  const section = h(
    "section",
    { class: "turn" },
    h(
      "h2",
      {},
      `Turn ${number} `,
      trace === undefined
        ? h("span", { class: "facts" }, "appended through the conversations API")
        : h(
            "span",
            { class: "facts" },
            "stored by exchange ",
            link(`#/exchange/${encodeURIComponent(trace.id)}`, time(trace.createdAt)),
            ` · ${trace.status ?? "-"} · `,
            h("span", { class: "turn-tokens" }, tokenText(trace)),
            hitTag(trace.cacheHitRatio),
            trace.repairCount > 0 ? h("span", { class: "badge repair" }, `${trace.repairCount} repaired`) : false,
            trace.lossyCount > 0 ? h("span", { class: "badge lossy" }, `${trace.lossyCount} lost`) : false,
          ),
    ),
    trace === undefined ? false : switchNotice(trace),
    ...turn.messages.map((message) =>
      h(
        "div",
        { class: "stored-message", "data-seq": String(message.seq) },
        h(
          "div",
          { class: "message-head" },
          h("span", { class: `role role-${message.role}` }, message.role),
          h("code", {}, `seq ${message.seq}`),
          h("span", { class: "facts" }, time(message.createdAt)),
          message.complete ? false : h("span", { class: "remark" }, "incomplete"),
        ),
        ...message.blocks.map((block) => blockView(block)),
      ),
    ),
  );
  if (trace !== undefined) {
    const open = button("What the client changed in this turn's request", async () => {
      open.disabled = true;
      const previous = await getJson<PreviousView>(`/inspect/api/traces/${encodeURIComponent(trace.id)}/previous`);
      open.replaceWith(previousView(previous));
    });
    append(section, open);
  }
  return section;
}
