import { availableParallelism } from "node:os";
import { type BenchSection, fixed, median, table } from "./harness.js";
import { claudeCodeLikeBody } from "./support/bodies.js";
import { closedLoop, type LoadResult, type LoadTarget } from "./support/load.js";
import { canReadProcessStats, pinningAvailable, pinProcess, readProcessStats } from "./support/process-stats.js";
import {
  type ChildServerLayer,
  SERVER_LAYERS,
  type ServerLayer,
  SSE_FRAMES,
  sseEnded,
  startChildServerLayer,
} from "./support/server-layers.js";

/**
 * The HTTP server layer under the gateway's hot path: node:http (what Parley uses), fastify, and hono on
 * @hono/node-server, each in its own process, all answering the same handler (see support/server-layers.ts).
 * One run, interleaved (rep -> mode -> concurrency -> layer, the layer order rotating every rep), medians of
 * the per-rep ratios to node:http, so that machine drift hits every layer alike.
 */
const REPS = 4;
const CELL_MS = 1_200;
const WARMUP_MS = 800;
const CONCURRENCIES = [1, 16] as const;
const MODES = ["json", "stream"] as const;
const BODY_BYTES = 20_000;
/** Ratios within this band of 1 count as a tie: below it, run-to-run noise on a shared machine dominates. */
const TIE = 0.05;
const BASELINE: ServerLayer = "node:http";

type Mode = (typeof MODES)[number];

interface Cell extends LoadResult {
  /** The server process's CPU (user + system) per request, or NaN when /proc cannot be read. */
  cpuMsPerRequest: number;
  /** This load generator's CPU as a share of the cell's time (1 = its one core is full). */
  loadShare: number;
}

export default async function httpServersBench(): Promise<BenchSection> {
  const cores = availableParallelism();
  const procStats = canReadProcessStats();
  const pinned = pinningAvailable(cores) && procStats;
  const serverCore = pinned ? 1 : undefined;
  const targets = { json: target(false), stream: target(true) };

  const servers = new Map<ServerLayer, ChildServerLayer>();
  const unpin = pinned ? pinProcess(process.pid, 0) : () => {};
  try {
    for (const layer of SERVER_LAYERS) servers.set(layer, await startChildServerLayer(layer, serverCore));
    const at = (layer: ServerLayer, mode: Mode): LoadTarget => ({ ...targets[mode], origin: servers.get(layer)!.url });
    const sizes = await replySizes(at(BASELINE, "json"), at(BASELINE, "stream"));

    for (const layer of SERVER_LAYERS) for (const mode of MODES) await closedLoop(at(layer, mode), 16, WARMUP_MS);

    const cells = new Map<string, Cell[]>();
    for (let rep = 0; rep < REPS; rep++) {
      const order = SERVER_LAYERS.map((_, index) => SERVER_LAYERS[(index + rep) % SERVER_LAYERS.length]!);
      for (const mode of MODES) {
        for (const concurrency of CONCURRENCIES) {
          for (const layer of order) {
            const cell = await measure(servers.get(layer)!.pid, at(layer, mode), concurrency, procStats);
            push(cells, `${layer}|${mode}|${concurrency}`, cell);
          }
        }
      }
    }
    return {
      title: "HTTP server layer: node:http against fastify and hono on node-server",
      markdown: report({ cells, cores, pinned, procStats, bodyBytes: targets.json.body.length, sizes }),
    };
  } finally {
    unpin();
    for (const server of servers.values()) await server.stop();
  }
}

/** The gateway's kind of request, padded with more tool turns to about 20 KB of JSON. */
function target(stream: boolean): LoadTarget {
  const body = claudeCodeLikeBody(stream);
  const messages = body.messages as unknown[];
  // user, 4 × (assistant tool_use, user tool_result), assistant, user: repeat the tool turns before the last two.
  const toolTurns = messages.slice(1, 9);
  const tail = messages.slice(-2);
  const head = messages.slice(0, -2);
  while (JSON.stringify({ ...body, messages: [...head, ...tail] }).length < BODY_BYTES) head.push(...toolTurns);
  return {
    origin: "",
    path: "/v1/messages",
    body: JSON.stringify({ ...body, messages: [...head, ...tail] }),
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": "bench" },
    check: stream ? sseEnded : (text) => text.startsWith('{"id":"msg_') && text.endsWith("}}"),
  };
}

