import { fixed, median, table } from "../harness.js";
import type { ProfileSummary } from "./cpu-profile.js";
import { type GatewayCell, MB } from "./gateway-report.js";
import type { LoadResult, LoadTarget } from "./load.js";
import { STREAM_FRAMES } from "./mock-upstream.js";
import { type TraceFloors, traceFloorReport } from "./trace-floor.js";

/** The headline section's cells and its markdown (the measuring is in peer.bench.ts). */

export const LARGE_CONCURRENCIES = [1, 4] as const;

export interface System {
  name: string;
  pid: number;
  /** The process that serves the paced cells (the peers and Parley take one upstream each). */
  pacedPid: number;
  targets: { json: LoadTarget; stream: LoadTarget; paced: LoadTarget };
  peer?: boolean;
  floor?: boolean;
  /** Another build of Parley run as users run it (`PARLEY_BENCH_PREVIOUS`): a change measured against its base. */
  previous?: boolean;
}

/** Cells by "mode/concurrency" (and "paced"), one per rep. */
export type Cells = Map<string, GatewayCell[]>;

export interface PeerRun {
  systems: System[];
  reps: number;
  cellMs: number;
  pacedMs: number;
  direct: Map<string, LoadResult[]>;
  cells: Map<string, Cells>;
  large: {
    bodyBytes: number;
    direct: Map<string, LoadResult[]>;
    parley: Cells;
    bare: Cells;
  };
  skipped: string[];
  /** µs of JSON work per non-streamed request any translating gateway does beyond the bare proxy (peer.bench.ts). */
  jsonFloor?: { request: number; frame: number; logLine: number };
  /** µs per trace of the least work that keeps a trace of the cells' bodies (support/trace-floor.ts). */
  traceFloor?: TraceFloors;
  /** The default config profiled under the json c=16 load (see peer.bench.ts). */
  profile?: { requests: number; main: ProfileSummary; workers: ProfileSummary[] };
}

const cpu = (cell: GatewayCell) => cell.cpuMs / Math.max(1, cell.requests + cell.errors);
const cpuPerFrame = (cell: GatewayCell) => cpu(cell) / STREAM_FRAMES;

interface Figure {
  name: string;
  key: string;
  /** The figure of one cell; `rep` finds the direct run of the same rep. */
  of: (cell: GatewayCell, rep: number) => number;
  /** Lower is better (CPU, latency, memory), else higher (req/s). */
  lower: boolean;
}

