import { availableParallelism } from "node:os";
import { request } from "undici";
import { type BenchSection, fixed, median, table } from "./harness.js";
import { claudeCodeLikeBody } from "./support/bodies.js";
import { buildCli, type ChildGateway, startChildGateway, startChildMockUpstream } from "./support/children.js";
import { type ClientLayer, clientLayerRun, closedLoop, type LoadResult, type LoadTarget } from "./support/load.js";
import { STREAM_FRAMES } from "./support/mock-upstream.js";
import {
  canReadProcessStats,
  pinningAvailable,
  pinProcess,
  RssSampler,
  readProcessStats,
} from "./support/process-stats.js";

/**
 * `parley serve` against the same load sent straight to the upstream, in one run, interleaved (rep -> mode ->
 * concurrency -> target) so that drift hits both alike. The gateway runs in its own process pinned to one core;
 * the mock upstream and this load generator share the other. Figures a user feels: added latency, req/s as a
 * share of direct, the gateway's CPU per request and per streamed frame, its memory, its start-up time.
 */
const REPS = 3;
const CELL_MS = 1_500;
const WARMUP_MS = 1_000;
const PACED_MS = 3_000;
const PACED_CONCURRENCY = 16;
const FRAME_DELAY_MS = 5;
const CONCURRENCIES = [1, 16, 128] as const;
const MODES = ["stream", "json"] as const;
const STARTS = 5;
const MB = 1024 * 1024;

type Mode = (typeof MODES)[number];

interface GatewayCell extends LoadResult {
  cpuMs: number;
  rssMaxBytes: number;
}

/** A cell with the CPU of the other side (this load generator and the mock upstream), to see who limits it. */
interface LoadSide {
  loadCpuMs: number;
}

export default async function gatewayBench(): Promise<BenchSection> {
  const cores = availableParallelism();
  const pinned = pinningAvailable(cores) && canReadProcessStats();
  const gatewayCore = pinned ? 1 : undefined;
  const loadCore = pinned ? 0 : undefined;
  const cli = buildCli();
  const mock = await startChildMockUpstream(loadCore === undefined ? {} : { core: loadCore });
  const paced = await startChildMockUpstream({
    frameDelayMs: FRAME_DELAY_MS,
    ...(loadCore === undefined ? {} : { core: loadCore }),
  });
  const config = gatewayConfig(mock.baseUrl, paced.baseUrl);
  const startGateway = () =>
    startChildGateway({
      runner: { cli },
      config,
      discardLogs: true,
      ...(gatewayCore === undefined ? {} : { core: gatewayCore }),
    });
  let gateway: ChildGateway | undefined;
  const unpin = pinned ? pinProcess(process.pid, 0) : () => {};
  try {
    const startUps: Array<{ readyMs: number; firstOkMs: number }> = [];
    for (let run = 0; run < STARTS; run++) startUps.push(await timeStartUp(startGateway));

    gateway = await startGateway();
    const targets = await buildTargets(gateway.url, mock.baseUrl, paced.baseUrl);
    for (const mode of MODES) {
      await closedLoop(targets.direct[mode], 16, WARMUP_MS);
      await closedLoop(targets.parley[mode], 16, WARMUP_MS);
    }

    const direct = new Map<string, Array<LoadResult & LoadSide>>();
    const parley = new Map<string, Array<GatewayCell & LoadSide>>();
    const loadSide = <T extends LoadResult>(run: () => Promise<T>) => measureLoadSide(mock.pid, run);
    for (let rep = 0; rep < REPS; rep++) {
      for (const mode of MODES) {
        for (const concurrency of CONCURRENCIES) {
          const key = `${mode}/${concurrency}`;
          push(direct, key, await loadSide(() => closedLoop(targets.direct[mode], concurrency, CELL_MS)));
          const gatewayPid = gateway.pid;
          push(parley, key, await loadSide(() => gatewayCell(gatewayPid, targets.parley[mode], concurrency, CELL_MS)));
        }
      }
    }

    const pacedDirect: LoadResult[] = [];
    const pacedParley: GatewayCell[] = [];
    for (let rep = 0; rep < 2; rep++) {
      pacedDirect.push(await closedLoop(targets.pacedDirect, PACED_CONCURRENCY, PACED_MS));
      pacedParley.push(await gatewayCell(gateway.pid, targets.pacedParley, PACED_CONCURRENCY, PACED_MS));
    }

    const layers = await compareLayers(targets);
    const errors = [...direct.values(), ...parley.values(), [...pacedDirect, ...pacedParley]]
      .flat()
      .reduce((sum, cell) => sum + cell.errors, 0);
    const firstError = [...parley.values(), ...direct.values(), pacedParley]
      .flat()
      .find((cell) => cell.firstError)?.firstError;

    return {
      title: "Gateway: `parley serve` against the upstream straight",
      markdown: report({
        cores,
        pinned,
        direct,
        parley,
        pacedDirect,
        pacedParley,
        startUps,
        layers,
        errors,
        firstError,
      }),
    };
  } finally {
    unpin();
    await gateway?.stop();
    await mock.stop();
    await paced.stop();
  }
}

