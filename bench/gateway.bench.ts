import { availableParallelism } from "node:os";
import { request } from "undici";
import { type BenchSection, median } from "./harness.js";
import { claudeCodeLikeBody } from "./support/bodies.js";
import {
  buildCli,
  type ChildGateway,
  startChildBareProxy,
  startChildGateway,
  startChildMockUpstream,
} from "./support/children.js";
import { anthropicHeaders, buildTargets, gatewayCell, push, type Targets } from "./support/gateway-cells.js";
import {
  CELL_MS,
  CONCURRENCIES,
  FRAME_DELAY_MS,
  type GatewayCell,
  type LayerRow,
  type LoadSide,
  MODES,
  PACED_CONCURRENCY,
  PACED_MS,
  REPS,
  report,
  STARTS,
  WARMUP_MS,
} from "./support/gateway-report.js";
import { type ClientLayer, clientLayerRun, closedLoop, type LoadResult } from "./support/load.js";
import { canReadProcessStats, pinningAvailable, pinProcess, readProcessStats } from "./support/process-stats.js";

/**
 * `parley serve` against the same load sent straight to the upstream, in one run, interleaved (rep -> mode ->
 * concurrency -> target) so that drift hits both alike. The gateway runs in its own process pinned to one core;
 * the mock upstream and this load generator share the other. Figures a user feels: added latency, req/s as a
 * share of direct, the gateway's CPU per request and per streamed frame, its memory, its start-up time.
 */
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
  const onGatewayCore = gatewayCore === undefined ? {} : { core: gatewayCore };
  const bare = await startChildBareProxy({
    mode: "http",
    upstreamUrl: `${mock.baseUrl}/chat/completions`,
    pacedUrl: `${paced.baseUrl}/chat/completions`,
    ...onGatewayCore,
  });
  const relay = await startChildBareProxy({ mode: "tcp", upstreamUrl: mock.baseUrl, ...onGatewayCore });
  const pacedRelay = await startChildBareProxy({ mode: "tcp", upstreamUrl: paced.baseUrl, ...onGatewayCore });
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

    const bareTargets = {
      json: { ...targets.direct.json, origin: bare.baseUrl, path: "/v1/chat/completions" },
      stream: { ...targets.direct.stream, origin: bare.baseUrl, path: "/v1/chat/completions" },
      paced: { ...targets.pacedDirect, origin: bare.baseUrl, path: "/paced/v1/chat/completions" },
    };
    // The relays pass the path through: the targets are the direct ones, sent to the relay's port.
    const relayTargets = {
      json: { ...targets.direct.json, origin: new URL(relay.baseUrl).origin },
      stream: { ...targets.direct.stream, origin: new URL(relay.baseUrl).origin },
      paced: { ...targets.pacedDirect, origin: new URL(pacedRelay.baseUrl).origin },
    };
    // The floors run every cell too, right after Parley's, so each figure has its floor from the same rep.
    const bareCells = new Map<string, GatewayCell[]>();
    const relayCells = new Map<string, GatewayCell[]>();
    const barePaced: GatewayCell[] = [];
    const relayPaced: GatewayCell[] = [];
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
          push(bareCells, key, await gatewayCell(bare.pid, bareTargets[mode], concurrency, CELL_MS));
          push(relayCells, key, await gatewayCell(relay.pid, relayTargets[mode], concurrency, CELL_MS));
        }
      }
    }

    const pacedDirect: LoadResult[] = [];
    const pacedParley: GatewayCell[] = [];
    for (let rep = 0; rep < 2; rep++) {
      pacedDirect.push(await closedLoop(targets.pacedDirect, PACED_CONCURRENCY, PACED_MS));
      pacedParley.push(await gatewayCell(gateway.pid, targets.pacedParley, PACED_CONCURRENCY, PACED_MS));
      barePaced.push(await gatewayCell(bare.pid, bareTargets.paced, PACED_CONCURRENCY, PACED_MS));
      relayPaced.push(await gatewayCell(pacedRelay.pid, relayTargets.paced, PACED_CONCURRENCY, PACED_MS));
    }

    const layers = await compareLayers(targets);
    const errors = [
      ...direct.values(),
      ...parley.values(),
      ...bareCells.values(),
      ...relayCells.values(),
      [...pacedDirect, ...pacedParley, ...barePaced, ...relayPaced],
    ]
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
        bare: bareCells,
        relay: relayCells,
        barePaced,
        relayPaced,
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
    await bare.stop();
    await relay.stop();
    await pacedRelay.stop();
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

async function measureLoadSide<T extends LoadResult>(mockPid: number, run: () => Promise<T>): Promise<T & LoadSide> {
  const own = process.cpuUsage();
  const mockBefore = readProcessStats(mockPid).cpuMs;
  const result = await run();
  const usage = process.cpuUsage(own);
  const loadCpuMs = (usage.user + usage.system) / 1000 + readProcessStats(mockPid).cpuMs - mockBefore;
  return { ...result, loadCpuMs };
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