export function peerReport(run: PeerRun): string {
  const parley = run.systems[0]!;
  const off = run.systems[1]!;
  const bare = run.systems.find((system) => system.floor)!;
  const peers = run.systems.filter((system) => system.peer);
  const cells = (system: System, key: string) => run.cells.get(system.name)!.get(key) ?? [];
  const added = (key: string) => (cell: GatewayCell, rep: number) => cell.p50 - run.direct.get(key)![rep]!.p50;
  const figures: Figure[] = [
    { name: "CPU ms per json request, c=16", key: "json/16", of: cpu, lower: true },
    { name: "CPU ms per stream request, c=16", key: "stream/16", of: cpu, lower: true },
    { name: "CPU ms per paced stream frame, c=16", key: "paced", of: cpuPerFrame, lower: true },
    { name: "req/s, json, c=16", key: "json/16", of: (cell) => cell.perSecond, lower: false },
    { name: "req/s, stream, c=16", key: "stream/16", of: (cell) => cell.perSecond, lower: false },
    { name: "added p50 ms, json, c=1", key: "json/1", of: added("json/1"), lower: true },
    { name: "added p50 ms, stream, c=1", key: "stream/1", of: added("stream/1"), lower: true },
  ];
  const value = (system: System, figure: Figure) =>
    median(cells(system, figure.key).map((cell, rep) => figure.of(cell, rep)));
  const rssMax = (system: System) =>
    Math.max(...[...run.cells.get(system.name)!.values()].flat().map((c) => c.rssMaxBytes));
  // Per rep: the subject's figure over the best peer's in that rep (cells measured moments apart); then the median.
  const toBestPeer = (subject: System, figure: Figure) =>
    median(
      cells(subject, figure.key).map((cell, rep) => {
        const peerValues = peers.map((peer) => figure.of(cells(peer, figure.key)[rep]!, rep));
        const best = figure.lower ? Math.min(...peerValues) : Math.max(...peerValues);
        return figure.of(cell, rep) / best;
      }),
    );
  const toSystem = (subject: System, other: System, figure: Figure) =>
    median(
      cells(subject, figure.key).map(
        (cell, rep) => figure.of(cell, rep) / figure.of(cells(other, figure.key)[rep]!, rep),
      ),
    );
  const bestPeerRss = () => Math.min(...peers.map(rssMax));

  const figureRows = figures.map((figure) => [
    figure.name,
    ...run.systems.map((system) => fixed(value(system, figure), figure.key === "paced" ? 4 : figure.lower ? 3 : 0)),
  ]);
  figureRows.push(["RSS max MB", ...run.systems.map((system) => fixed(rssMax(system) / MB, 1))]);

  const lines: string[] = [
    "Every system below ran in the same run, each cell of each one right after the others' (the order turning",
    "every rep), on the same mock OpenAI-compatible upstream (64 tokens: 67 SSE frames in one write, or one JSON",
    "body) and the same Claude Code-like request (a system prompt of 2 blocks, 11 messages with 4 tool turns,",
    "5 tools; 6.5 KB).",
    "",
    "- **Parley**: `node dist/parley.js serve --upstream URL --port 0`, the package's bin as `npx parley serve`",
    "  runs it, in a fresh empty folder as its working directory, with no config file: the default SQLite store",
    "  (`./.parley/parley.db`), traces on, info logs to a discarded stderr.",
    "- **Parley, traces off**: the same, with a config file holding only `traces: { enabled: false }`.",
    "- **bare proxy**: node:http in front, undici's pool behind, the body parsed once, the answer's bytes passed",
    "  back unconverted (`bench/support/bare-proxy.mjs`): the floor of a Node gateway with Parley's layers.",
    "- **llms 1.0.53** (`@musistudio/llms`, its CJS build, logger off) and **claude-code-router 2.0.0**",
    "  (`ccr start`, a devDependency, one provider and `Router.default`, log off, headless under a HOME of its own).",
    "",
    `Pinning: every server on core 1 (\`taskset\`), the mock and this load generator on core 0. Closed loop (undici,`,
    `one connection per worker); ${run.reps} reps of ${run.cellMs / 1000} s per cell, paced stream (5 ms between frames,`,
    `so every frame is a read of its own) 2 × ${run.pacedMs / 1000} s; medians. CPU is the server process's`,
    "utime + stime from /proc (Parley's trace writer thread included); RSS sampled every 100 ms. Added p50 is",
    "against the same body sent straight to the mock in the same rep. A longer run of this section alone:",
    "`PARLEY_BENCH_REPS=5 PARLEY_BENCH_CELL_MS=3000 npx tsx bench/run.ts peer` (printed, not written here).",
    "",
    table(["figure (median over reps)", ...run.systems.map((system) => system.name)], figureRows),
    "",
  ];
  if (run.skipped.length > 0) lines.push(`Peers not measured: ${run.skipped.join("; ")}.`, "");
  const previous = run.systems.find((system) => system.previous);
  if (previous !== undefined) {
    lines.push(
      `This build against **${previous.name}** (the same command from another checkout's \`dist/parley.js\`), as the`,
      "median of per-rep ratios, cells measured moments apart: below 1 is better for CPU, latency and memory, above 1",
      "for req/s.",
      "",
      table(
        ["figure", "Parley / previous build"],
        [
          ...figures.map((figure) => [figure.name, fixed(toSystem(parley, previous, figure))]),
          ["RSS max", fixed(rssMax(parley) / rssMax(previous))],
        ],
      ),
      "",
    );
  }
  if (peers.length > 0) {
    const target = (
      figure: Figure | "rss",
      goal: string,
      meets: (ratio: number) => boolean,
    ): Array<string | number> => {
      const ratioOf = (subject: System) =>
        figure === "rss" ? rssMax(subject) / bestPeerRss() : toBestPeer(subject, figure);
      const ratio = ratioOf(parley);
      const offRatio = ratioOf(off);
      const leastRatio = figure === "rss" ? undefined : withLeastTrace(figure);
      return [
        figure === "rss" ? "RSS max" : figure.name,
        goal,
        fixed(ratio),
        meets(ratio) ? "yes" : "**no**",
        fixed(offRatio),
        meets(offRatio) ? "yes" : "no",
        leastRatio === undefined ? "—" : `${fixed(leastRatio)} (${meets(leastRatio) ? "met" : "not met"})`,
      ];
    };
    /*
     * Traces off with, per request, the kept trace floor's CPU added instead of Parley's traces: where the default
     * config would stand if its traces cost the least a kept trace can (support/trace-floor.ts). The c=16 cells keep
     * the server's core busy, so its req/s falls as its CPU per request grows. Latency at c=1 is the request path's,
     * which traces leave (they are written after the answer, off the event loop): none for those rows.
     */
    const withLeastTrace = (figure: Figure): number | undefined => {
      const floorMicros = run.traceFloor?.kept[figure.key.startsWith("json") ? "json" : "stream"];
      if (floorMicros === undefined || !figure.key.endsWith("/16")) return undefined;
      return median(
        cells(off, figure.key).map((cell, rep) => {
          const perRequest = cpu(cell);
          const least = perRequest + floorMicros / 1000;
          const value = figure.lower ? least : (figure.of(cell, rep) * perRequest) / least;
          const peerValues = peers.map((peer) => figure.of(cells(peer, figure.key)[rep]!, rep));
          return value / (figure.lower ? Math.min(...peerValues) : Math.max(...peerValues));
        }),
      );
    };
    const [cpuJson, cpuStream, , rpsJson, rpsStream, p50Json, p50Stream] = figures as [
      Figure,
      Figure,
      Figure,
      Figure,
      Figure,
      Figure,
      Figure,
    ];
    lines.push(
      "Targets against the best peer, per figure (whichever peer did better in that rep), as the median of per-rep ratios.",
      "The last column is where the default config would stand if its traces cost only the kept trace floor (below):",
      "traces off's CPU per request with the floor's added, its req/s lowered in proportion (the c=16 cells keep the",
      "server's core busy). Latency at c=1 and memory have no such column: traces are written after the answer and off",
      "the event loop, so the c=1 rows are the request path's own.",
      "",
      table(
        [
          "figure",
          "target",
          "Parley / best peer",
          "met",
          "traces off / best peer",
          "met (traces off)",
          "traces off + the kept trace floor / best peer",
        ],
        [
          target(cpuJson, "<= 0.5", (ratio) => ratio <= 0.5),
          target(cpuStream, "<= 0.5", (ratio) => ratio <= 0.5),
          target(rpsJson, ">= 2", (ratio) => ratio >= 2),
          target(rpsStream, ">= 2", (ratio) => ratio >= 2),
          target(p50Json, "<= 0.6", (ratio) => ratio <= 0.6),
          target(p50Stream, "<= 0.6", (ratio) => ratio <= 0.6),
          target("rss", "<= 0.7", (ratio) => ratio <= 0.7),
        ],
      ),
      "",
    );
  }
  const [cpuJson, cpuStream, cpuPaced] = figures as [Figure, Figure, Figure];
  const pairRow = (label: string, subject: System, other: System, figure: Figure, goal: number) => {
    const ratio = toSystem(subject, other, figure);
    return [label, figure.name, `<= ${goal}`, fixed(ratio), ratio <= goal ? "yes" : "**no**"];
  };
  lines.push(
    "Against traces off and against the floor, per-rep ratios, medians:",
    "",
    table(
      ["ratio", "figure", "target", "measured", "met"],
      [
        pairRow("Parley / traces off", parley, off, cpuJson, 1.15),
        pairRow("Parley / traces off", parley, off, cpuStream, 1.15),
        pairRow("Parley / bare proxy", parley, bare, cpuJson, 1.3),
        pairRow("Parley / bare proxy", parley, bare, cpuPaced, 1.3),
        pairRow("traces off / bare proxy", off, bare, cpuJson, 1.3),
        pairRow("traces off / bare proxy", off, bare, cpuPaced, 1.3),
      ],
    ),
    "",
    floorReport(run, cells(bare, "json/16").map(cpu), cells(bare, "paced").map(cpuPerFrame)),
    "",
    run.traceFloor === undefined || run.jsonFloor === undefined
      ? ""
      : traceFloorReport({
          floor: run.traceFloor,
          parley: { json: value(parley, cpuJson), stream: value(parley, cpuStream) },
          off: { json: value(off, cpuJson), stream: value(off, cpuStream) },
          bareJson: value(bare, cpuJson),
          translation: run.jsonFloor.request + run.jsonFloor.logLine,
        }),
    "",
    largeReport(run),
    "",
    profileReport(run),
  );
  const errors = [...run.cells.values(), run.large.parley, run.large.bare]
    .flatMap((map) => [...map.values()].flat())
    .reduce((sum, cell) => sum + cell.errors, 0);
  lines.push("", `Requests that failed their check: ${errors}.`);
  return lines.join("\n");
}