function gatewayConfig(mockBaseUrl: string, pacedBaseUrl: string): Record<string, unknown> {
  return {
    providers: {
      mock: { type: "openai", baseUrl: mockBaseUrl },
      paced: { type: "openai", baseUrl: pacedBaseUrl },
    },
    defaultProvider: "mock",
    routes: [
      { match: "paced-*", provider: "paced", model: "bench-model" },
      { match: "*", provider: "mock", model: "bench-model" },
    ],
    // Traces are stored per request; the store has its own benchmark, and in memory they would only grow.
    traces: { enabled: false },
    logLevel: "info",
  };
}

interface Targets {
  direct: Record<Mode, LoadTarget>;
  parley: Record<Mode, LoadTarget>;
  pacedDirect: LoadTarget;
  pacedParley: LoadTarget;
}

const anthropicHeaders = {
  "content-type": "application/json",
  "anthropic-version": "2023-06-01",
  "x-api-key": "bench",
};
const openaiHeaders = { "content-type": "application/json", authorization: "Bearer bench" };
const anthropicStreamEnded = (text: string) => text.includes("event: message_stop");
const openaiStreamEnded = (text: string) => text.endsWith("data: [DONE]\n\n");
const parsesAs = (field: string) => (text: string) => {
  try {
    return (JSON.parse(text) as Record<string, unknown>)[field] !== undefined;
  } catch {
    return false;
  }
};

/**
 * The direct baseline sends exactly the body Parley sent upstream for the same client request (read back
 * from the mock), so both sides ask the upstream for the same thing.
 */
async function buildTargets(gatewayUrl: string, mockBaseUrl: string, pacedBaseUrl: string): Promise<Targets> {
  const origin = (url: string) => new URL(url).origin;
  const parleyTarget = (mode: Mode, model?: string): LoadTarget => {
    const body = claudeCodeLikeBody(mode === "stream");
    if (model !== undefined) body.model = model;
    return {
      origin: gatewayUrl,
      path: "/v1/messages",
      body: JSON.stringify(body),
      headers: anthropicHeaders,
      check: mode === "stream" ? anthropicStreamEnded : parsesAs("content"),
    };
  };
  const parley = { stream: parleyTarget("stream"), json: parleyTarget("json") };
  const upstreamBody = async (mode: Mode) => {
    const sent = await request(`${gatewayUrl}/v1/messages`, {
      method: "POST",
      headers: parley[mode].headers,
      body: parley[mode].body,
    });
    const answer = await sent.body.text();
    if (sent.statusCode !== 200) throw new Error(`the gateway answered ${sent.statusCode}: ${answer.slice(0, 500)}`);
    const recorded = await request(`${origin(mockBaseUrl)}/last-request?stream=${mode === "stream" ? 1 : 0}`);
    return recorded.body.text();
  };
  const directTarget = (mode: Mode, body: string, baseUrl: string): LoadTarget => ({
    origin: origin(baseUrl),
    path: `${new URL(baseUrl).pathname}/chat/completions`,
    body,
    headers: openaiHeaders,
    check: mode === "stream" ? openaiStreamEnded : parsesAs("choices"),
  });
  const streamBody = await upstreamBody("stream");
  const jsonBody = await upstreamBody("json");
  return {
    parley,
    direct: {
      stream: directTarget("stream", streamBody, mockBaseUrl),
      json: directTarget("json", jsonBody, mockBaseUrl),
    },
    pacedParley: parleyTarget("stream", "paced-sonnet"),
    pacedDirect: directTarget("stream", streamBody, pacedBaseUrl),
  };
}

