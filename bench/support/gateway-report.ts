import { fixed, median, table } from "../harness.js";
import type { ClientLayer, LoadResult } from "./load.js";
import { STREAM_FRAMES } from "./mock-upstream.js";

/** The gateway benchmark's settings, cell shapes and its markdown report (the measuring is in gateway.bench.ts). */

export const REPS = 3;
export const CELL_MS = 1_500;
export const WARMUP_MS = 1_000;
export const PACED_MS = 3_000;
export const PACED_CONCURRENCY = 16;
export const FRAME_DELAY_MS = 5;
export const CONCURRENCIES = [1, 16, 128] as const;
export const MODES = ["stream", "json"] as const;
export const STARTS = 5;
export const MB = 1024 * 1024;

export type Mode = (typeof MODES)[number];

export interface GatewayCell extends LoadResult {
  cpuMs: number;
  rssMaxBytes: number;
}

/** A cell with the CPU of the other side (this load generator and the mock upstream), to see who limits it. */
export interface LoadSide {
  loadCpuMs: number;
}

export interface LayerRow {
  to: string;
  layer: ClientLayer;
  concurrency: number;
  perSecond: number;
  cpuMsPerRequest: number;
}

export interface ReportInput {
  cores: number;
  pinned: boolean;
  direct: Map<string, Array<LoadResult & LoadSide>>;
  parley: Map<string, Array<GatewayCell & LoadSide>>;
  pacedDirect: LoadResult[];
  pacedParley: GatewayCell[];
  /** The bare pass-through proxy in every cell (by `mode/c`, one per rep), and on the paced stream. */
  bare: Map<string, GatewayCell[]>;
  barePaced: GatewayCell[];
  /** The TCP relay, the same cells. */
  relay: Map<string, GatewayCell[]>;
  relayPaced: GatewayCell[];
  startUps: Array<{ readyMs: number; firstOkMs: number }>;
  layers: LayerRow[];
  errors: number;
  firstError: string | undefined;
}

/** The load generator's and the mock's CPU as a share of the cell's time (100 % = their one core is full). */
const busy = (cells: Array<LoadResult & LoadSide>) =>
  `${fixed(median(cells.map((cell) => cell.loadCpuMs / cell.durationMs)) * 100, 0)} %`;

const cpuPerRequest = (cell: GatewayCell) => cell.cpuMs / Math.max(1, cell.requests + cell.errors);

/** One target's figures in one cell, each rep against the direct run of the same rep. */
interface CellFigures {
  addedP50: number;
  addedP99: number;
  ratio: number;
  rate: number;
  cpu: number;
  rss: number;
}

function cellFigures(cells: GatewayCell[], direct: LoadResult[]): CellFigures {
  return {
    addedP50: median(cells.map((cell, rep) => cell.p50 - direct[rep]!.p50)),
    addedP99: median(cells.map((cell, rep) => cell.p99 - direct[rep]!.p99)),
    ratio: median(cells.map((cell, rep) => cell.perSecond / direct[rep]!.perSecond)),
    rate: median(cells.map((cell) => cell.perSecond)),
    cpu: median(cells.map(cpuPerRequest)),
    rss: Math.max(...cells.map((cell) => cell.rssMaxBytes)),
  };
}

const signed = (value: number, digits: number) => `${value >= 0 ? "+" : ""}${fixed(value, digits)}`;