function largeReport(run: PeerRun): string {
  const { large } = run;
  const rows = LARGE_CONCURRENCIES.map((concurrency) => {
    const key = String(concurrency);
    const parley = large.parley.get(key) ?? [];
    const bare = large.bare.get(key) ?? [];
    const direct = large.direct.get(key) ?? [];
    const perRep = (figure: (cell: GatewayCell, rep: number) => number) =>
      median(parley.map((cell, rep) => figure(cell, rep) / figure(bare[rep]!, rep)));
    const added = (cell: GatewayCell, rep: number) => cell.p50 - direct[rep]!.p50;
    return [
      String(concurrency),
      `${fixed(median(parley.map(cpu)), 2)} / ${fixed(median(bare.map(cpu)), 2)}`,
      fixed(perRep(cpu)),
      `${fixed(median(parley.map((cell) => cell.perSecond)), 0)} / ${fixed(median(bare.map((cell) => cell.perSecond)), 0)}`,
      `${fixed(median(parley.map(added)), 2)} / ${fixed(median(bare.map(added)), 2)}`,
      `${fixed(Math.max(...parley.map((cell) => cell.rssMaxBytes)) / MB, 0)} / ${fixed(Math.max(...bare.map((cell) => cell.rssMaxBytes)) / MB, 0)}`,
    ];
  });
  return [
    `A Claude Code-sized request: the last turn of a long agent session, ${fixed(large.bodyBytes / MB, 2)} MB, streamed,`,
    "the same body every request (Claude Code re-sends its whole history each turn); Parley in the default config",
    "(traces on: both request bodies kept whole, a body re-sent shares its stored chunks) against the bare proxy sent",
    "the body Parley sent upstream. Same reps and cell length as above.",
    "",
    table(
      [
        "c",
        "CPU ms/req, Parley / bare",
        "CPU ratio",
        "req/s, Parley / bare",
        "added p50 ms, Parley / bare",
        "RSS max MB, Parley / bare",
      ],
      rows,
    ),
  ].join("\n");
}