async function measureLoadSide<T extends LoadResult>(mockPid: number, run: () => Promise<T>): Promise<T & LoadSide> {
  const own = process.cpuUsage();
  const mockBefore = readProcessStats(mockPid).cpuMs;
  const result = await run();
  const usage = process.cpuUsage(own);
  const loadCpuMs = (usage.user + usage.system) / 1000 + readProcessStats(mockPid).cpuMs - mockBefore;
  return { ...result, loadCpuMs };
}

async function gatewayCell(pid: number, target: LoadTarget, concurrency: number, ms: number): Promise<GatewayCell> {
  const sampler = new RssSampler(pid).start();
  const before = readProcessStats(pid);
  const result = await closedLoop(target, concurrency, ms);
  const after = readProcessStats(pid);
  return { ...result, cpuMs: after.cpuMs - before.cpuMs, rssMaxBytes: sampler.stop() };
}

/** From spawn to the first 200 of a real (non-streamed) request, and to the listening line. */
async function timeStartUp(start: () => Promise<ChildGateway>): Promise<{ readyMs: number; firstOkMs: number }> {
  const spawned = performance.now();
  const gateway = await start();
  try {
    const body = JSON.stringify(claudeCodeLikeBody(false));
    for (let attempt = 0; attempt < 200; attempt++) {
      const response = await request(`${gateway.url}/v1/messages`, { method: "POST", headers: anthropicHeaders, body });
      await response.body.text();
      if (response.statusCode === 200) return { readyMs: gateway.readyMs, firstOkMs: performance.now() - spawned };
    }
    throw new Error("the gateway never answered 200");
  } finally {
    await gateway.stop();
  }
}

interface LayerRow {
  to: string;
  layer: ClientLayer;
  concurrency: number;
  perSecond: number;
  cpuMsPerRequest: number;
}

