import { describe, expect, test } from "vitest";
import type { StoredMessage } from "../store/conversations/conversation-store.js";
import type { TraceRecord, TraceSummary } from "../store/traces/trace-store.js";
import { conversationView } from "./conversation-view.js";
import { exchangeView } from "./exchange-view.js";
import { cacheHitRatio, tokenTotals } from "./token-view.js";

describe("the prompt cache's figures in the inspector's views", () => {
  test("the hit ratio is the cache reads over the whole prompt, unknown for a trace that kept no cache figures", () => {
    expect(cacheHitRatio({ inputTokens: 200, cacheReadTokens: 800 })).toBe(0.8);
    expect(cacheHitRatio({ inputTokens: 50, cacheReadTokens: 800, cacheWriteTokens: 150 })).toBe(0.8);
    expect(cacheHitRatio({ inputTokens: 1000, cacheReadTokens: 0, cacheWriteTokens: 0 })).toBe(0);
    expect(cacheHitRatio({ inputTokens: 1000 })).toBeUndefined();
    expect(cacheHitRatio({ inputTokens: 0, cacheReadTokens: 0 })).toBeUndefined();
  });

  const summary = (id: string, at: string, figures: Partial<TraceSummary>): TraceSummary => ({
    id,
    requestId: `req-${id}`,
    createdAt: at,
    route: "POST /v1/messages",
    durationMs: 500,
    lossyCount: 0,
    repairCount: 0,
    ...figures,
  });

  test("a conversation: each exchange's figures, its switch, and the totals of those that have figures", () => {
    const traces = [
      summary("t1", "2026-01-01T10:00:01.000Z", {
        provider: "local",
        upstreamModel: "qwen3-coder",
        inputTokens: 1000,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 10,
      }),
      summary("t2", "2026-01-01T10:00:03.000Z", {
        provider: "google",
        upstreamModel: "gemini-3-pro-preview",
        inputTokens: 1100,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 20,
        switchedFrom: { provider: "local", model: "qwen3-coder" },
      }),
      summary("t3", "2026-01-01T10:00:05.000Z", {
        provider: "google",
        upstreamModel: "gemini-3-pro-preview",
        inputTokens: 300,
        cacheReadTokens: 900,
        cacheWriteTokens: 0,
        outputTokens: 30,
      }),
      // Recorded before the cache's figures were kept: counted in no total.
      summary("t0", "2026-01-01T09:00:00.000Z", { inputTokens: 5000, outputTokens: 1 }),
    ];
    const stored: StoredMessage[] = [];
    const view = conversationView("conv", stored, traces);
    expect(view.traces.map((row) => [row.id, row.cacheHitRatio, row.switchedFrom])).toEqual([
      ["t0", undefined, undefined],
      ["t1", 0, undefined],
      ["t2", 0, { provider: "local", model: "qwen3-coder" }],
      ["t3", 0.75, undefined],
    ]);
    expect(view.tokens).toEqual({
      exchanges: 3,
      inputTokens: 2400,
      cacheReadTokens: 900,
      cacheWriteTokens: 0,
      outputTokens: 60,
      cacheHitRatio: 900 / 3300,
      switches: 1,
    });
    expect(tokenTotals([])).toEqual({
      exchanges: 0,
      inputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 0,
      switches: 0,
    });
  });

  test("an exchange's heading row has the four figures, the ratio and the switch", () => {
    const trace: TraceRecord = {
      id: "t",
      requestId: "req",
      createdAt: "2026-01-01T10:00:00.000Z",
      route: "POST /v1/messages",
      provider: "google",
      upstreamModel: "gemini-3-pro-preview",
      inputTokens: 150,
      cacheReadTokens: 600,
      cacheWriteTokens: 250,
      outputTokens: 7,
      switchedFrom: { provider: "local", model: "qwen3-coder" },
      lossy: [],
      repair: [],
      timings: {},
    };
    expect(exchangeView(trace, undefined).trace).toMatchObject({
      inputTokens: 150,
      cacheReadTokens: 600,
      cacheWriteTokens: 250,
      outputTokens: 7,
      cacheHitRatio: 0.6,
      switchedFrom: { provider: "local", model: "qwen3-coder" },
    });
  });
});