function profileReport(run: PeerRun): string {
  const profile = run.profile;
  if (profile === undefined) return "";
  const perRequest = (summary: ProfileSummary, share: number) =>
    fixed((summary.busyMs * share * 1000) / profile.requests, 1);
  const writer = profile.workers.reduce((sum, summary) => sum + summary.busyMs, 0);
  const rows = profile.main.categories
    .filter(([, share]) => share >= 0.005)
    .map(([name, share]) => [name, `${fixed(share * 100, 1)} %`, perRequest(profile.main, share)]);
  const top = profile.main.functions
    .slice(0, 12)
    .map(([name, share]) => [`\`${name}\``, `${fixed(share * 100, 1)} %`, perRequest(profile.main, share)]);
  const writerTop = profile.workers
    .flatMap((summary) => summary.functions.map(([name, share]): [string, number] => [name, share * summary.busyMs]))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([name, ms]) => `\`${name}\` ${fixed((ms * 1000) / profile.requests, 1)} µs`)
    .join(", ");
  return [
    "Where the default config's time goes: one more `parley serve` as above under `node --cpu-prof`, the json",
    `c=16 load (${profile.requests} requests), each thread's profile by self time (idle left out), functions traced`,
    "to their source files through the bundle's source map. µs per request is the thread's busy time in that",
    "group over the requests served, at profiled speed (the sampling, start-up and shutdown are in it: read the",
    "shares; the cells above give the real CPU per request).",
    "",
    `Request thread: ${fixed((profile.main.busyMs * 1000) / profile.requests, 0)} µs busy per request.`,
    "",
    table(["group (request thread)", "share of busy time", "µs per request"], rows),
    "",
    table(["function (request thread)", "share of busy time", "µs per request"], top),
    "",
    `Trace writer thread (${profile.workers.length}): ${fixed((writer * 1000) / profile.requests, 0)} µs busy per`,
    `request; its largest functions by self time: ${writerTop}.`,
    "",
    `Of the request thread's time, ${fixed(share(profile.main, SHARED_LAYERS) * 100, 0)} % is in the layers the bare proxy has too`,
    "(node:http, its streams and sockets, undici and its parser); conversion, routing, JSON bodies, logging and",
    `metrics are ${fixed(share(profile.main, OWN_WORK) * 100, 0)} %, and the trace path on this thread (queueing, the copy of the bodies`,
    `into the batch, postMessage) ${fixed(share(profile.main, TRACE_WORK) * 100, 0)} %. What would close the rest:`,
    "",
    "- Reading the profile: V8 samples each thread in wall time. When the request thread wakes the writer with",
    "  postMessage, the writer (on the same core under this pinning) mostly runs before the request thread",
    "  resumes, so `postMessage` there is largely the writer's own time seen from the request thread (measured",
    "  in a running gateway: serializing a batch's fields takes ~5 µs a trace, the call 10-15 µs of wall time).",
    '  The CPU each thread really spends is in the section "What traces cost, thread by thread".',
    "- Traces, split side by side (8 reps, one run, builds that leave one part out): with a writer that answers",
    "  each batch at once and writes nothing, the default config is at 1.23x traces off in both modes (request",
    "  thread and the hand-over: the trace's record, its fields and reports, the bodies' bytes into the batch,",
    "  postMessage, the settling); the writing brings it to 1.46x (json) and 1.53x (stream) in that run, and",
    "  recording nothing (the stream's copies still taken) to 1.04x. The request thread's part is the larger share",
    "  for json: a trace's fields were copied by an object rest of the record (~6 µs a trace; now by name, ~2 µs",
    "  with the reports' JSON), and the reports now cross as one JSON string, not a graph of objects to clone.",
    "- Traces, the writer thread alone (the writer's code in one process on these very bodies, at the default",
    "  bound of 10,000 traces so that every trace also deletes the oldest, batches of 20): by self time, json:",
    "  the commit (WAL pages and checkpoints) 14 %, the row's insert 12 %, the deletes at the bound 10 %, garbage",
    "  collection 8 %; stream: the redaction scan 18 % (V8's regular expression over the lowered text, ~1.3 ns a",
    "  byte, as fast as the alternatives measured again: the `i` flag, a factored pattern, literal searches in the",
    "  text or in the bytes), the answer's compression 15 %, garbage collection 9 %, the commit 7 %, the insert 7 %.",
    "  Batches gathered for 3, 10 or 50 ms (the default is 10) moved nothing but the memory: 50 ms was dearer. The",
    "  tenant index now leaves out the default tenant (every trace of a gateway without keys), and the reports",
    "  are redacted only when the trigger search finds something in their JSON. What is left is, per trace, the",
    "  work the kept floor does (scan, row, indexes, the delete at the bound, compression) plus the content",
    "  addressing of the requests, the losses and conversation indexes, the reports and the retention's counts.",
    "  An append-only trace log (one write per batch, indexed when listed) would take the per-trace B-tree work",
    "  away; the scan and the compression stay whatever the layout.",
    "- Traces, the request thread's stream part: a streamed answer is folded again for its loss report (the",
    "  accumulator and a whole-response encode), the trace's copies are encoded to UTF-8 when queued (~1 µs for",
    "  15 KB), and each queued trace is heap until its batch is written (gathered for 10 ms). On one core, what",
    "  the writer does with an answer's bytes also slows the request thread it shares the core and its caches",
    "  with.",
    "- The translation itself: JSON.parse of the request and of the answer, the conversion's objects and",
    "  JSON.stringify both ways. Passing the parts a conversion leaves unchanged (tools, system, earlier turns)",
    "  through as the client's own bytes, with a JSON scanner that keeps source offsets, would spare most of the",
    "  parse and write on long histories; it is the work the floor above counts as unavoidable on short ones.",
  ].join("\n");
}