/** HTTP client layers, to the mock (the gateway's upstream side) and to Parley (what its clients see). */
async function compareLayers(targets: Targets): Promise<LayerRow[]> {
  const layers: ClientLayer[] = ["undici-pool", "node-http-keepalive", "node-http-no-keepalive"];
  const cases = [
    { to: "upstream, stream", target: targets.direct.stream, concurrencies: [1, 16] },
    { to: "Parley, json", target: targets.parley.json, concurrencies: [1] },
  ];
  const runs = new Map<string, Array<{ perSecond: number; cpuMsPerRequest: number }>>();
  for (let rep = 0; rep < 2; rep++) {
    for (const { to, target, concurrencies } of cases) {
      for (const concurrency of concurrencies) {
        for (const layer of layers)
          push(runs, `${to}|${layer}|${concurrency}`, await clientLayerRun(layer, target, concurrency, 1_000));
      }
    }
  }
  return [...runs.entries()].map(([key, results]) => {
    const [to, layer, concurrency] = key.split("|") as [string, ClientLayer, string];
    return {
      to,
      layer,
      concurrency: Number(concurrency),
      perSecond: median(results.map((result) => result.perSecond)),
      cpuMsPerRequest: median(results.map((result) => result.cpuMsPerRequest)),
    };
  });
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

interface ReportInput {
  cores: number;
  pinned: boolean;
  direct: Map<string, Array<LoadResult & LoadSide>>;
  parley: Map<string, Array<GatewayCell & LoadSide>>;
  pacedDirect: LoadResult[];
  pacedParley: GatewayCell[];
  startUps: Array<{ readyMs: number; firstOkMs: number }>;
  layers: LayerRow[];
  errors: number;
  firstError: string | undefined;
}

/** The load generator's and the mock's CPU as a share of the cell's time (100 % = their one core is full). */
const busy = (cells: Array<LoadResult & LoadSide>) =>
  `${fixed(median(cells.map((cell) => cell.loadCpuMs / cell.durationMs)) * 100, 0)} %`;

const cpuPerRequest = (cell: GatewayCell) => cell.cpuMs / Math.max(1, cell.requests + cell.errors);

function report(input: ReportInput): string {
  const { direct, parley } = input;
  const rows: Array<Array<string | number>> = [];
  const summary = new Map<
    string,
    { addedP50: number; addedP99: number; ratio: number; rate: number; cpu: number; rss: number }
  >();
  for (const mode of MODES) {
    for (const concurrency of CONCURRENCIES) {
      const key = `${mode}/${concurrency}`;
      const d = direct.get(key)!;
      const p = parley.get(key)!;
      const addedP50 = median(p.map((cell, rep) => cell.p50 - d[rep]!.p50));
      const addedP99 = median(p.map((cell, rep) => cell.p99 - d[rep]!.p99));
      const ratio = median(p.map((cell, rep) => cell.perSecond / d[rep]!.perSecond));
      const cpu = median(p.map(cpuPerRequest));
      const rss = Math.max(...p.map((cell) => cell.rssMaxBytes));
      const rate = median(p.map((cell) => cell.perSecond));
      summary.set(key, { addedP50, addedP99, ratio, rate, cpu, rss });
      rows.push([
        mode,
        concurrency,
        fixed(median(d.map((cell) => cell.perSecond)), 0),
        fixed(rate, 0),
        fixed(ratio),
        `${fixed(median(d.map((cell) => cell.p50)))} / ${fixed(median(d.map((cell) => cell.p99)))}`,
        `${fixed(median(p.map((cell) => cell.p50)))} / ${fixed(median(p.map((cell) => cell.p99)))}`,
        `${addedP50 >= 0 ? "+" : ""}${fixed(addedP50, 3)}`,
        `${addedP99 >= 0 ? "+" : ""}${fixed(addedP99, 2)}`,
        fixed(cpu, 3),
        `${fixed(median(p.map((cell) => cell.cpuMs / cell.durationMs)) * 100, 0)} %`,
        fixed(rss / MB, 1),
        `${busy(d)} / ${busy(p)}`,
      ]);
    }
  }
  const pacedRequests = input.pacedParley.map((cell) => cell.requests + cell.errors);
  const cpuPerFrame = median(
    input.pacedParley.map((cell, rep) => cell.cpuMs / Math.max(1, pacedRequests[rep]! * STREAM_FRAMES)),
  );
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

  const at = (key: string) => summary.get(key)!;
  const best = (mode: Mode) =>
    [16, 128].map((concurrency) => at(`${mode}/${concurrency}`)).sort((a, b) => b.rate - a.rate)[0]!;
  const throughputMet = MODES.every((mode) => best(mode).rate >= 4000 || best(mode).ratio >= 0.8);
  const rss128 = Math.max(at("stream/128").rss, at("json/128").rss);
  const targets: Array<[string, string, boolean]> = [
    [
      "added p50 at c=1 <= 0.3 ms",
      `stream ${fixed(at("stream/1").addedP50, 3)} ms, json ${fixed(at("json/1").addedP50, 3)} ms`,
      at("stream/1").addedP50 <= 0.3 && at("json/1").addedP50 <= 0.3,
    ],
    ["CPU per non-streamed request <= 0.25 ms (c=16)", `${fixed(at("json/16").cpu, 3)} ms`, at("json/16").cpu <= 0.25],
    ["CPU per streamed upstream frame <= 0.03 ms (paced, c=16)", `${fixed(cpuPerFrame, 4)} ms`, cpuPerFrame <= 0.03],
    [
      ">= 4000 req/s or >= 0.8 of direct (best of c=16/128)",
      MODES.map((mode) => `${mode} ${fixed(best(mode).rate, 0)} req/s = ${fixed(best(mode).ratio)} of direct`).join(
        "; ",
      ),
      throughputMet,
    ],
    ["RSS <= 80 MB at c=128", `${fixed(rss128 / MB, 1)} MB`, rss128 <= 80 * MB],
    ["start to first 200 <= 0.25 s", `${fixed(firstOk / 1000, 3)} s`, firstOk <= 250],
  ];
  const met = targets.filter(([, , ok]) => ok).map(([name]) => name);
  const missed = targets.filter(([, , ok]) => !ok).map(([name]) => name);

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
      ["target (issue 3)", "measured", "met"],
      targets.map(([name, value, ok]) => [name, value, ok ? "yes" : "**no**"]),
    ),
    "",
    missed.length === 0
      ? "All targets are met in this run."
      : `Met: ${met.length === 0 ? "none" : met.join("; ")}. Not met: ${missed.join("; ")}.`,
  ].join("\n");
}
