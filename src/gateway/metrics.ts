import type { Usage } from "../core/index.js";
import type { TraceWriterStats } from "../store/traces/trace-store.js";

/**
 * Prometheus text exposition, hand-written: a handful of counters and histograms do not need a client library,
 * and recording is a map update on the request path.
 */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** One series of a counter: added to in place by whoever holds it. */
interface CounterSeries {
  labels: Record<string, string>;
  value: number;
}

class Counter {
  private readonly series = new Map<string, CounterSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Record<string, string>, by = 1): void {
    this.entry(labels).value += by;
  }

  /** The series of these labels (made at 0, and rendered from then on), to be added to directly. */
  entry(labels: Record<string, string>): CounterSeries {
    const key = seriesKey(labels);
    let entry = this.series.get(key);
    if (entry === undefined) {
      entry = { labels, value: 0 };
      this.series.set(key, entry);
    }
    return entry;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const { labels, value } of this.series.values()) lines.push(`${this.name}${labelText(labels)} ${value}`);
    return lines.join("\n");
  }
}

class Histogram {
  private readonly series = new Map<
    string,
    { labels: Record<string, string>; counts: number[]; sum: number; count: number }
  >();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: number[] = LATENCY_BUCKETS,
  ) {}

  observe(labels: Record<string, string>, value: number): void {
    const key = seriesKey(labels);
    let entry = this.series.get(key);
    if (entry === undefined) {
      entry = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, entry);
    }
    for (let index = 0; index < this.buckets.length; index++) if (value <= this.buckets[index]!) entry.counts[index]!++;
    entry.sum += value;
    entry.count++;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const entry of this.series.values()) {
      this.buckets.forEach((bound, index) => {
        lines.push(`${this.name}_bucket${labelText({ ...entry.labels, le: String(bound) })} ${entry.counts[index]}`);
      });
      lines.push(`${this.name}_bucket${labelText({ ...entry.labels, le: "+Inf" })} ${entry.count}`);
      lines.push(`${this.name}_sum${labelText(entry.labels)} ${entry.sum}`);
      lines.push(`${this.name}_count${labelText(entry.labels)} ${entry.count}`);
    }
    return lines.join("\n");
  }
}

/**
 * Which series a set of labels belongs to, cheap enough for the request path: the exposition text (escaped,
 * quoted) is built only when `/metrics` is rendered.
 */
function seriesKey(labels: Record<string, string>): string {
  let key = "";
  for (const name in labels) key += `${name}\u0000${labels[name]}\u0001`;
  return key;
}

function labelText(labels: Record<string, string>): string {
  const keys = Object.keys(labels);
  if (keys.length === 0) return "";
  return `{${keys.map((key) => `${key}="${escapeLabel(labels[key]!)}"`).join(",")}}`;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function traceLines(traces: TraceWriterStats): string[] {
  return [
    "# HELP parley_traces_recorded_total Traces the store's background writer stored.",
    "# TYPE parley_traces_recorded_total counter",
    `parley_traces_recorded_total ${traces.recorded}`,
    "# HELP parley_traces_dropped_total Traces not stored: the writer was behind (queue_full) or the write failed.",
    "# TYPE parley_traces_dropped_total counter",
    `parley_traces_dropped_total{reason="queue_full"} ${traces.dropped}`,
    `parley_traces_dropped_total{reason="write_failed"} ${traces.failed}`,
    "# HELP parley_trace_queue Traces waiting for the store's background writer.",
    "# TYPE parley_trace_queue gauge",
    `parley_trace_queue ${traces.queued}`,
  ];
}

/**
 * `parley_tokens_total`'s kinds, in `countTokens`' order. The prompt is `input` + `cache_read` + `cache_write` (the
 * core's accounting, `src/core/usage.ts`): its cache hit ratio is `cache_read` over the three.
 */
const TOKEN_KINDS = ["input", "cache_read", "cache_write", "output"] as const;

export class GatewayMetrics {
  readonly requests = new Counter("parley_requests_total", "HTTP requests by route and status.");
  readonly errors = new Counter("parley_errors_total", "Error responses and stream error events by error type.");
  readonly upstreamLatency = new Histogram(
    "parley_upstream_latency_seconds",
    "Time from sending the upstream request to its response headers, retries included.",
  );
  readonly firstToken = new Histogram(
    "parley_time_to_first_token_seconds",
    "Time from the client request to the first content event of a streamed answer.",
  );
  readonly tokens = new Counter(
    "parley_tokens_total",
    "Tokens upstreams reported, by provider, upstream model and kind: the prompt's fresh input, its cache reads and cache writes, and the output.",
  );
  readonly routeSwitches = new Counter(
    "parley_route_switches_total",
    "Answered turns of a conversation that went to another provider or model than its previous answered turn, and so found none of its prompt cache.",
  );
  readonly retries = new Counter("parley_upstream_retries_total", "Upstream attempts that were retried.");
  private openStreams = 0;
  /** Per provider and model, its four `parley_tokens_total` series: one lookup per answer instead of four. */
  private readonly tokenSeries = new Map<string, readonly CounterSeries[]>();

  /** An answer's tokens, by kind, under the provider and the model it was sent to. */
  countTokens(provider: string, model: string, usage: Usage): void {
    const key = `${provider}\u0000${model}`;
    let series = this.tokenSeries.get(key);
    if (series === undefined) {
      series = TOKEN_KINDS.map((kind) => this.tokens.entry({ provider, model, kind }));
      this.tokenSeries.set(key, series);
    }
    series[0]!.value += usage.inputTokens;
    series[1]!.value += usage.cacheReadInputTokens ?? 0;
    series[2]!.value += usage.cacheCreationInputTokens ?? 0;
    series[3]!.value += usage.outputTokens;
  }

  streamOpened(): void {
    this.openStreams++;
  }

  streamClosed(): void {
    this.openStreams--;
  }

  /** With the store's trace writer counters, when there is a store. */
  render(traces?: TraceWriterStats): string {
    return `${[
      this.requests.render(),
      this.errors.render(),
      this.upstreamLatency.render(),
      this.firstToken.render(),
      this.tokens.render(),
      this.routeSwitches.render(),
      this.retries.render(),
      "# HELP parley_open_streams Streams being answered now.\n# TYPE parley_open_streams gauge",
      `parley_open_streams ${this.openStreams}`,
      ...(traces === undefined ? [] : traceLines(traces)),
    ].join("\n")}\n`;
  }
}
