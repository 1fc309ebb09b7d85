import type { TokenTotals, TraceRow } from "../view-types.js";
import { h } from "./dom.js";

/** What of a row's figures the page shows: the view's own fields. */
type Figures = Pick<TraceRow, "inputTokens" | "cacheReadTokens" | "cacheWriteTokens" | "outputTokens">;

export function count(value: number | undefined): string {
  return value === undefined ? "-" : value.toLocaleString("en-US");
}

/** `80%`, `0.4%`: a tenth of a percent only where the whole number would say 0 or little. */
export function percent(ratio: number): string {
  const share = ratio * 100;
  return share > 0 && share < 10 ? `${share.toFixed(1)}%` : `${Math.round(share)}%`;
}

/** `200 in · 800 cached · 0 written · 7 out`; the cache's figures left out for a trace that did not keep them. */
export function tokenText(row: Figures): string {
  if (row.inputTokens === undefined) return "-";
  const parts = [`${count(row.inputTokens)} in`];
  if (row.cacheReadTokens !== undefined) parts.push(`${count(row.cacheReadTokens)} cached`);
  if ((row.cacheWriteTokens ?? 0) > 0) parts.push(`${count(row.cacheWriteTokens)} written`);
  parts.push(`${count(row.outputTokens)} out`);
  return parts.join(" · ");
}

/** `80% cache hit`, or nothing when the ratio is not known. */
export function hitTag(ratio: number | undefined): HTMLElement | false {
  if (ratio === undefined) return false;
  return h(
    "span",
    { class: ratio > 0 ? "tag cache-hit" : "tag cache-hit none", title: "cache reads over the whole prompt" },
    `${percent(ratio)} cache hit`,
  );
}

/** `qwen3-coder (local)`. */
function routeText(provider: string | undefined, model: string | undefined): string {
  return provider === undefined ? (model ?? "-") : `${model ?? "-"} (${provider})`;
}

/** The words of a switch: `model switched: a (p) → b (q), cache emptied`. */
export function switchText(row: TraceRow): string | undefined {
  const from = row.switchedFrom;
  if (from === undefined) return undefined;
  return `model switched: ${routeText(from.provider, from.model)} → ${routeText(row.provider, row.upstreamModel)}, cache emptied`;
}

/** The switch, as a notice where it cannot be missed; nothing for a turn that stayed where the last one went. */
export function switchNotice(row: TraceRow): HTMLElement | false {
  const text = switchText(row);
  return text === undefined ? false : h("p", { class: "switch-notice", role: "note" }, text);
}

/** A conversation's figures over its exchanges: `cache hit 27% over 3 exchanges (...) · 1 model switch`. */
export function totalsText(totals: TokenTotals): string {
  const parts: string[] = [];
  if (totals.exchanges > 0) {
    const hit = totals.cacheHitRatio === undefined ? "" : `cache hit ${percent(totals.cacheHitRatio)} over `;
    parts.push(`${hit}${totals.exchanges} ${totals.exchanges === 1 ? "exchange" : "exchanges"} (${tokenText(totals)})`);
  }
  if (totals.switches > 0) parts.push(`${totals.switches} model ${totals.switches === 1 ? "switch" : "switches"}`);
  return parts.join(" · ");
}