/** The floor of a translating gateway on Node, against which the 1.3x-the-bare-proxy targets are set. */
function floorReport(run: PeerRun, bareJson: number[], bareFrame: number[]): string {
  if (run.jsonFloor === undefined) return "";
  const bareRequestMs = median(bareJson);
  const bareFrameMs = median(bareFrame);
  const requestFloor = (bareRequestMs + run.jsonFloor.request / 1000) / bareRequestMs;
  const loggedFloor = (bareRequestMs + (run.jsonFloor.request + run.jsonFloor.logLine) / 1000) / bareRequestMs;
  const frameFloor = (bareFrameMs + run.jsonFloor.frame / 1000) / bareFrameMs;
  return [
    "The floor of translation: the bare proxy parses the request and passes the answer's bytes on; a gateway that",
    "translates must also write the request anew and parse and write the answer (per streamed frame: parse the",
    "upstream's chunk, write the client's event). That JSON work alone, measured in the benchmark's own process",
    `on these very bodies, is ${fixed(run.jsonFloor.request, 1)} µs per json request and ${fixed(run.jsonFloor.frame, 2)} µs per frame,`,
    `against the bare proxy's whole ${fixed(bareRequestMs * 1000, 0)} µs per json request and ${fixed(bareFrameMs * 1000, 1)} µs per frame here:`,
    `before any conversion, validation, routing, logging, metrics or traces, a translating gateway on Node is at`,
    `${fixed(requestFloor)}x the bare proxy per json request and ${fixed(frameFloor)}x per frame. The one line a gateway`,
    `logs per request (pino, the fields Parley's line has, serialized but not written) is ${fixed(run.jsonFloor.logLine, 1)} µs more:`,
    `${fixed(loggedFloor)}x per json request before anything is converted, validated or routed. ${roomLeft(loggedFloor, bareRequestMs)}`,
  ].join("\n");
}

/** What the 1.3x target leaves above the floor, per json request. */
function roomLeft(floor: number, bareRequestMs: number): string {
  const room = (1.3 - floor) * bareRequestMs * 1000;
  if (room <= 0)
    return "The 1.3x target is below this floor: no translating gateway that logs its requests reaches it here.";
  return `The 1.3x target leaves ${fixed(room, 0)} µs a request for conversion, validation, routing, metrics and traces together.`;
}

const SHARED_LAYERS = [
  "node:http, streams, events (JS)",
  "socket writes and reads (native)",
  "undici (the upstream client)",
  "llhttp (undici's parser, wasm)",
];
const OWN_WORK = [
  "gateway (routing, JSON bodies, headers, metrics)",
  "conversion (formats, core, stream, repair)",
  "upstream requests (src/upstream)",
  "logging (pino, one info line a request)",
];
const TRACE_WORK = ["traces and store (this thread's part)", "postMessage to the trace writer (native)"];

function share(summary: ProfileSummary, groups: readonly string[]): number {
  return summary.categories.filter(([name]) => groups.includes(name)).reduce((sum, [, value]) => sum + value, 0);
}