export function report(input: ReportInput): string {
  const { direct, parley } = input;
  const rows: Array<Array<string | number>> = [];
  const floorRows: Array<Array<string | number>> = [];
  const summary = new Map<string, CellFigures>();
  const bareSummary = new Map<string, CellFigures>();
  const relaySummary = new Map<string, CellFigures>();
  for (const mode of MODES) {
    for (const concurrency of CONCURRENCIES) {
      const key = `${mode}/${concurrency}`;
      const d = direct.get(key)!;
      const p = parley.get(key)!;
      const figures = cellFigures(p, d);
      const bare = cellFigures(input.bare.get(key)!, d);
      const relay = cellFigures(input.relay.get(key)!, d);
      summary.set(key, figures);
      bareSummary.set(key, bare);
      relaySummary.set(key, relay);
      rows.push([
        mode,
        concurrency,
        fixed(median(d.map((cell) => cell.perSecond)), 0),
        fixed(figures.rate, 0),
        fixed(figures.ratio),
        `${fixed(median(d.map((cell) => cell.p50)))} / ${fixed(median(d.map((cell) => cell.p99)))}`,
        `${fixed(median(p.map((cell) => cell.p50)))} / ${fixed(median(p.map((cell) => cell.p99)))}`,
        signed(figures.addedP50, 3),
        signed(figures.addedP99, 2),
        fixed(figures.cpu, 3),
        `${fixed(median(p.map((cell) => cell.cpuMs / cell.durationMs)) * 100, 0)} %`,
        fixed(figures.rss / MB, 1),
        `${busy(d)} / ${busy(p)}`,
      ]);
      const triple = (pick: (figures: CellFigures) => string) => [relay, bare, figures].map(pick).join(" / ");
      floorRows.push([
        mode,
        concurrency,
        triple((f) => fixed(f.ratio)),
        triple((f) => signed(f.addedP50, 3)),
        triple((f) => fixed(f.cpu, 3)),
        triple((f) => fixed(f.rss / MB, 0)),
      ]);
    }
  }
  const perFrame = (cells: GatewayCell[]) =>
    median(cells.map((cell) => cell.cpuMs / Math.max(1, (cell.requests + cell.errors) * STREAM_FRAMES)));
  const cpuPerFrame = perFrame(input.pacedParley);
  const bareFrame = perFrame(input.barePaced);
  const bareRequest = bareSummary.get("json/16")!.cpu;
  const bareRss = bareSummary.get("stream/128")!.rss;
  const relayFrame = perFrame(input.relayPaced);
  const relayRequest = relaySummary.get("json/16")!.cpu;
  const relayRss = relaySummary.get("stream/128")!.rss;
  const parleyRss = summary.get("stream/128")!.rss;
  const pacedRow = (name: string, cells: LoadResult[]) => [
    name,
    fixed(median(cells.map((cell) => cell.perSecond)), 1),
    fixed(median(cells.map((cell) => cell.p50))),
    fixed(median(cells.map((cell) => cell.p99))),
    fixed(median(cells.map((cell) => cell.headersP50))),
  ];
  const firstOk = median(input.startUps.map((run) => run.firstOkMs));
  const ready = median(input.startUps.map((run) => run.readyMs));
  const firstOkValues = input.startUps.map((run) => run.firstOkMs);

  /**
   * Each target is judged the same way on Parley and on both floors: a target the TCP relay misses cannot be
   * met by any Node gateway here; one the bare HTTP proxy misses, by none built on Node's HTTP layers.
   */
  interface Judged {
    measured: string;
    met: boolean;
  }
  interface Floored {
    summary: Map<string, CellFigures>;
    frame: number;
  }
  const judges: Array<{ name: string; judge: (floored: Floored) => Judged }> = [
    {
      name: "added p50 at c=1 <= 0.3 ms",
      judge: ({ summary: of }) => ({
        measured: `stream ${fixed(of.get("stream/1")!.addedP50, 3)} ms, json ${fixed(of.get("json/1")!.addedP50, 3)} ms`,
        met: of.get("stream/1")!.addedP50 <= 0.3 && of.get("json/1")!.addedP50 <= 0.3,
      }),
    },
    {
      name: "CPU per non-streamed request <= 0.25 ms (c=16)",
      judge: ({ summary: of }) => ({
        measured: `${fixed(of.get("json/16")!.cpu, 3)} ms`,
        met: of.get("json/16")!.cpu <= 0.25,
      }),
    },
    {
      name: "CPU per streamed upstream frame <= 0.03 ms (paced, c=16)",
      judge: ({ frame }) => ({ measured: `${fixed(frame, 4)} ms`, met: frame <= 0.03 }),
    },
    {
      name: ">= 4000 req/s or >= 0.8 of direct (best of c=16/128)",
      judge: ({ summary: of }) => {
        const best = (mode: Mode) =>
          [16, 128].map((concurrency) => of.get(`${mode}/${concurrency}`)!).sort((a, b) => b.rate - a.rate)[0]!;
        return {
          measured: MODES.map(
            (mode) => `${mode} ${fixed(best(mode).rate, 0)} req/s = ${fixed(best(mode).ratio)} of direct`,
          ).join("; "),
          met: MODES.every((mode) => best(mode).rate >= 4000 || best(mode).ratio >= 0.8),
        };
      },
    },
    {
      name: "RSS <= 80 MB at c=128",
      judge: ({ summary: of }) => {
        const rss = Math.max(of.get("stream/128")!.rss, of.get("json/128")!.rss);
        return { measured: `${fixed(rss / MB, 1)} MB`, met: rss <= 80 * MB };
      },
    },
  ];
  const targets = judges.map(({ name, judge }) => ({
    name,
    parley: judge({ summary, frame: cpuPerFrame }),
    bare: judge({ summary: bareSummary, frame: bareFrame }),
    relay: judge({ summary: relaySummary, frame: relayFrame }),
  }));
  const startUp = {
    name: "start to first 200 <= 0.25 s",
    parley: { measured: `${fixed(firstOk / 1000, 3)} s`, met: firstOk <= 250 },
  };
  const met = [...targets, startUp].filter((row) => row.parley.met).map((row) => row.name);
  const missed = [...targets, startUp].filter((row) => !row.parley.met).map((row) => row.name);
  const belowRelay = targets.filter((row) => !row.parley.met && !row.relay.met).map((row) => row.name);
  const belowBare = targets.filter((row) => !row.parley.met && row.relay.met && !row.bare.met).map((row) => row.name);
  const verdict = (row: (typeof targets)[number]) =>
    row.parley.met
      ? "yes"
      : !row.relay.met
        ? "**no**: the TCP relay alone misses it"
        : !row.bare.met
          ? "**no**: the bare HTTP proxy alone misses it"
          : "**no**";

  return [
    `Load: a Claude-Code-like request (system prompt of 2 blocks with cache_control, 11 messages with 4`,
    `tool_use/tool_result pairs, 5 tools), answered by a mock OpenAI-compatible upstream with 64 tokens (${STREAM_FRAMES} SSE`,
    `frames in one write, or one JSON body). "direct" sends the body Parley sent upstream straight to the mock. Closed`,
    `loop (undici, one connection per worker), ${REPS} interleaved repetitions of ${CELL_MS / 1000} s per cell, medians.`,
    input.pinned
      ? `Pinning: the gateway on core 1 (\`taskset -c 1\`), the mock and the load generator on core 0; ${input.cores} cores.`
      : `Pinning: not available here (${input.cores} core(s) or no taskset): gateway, mock and load share the machine.`,
    `The gateway is \`parley serve\` built from the current sources, run by plain node, in-memory store, traces off,`,
    `info logs written and discarded. CPU from /proc/PID/stat (utime+stime), RSS sampled every 100 ms.`,
    `"load side CPU" is the load generator's and the mock's CPU as a share of their one core: near 100 % the`,
    `cell is bound by the load side, not by the gateway. Requests that failed their check: ${input.errors}${input.firstError ? ` (first: ${input.firstError})` : ""}.`,
    "",
    table(
      [
        "mode",
        "c",
        "direct req/s",
        "Parley req/s",
        "ratio",
        "direct p50 / p99 ms",
        "Parley p50 / p99 ms",
        "added p50 ms",
        "added p99 ms",
        "gateway CPU ms/req",
        "gateway CPU",
        "gateway RSS max MB",
        "load side CPU (direct / Parley)",
      ],
      rows,
    ),
    "",
    `Paced upstream (${FRAME_DELAY_MS} ms between frames, so every frame arrives in its own read), c=${PACED_CONCURRENCY}, 2 × ${PACED_MS / 1000} s:`,
    "",
    table(
      ["target", "req/s", "p50 ms", "p99 ms", "headers p50 ms"],
      [pacedRow("direct", input.pacedDirect), pacedRow("Parley", input.pacedParley)],
    ),
    "",
    `Gateway CPU per upstream frame: ${fixed(cpuPerFrame, 4)} ms (${fixed(median(input.pacedParley.map(cpuPerRequest)), 2)} ms per request`,
    `of ${STREAM_FRAMES} frames). Parley's headers wait for the first content frame (so that an upstream error before`,
    `any content gets a real status), hence its later "headers" time.`,
    "",
    "The floors, pinned like the gateway and measured in the same run, plain JavaScript run by plain node like",
    "the built gateway (so that memory compares too):",
    "",
    "- the bare HTTP proxy: the layers Parley uses (node:http in front, undici's pool behind through its dispatch",
    "  handlers), the body parsed once, the answer's bytes written back unconverted. What Parley costs above it is",
    "  its own work (validation, conversion, repair, logs, metrics); the rest is Node's HTTP.",
    "- the TCP relay: each client connection piped to an upstream connection of its own, no HTTP parsing at all;",
    "  what it costs Node to move the same bytes through one process. A target below it cannot be met by any",
    "  gateway running on Node on this machine.",
    "",
    table(
      ["figure", "TCP relay", "bare HTTP proxy", "Parley", "Parley / bare"],
      [
        [
          "CPU ms per non-streamed request (c=16)",
          fixed(relayRequest, 3),
          fixed(bareRequest, 3),
          fixed(summary.get("json/16")!.cpu, 3),
          fixed(summary.get("json/16")!.cpu / bareRequest),
        ],
        [
          "CPU ms per streamed frame (paced, c=16)",
          fixed(relayFrame, 4),
          fixed(bareFrame, 4),
          fixed(cpuPerFrame, 4),
          fixed(cpuPerFrame / bareFrame),
        ],
        [
          "RSS max MB (stream, c=128)",
          fixed(relayRss / MB, 1),
          fixed(bareRss / MB, 1),
          fixed(parleyRss / MB, 1),
          fixed(parleyRss / bareRss),
        ],
      ],
    ),
    "",
    "Every cell through the floors, each against the direct run of the same rep (relay / bare HTTP proxy / Parley):",
    "",
    table(["mode", "c", "req/s, share of direct", "added p50 ms", "CPU ms/req", "RSS max MB"], floorRows),
    "",
    `Start-up: spawn of \`parley serve\` to the first 200 of a real request, median of ${STARTS}: ${fixed(firstOk / 1000, 3)} s`,
    `(${fixed(Math.min(...firstOkValues) / 1000, 3)}-${fixed(Math.max(...firstOkValues) / 1000, 3)} s); to the listening line ${fixed(ready / 1000, 3)} s.`,
    "",
    "HTTP client layers (the load generator's own CPU per request; same server, closed loop, 2 × 1 s, medians).",
    "The gateway talks to upstreams through undici's pooled `Agent` and serves clients with node:http;",
    "keep-alive off shows what a client that opens a connection per request costs.",
    "",
    table(
      ["to", "client layer", "c", "req/s", "client CPU ms/req"],
      input.layers.map((row) => [
        row.to,
        row.layer,
        row.concurrency,
        fixed(row.perSecond, 0),
        fixed(row.cpuMsPerRequest, 3),
      ]),
    ),
    "",
    table(
      ["target (issue 3)", "Parley", "TCP relay, same run", "bare HTTP proxy, same run", "met"],
      [
        ...targets.map((row) => [row.name, row.parley.measured, row.relay.measured, row.bare.measured, verdict(row)]),
        [startUp.name, startUp.parley.measured, "—", "—", startUp.parley.met ? "yes" : "**no**"],
      ],
    ),
    "",
    missed.length === 0
      ? "All targets are met in this run."
      : `Met: ${met.length === 0 ? "none" : met.join("; ")}. Not met: ${missed.join("; ")}.` +
        (belowRelay.length === 0
          ? ""
          : ` Below what a bare TCP relay reaches in the same run: ${belowRelay.join("; ")}.`) +
        (belowBare.length === 0
          ? ""
          : ` Below what the bare HTTP proxy reaches in the same run: ${belowBare.join("; ")}.`),
  ].join("\n");
}
