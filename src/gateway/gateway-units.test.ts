import { describe, expect, test } from "vitest";
import { KeyChecker } from "./auth.js";
import { formatLossyHeader, lossyHeaderEntries } from "./lossy-header.js";
import { GatewayMetrics } from "./metrics.js";

describe("KeyChecker", () => {
  test("accepts configured keys only", () => {
    const keys = new KeyChecker(["alpha-key", "beta-key"]);
    expect(keys.enabled).toBe(true);
    expect(keys.accepts("alpha-key")).toBe(true);
    expect(keys.accepts("beta-key")).toBe(true);
    expect(keys.accepts("alpha-ke")).toBe(false);
    expect(keys.accepts("alpha-key ")).toBe(false);
    expect(keys.accepts("")).toBe(false);
    expect(keys.accepts(undefined)).toBe(false);
    expect(new KeyChecker([]).enabled).toBe(false);
  });
});

describe("x-parley-lossy", () => {
  test("absent when nothing was lost", () => {
    expect(formatLossyHeader(lossyHeaderEntries([], []))).toBeUndefined();
  });

  test("compact ASCII JSON of lossy and repair entries", () => {
    const header = formatLossyHeader(
      lossyHeaderEntries(
        [{ code: "cache-control-dropped", message: "dropped café ☕", path: "system[1]" }],
        [{ action: "added-interrupted-tool-result", reason: "no result", messageIndex: 3, partIndex: 0 }],
      ),
    )!;
    expect(/^[\x20-\x7e]*$/.test(header)).toBe(true);
    expect(JSON.parse(header)).toEqual([
      { code: "cache-control-dropped", message: "dropped café ☕", path: "system[1]" },
      { code: "repair:added-interrupted-tool-result", message: "no result", path: "messages[3].content[0]" },
    ]);
  });

  test("many entries are cut to whole entries with a truncated marker", () => {
    const lossy = Array.from({ length: 500 }, (_, index) => ({
      code: "x",
      message: `entry ${index} ${"m".repeat(40)}`,
    }));
    const header = formatLossyHeader(lossyHeaderEntries(lossy, []))!;
    expect(header.length).toBeLessThanOrEqual(6_000);
    const parsed = JSON.parse(header) as Array<{ code: string; message: string }>;
    const last = parsed.at(-1)!;
    expect(last.code).toBe("truncated");
    expect(last.message).toContain(`${500 - (parsed.length - 1)} more`);
  });
});

describe("GatewayMetrics", () => {
  test("renders counters and histograms in Prometheus text", () => {
    const metrics = new GatewayMetrics();
    metrics.requests.inc({ route: "POST /v1/messages", status: "200" });
    metrics.requests.inc({ route: "POST /v1/messages", status: "200" });
    metrics.errors.inc({ type: "rate_limit_error" });
    metrics.upstreamLatency.observe({ provider: "p" }, 0.02);
    metrics.countTokens("p", "m", { inputTokens: 12, outputTokens: 3, cacheReadInputTokens: 40 });
    metrics.countTokens("p", "m", { inputTokens: 1, outputTokens: 2 });
    const text = metrics.render();
    expect(text).toContain('parley_requests_total{route="POST /v1/messages",status="200"} 2');
    expect(text).toContain('parley_errors_total{type="rate_limit_error"} 1');
    expect(text).toContain('parley_upstream_latency_seconds_bucket{provider="p",le="0.01"} 0');
    expect(text).toContain('parley_upstream_latency_seconds_bucket{provider="p",le="0.025"} 1');
    expect(text).toContain('parley_upstream_latency_seconds_count{provider="p"} 1');
    expect(text).toContain('parley_tokens_total{provider="p",model="m",kind="input"} 13');
    expect(text).toContain('parley_tokens_total{provider="p",model="m",kind="cache_read"} 40');
    expect(text).toContain('parley_tokens_total{provider="p",model="m",kind="cache_write"} 0');
    expect(text).toContain('parley_tokens_total{provider="p",model="m",kind="output"} 5');
    expect(text).toContain("# TYPE parley_time_to_first_token_seconds histogram");
  });
});
