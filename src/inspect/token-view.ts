import type { TokenTotals, TraceRow } from "./view-types.js";

type Figures = Pick<TraceRow, "inputTokens" | "cacheReadTokens" | "cacheWriteTokens">;

/**
 * The share of the prompt read from the provider's cache: cache reads over the whole prompt, which is the fresh input,
 * the reads and the writes (the core's accounting, `src/core/usage.ts`). Unknown for a trace from before the cache's
 * figures were kept, or one with no prompt counted.
 */
export function cacheHitRatio(figures: Figures): number | undefined {
  const { inputTokens, cacheReadTokens } = figures;
  if (inputTokens === undefined || cacheReadTokens === undefined) return undefined;
  const prompt = inputTokens + cacheReadTokens + (figures.cacheWriteTokens ?? 0);
  return prompt > 0 ? cacheReadTokens / prompt : undefined;
}

/** A conversation's figures, added over the exchanges that have them all. */
export function tokenTotals(rows: readonly TraceRow[]): TokenTotals {
  const totals: TokenTotals = {
    exchanges: 0,
    inputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 0,
    switches: 0,
  };
  for (const row of rows) {
    if (row.switchedFrom !== undefined) totals.switches++;
    if (row.inputTokens === undefined || row.cacheReadTokens === undefined) continue;
    totals.exchanges++;
    totals.inputTokens += row.inputTokens;
    totals.cacheReadTokens += row.cacheReadTokens;
    totals.cacheWriteTokens += row.cacheWriteTokens ?? 0;
    totals.outputTokens += row.outputTokens ?? 0;
  }
  const ratio = cacheHitRatio(totals);
  if (ratio !== undefined) totals.cacheHitRatio = ratio;
  return totals;
}