async function replySizes(json: LoadTarget, stream: LoadTarget): Promise<{ json: number; stream: number }> {
  const size = async (load: LoadTarget) => {
    const response = await fetch(`${load.origin}${load.path}`, {
      method: "POST",
      headers: load.headers,
      body: load.body,
    });
    const text = await response.text();
    if (response.status !== 200 || !load.check(text)) throw new Error(`unexpected answer: ${text.slice(0, 300)}`);
    return Buffer.byteLength(text);
  };
  return { json: await size(json), stream: await size(stream) };
}

async function measure(pid: number, load: LoadTarget, concurrency: number, procStats: boolean): Promise<Cell> {
  const before = procStats ? readProcessStats(pid).cpuMs : Number.NaN;
  const own = process.cpuUsage();
  const result = await closedLoop(load, concurrency, CELL_MS);
  const usage = process.cpuUsage(own);
  const after = procStats ? readProcessStats(pid).cpuMs : Number.NaN;
  return {
    ...result,
    cpuMsPerRequest: (after - before) / Math.max(1, result.requests + result.errors),
    loadShare: (usage.user + usage.system) / 1000 / result.durationMs,
  };
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

interface ReportInput {
  cells: Map<string, Cell[]>;
  cores: number;
  pinned: boolean;
  procStats: boolean;
  bodyBytes: number;
  sizes: { json: number; stream: number };
}

type Figure = "perSecond" | "p50" | "p99" | "cpuMsPerRequest";

const geometricMean = (values: number[]) =>
  Math.exp(values.reduce((sum, value) => sum + Math.log(value), 0) / values.length);
const percent = (ratio: number) => `${fixed(Math.abs(ratio - 1) * 100, 0)} %`;

function report(input: ReportInput): string {
  const { cells } = input;
  const get = (layer: ServerLayer, mode: Mode, concurrency: number) => cells.get(`${layer}|${mode}|${concurrency}`)!;
  /** Median over reps of the layer's figure divided by node:http's in the same rep. */
  const ratio = (layer: ServerLayer, mode: Mode, concurrency: number, figure: Figure) => {
    const base = get(BASELINE, mode, concurrency);
    return median(get(layer, mode, concurrency).map((cell, rep) => cell[figure] / base[rep]![figure]));
  };
  const value = (layer: ServerLayer, mode: Mode, concurrency: number, figure: Figure) =>
    median(get(layer, mode, concurrency).map((cell) => cell[figure]));

  const rows: Array<Array<string | number>> = [];
  for (const mode of MODES) {
    for (const concurrency of CONCURRENCIES) {
      for (const layer of SERVER_LAYERS) {
        const both = (figure: Figure, digits: number) =>
          layer === BASELINE
            ? fixed(value(layer, mode, concurrency, figure), digits)
            : `${fixed(value(layer, mode, concurrency, figure), digits)} (×${fixed(ratio(layer, mode, concurrency, figure))})`;
        rows.push([
          mode,
          concurrency,
          layer,
          both("perSecond", 0),
          both("p50", 3),
          both("p99", 3),
          input.procStats ? both("cpuMsPerRequest", 3) : "n/a",
          `${fixed(median(get(layer, mode, concurrency).map((cell) => cell.loadShare)) * 100, 0)} %`,
        ]);
      }
    }
  }

  const all = [...cells.values()].flat();
  const errors = all.reduce((sum, cell) => sum + cell.errors, 0);
  const firstError = all.find((cell) => cell.firstError)?.firstError;
  const loadBound = MODES.some((mode) => median(get(BASELINE, mode, 16).map((cell) => cell.loadShare)) >= 0.9);

  return [
    `Handler: \`POST /v1/messages\` with a ${fixed(input.bodyBytes / 1000, 1)} KB Anthropic Messages body (the Claude-Code-like`,
    `request padded with more tool turns), read whole and parsed; the answer is a ${fixed(input.sizes.json / 1000, 1)} KB JSON`,
    `message ("json") or, when the body says \`"stream": true\`, ${SSE_FRAMES} SSE frames (${fixed(input.sizes.stream / 1000, 1)} KB) each written on its own`,
    `("stream"). node:http writes with \`res.write\`; fastify uses its own JSON body parser and \`reply.send\` (an object,`,
    "or a `Readable` of the frames); hono uses `c.req.json()`, `c.json()` and `streamSSE` on `@hono/node-server`. Every",
    "layer sends the same bytes. Each server runs in its own process (through tsx), no logging; closed loop (undici,",
    `one connection per worker), ${REPS} interleaved reps of ${CELL_MS / 1000} s per cell, layer order rotating each rep; medians.`,
    input.pinned
      ? `Pinning: the servers on core 1 (\`taskset -c 1\`, one measured at a time), the load generator on core 0; ${input.cores} cores.`
      : `Pinning: not available here (${input.cores} core(s) or no taskset): servers and load share the machine.`,
    `"(×r)" is the median over reps of the figure divided by node:http's in the same rep. Server CPU is the server`,
    `process's user + system time from /proc/PID/stat per request. "load CPU" is the load generator's share of its`,
    `core: near 100 % the cell is bound by the load side, not the server. Requests that failed their check: ${errors}${firstError ? ` (first: ${firstError})` : ""}.`,
    "",
    table(["mode", "c", "server layer", "req/s", "p50 ms", "p99 ms", "server CPU ms/req", "load CPU"], rows),
    "",
    conclusion(input, ratio, errors, loadBound),
  ].join("\n");
}

/** What the figures of this run mean for Parley's choice of node:http; computed, never written in advance. */
function conclusion(
  input: ReportInput,
  ratio: (layer: ServerLayer, mode: Mode, concurrency: number, figure: Figure) => number,
  errors: number,
  loadBound: boolean,
): string {
  const contenders = SERVER_LAYERS.filter((layer) => layer !== BASELINE);
  const cellKeys = MODES.flatMap((mode) => CONCURRENCIES.map((concurrency) => [mode, concurrency] as const));
  const summary = contenders.map((layer) => {
    const over = (figure: Figure) =>
      geometricMean(cellKeys.map(([mode, concurrency]) => ratio(layer, mode, concurrency, figure)));
    return {
      layer,
      rate: over("perSecond"),
      p50: over("p50"),
      cpu: input.procStats ? over("cpuMsPerRequest") : Number.NaN,
    };
  });
  const describe = (row: (typeof summary)[number]) =>
    `${row.layer} ×${fixed(row.rate)} req/s, ×${fixed(row.p50)} p50` +
    (input.procStats ? `, ×${fixed(row.cpu)} CPU per request` : "");
  const lines = [
    `Over the four cells (geometric mean of the ratios to node:http): ${summary.map(describe).join("; ")}.`,
  ];
  if (errors > 0) {
    lines.push("Some requests failed their check in this run, so it supports no conclusion; run it again.");
    return lines.join("\n");
  }
  const band = `${fixed(TIE * 100, 0)} %`;
  const judged = summary.map((row) => {
    const gains: string[] = [];
    const costs: string[] = [];
    const sort = (beats: boolean, loses: boolean, text: string) => {
      if (beats) gains.push(text);
      else if (loses) costs.push(text);
    };
    sort(row.rate > 1 + TIE, row.rate < 1 - TIE, `${percent(row.rate)} ${row.rate > 1 ? "more" : "fewer"} req/s`);
    sort(row.p50 < 1 - TIE, row.p50 > 1 + TIE, `${percent(row.p50)} ${row.p50 < 1 ? "lower" : "higher"} p50`);
    if (input.procStats)
      sort(
        row.cpu < 1 - TIE,
        row.cpu > 1 + TIE,
        `${percent(row.cpu)} ${row.cpu < 1 ? "less" : "more"} CPU per request`,
      );
    return { layer: row.layer, gains, costs };
  });
  const verdicts = judged.map(({ layer, gains, costs }) =>
    gains.length === 0 && costs.length === 0
      ? `${layer} was within ${band} of node:http on every figure`
      : `${layer}: ${[...gains.map((gain) => `${gain} (better)`), ...costs].join(", ")}`,
  );
  lines.push(`Beyond a ${band} noise band, over the four cells: ${verdicts.join("; ")}.`);
  const winners = judged.filter((row) => row.gains.length > 0).map((row) => row.layer);
  if (winners.length === 0) {
    lines.push(
      "No framework beat node:http on any of these figures in this run, which supports Parley's choice of node:http:",
      "a framework on the hot path would add a dependency without a measured gain.",
    );
  } else {
    lines.push(
      `${winners.join(" and ")} beat node:http on some figure in this run, so Parley's choice of node:http stands only if`,
      "that gain is outweighed by the costs above and by a framework dependency on the hot path; re-measure before",
      "changing, as one run on a shared machine can mislead.",
    );
  }
  if (loadBound) {
    lines.push(
      "At c=16 the load generator's core was nearly full, so req/s there is partly bound by the load side; server CPU per request is the sturdier figure.",
    );
  }
  return lines.join("\n");
}
