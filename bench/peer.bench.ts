import { availableParallelism } from "node:os";
import { type BenchSection, fixed, median, table } from "./harness.js";
import { claudeCodeLikeBody } from "./support/bodies.js";
import { buildCli, type ChildGateway, startChildGateway, startChildMockUpstream } from "./support/children.js";
import {
  anthropicHeaders,
  anthropicStreamEnded,
  buildTargets,
  gatewayCell,
  parsesAs,
  push,
} from "./support/gateway-cells.js";
import { CELL_MS, FRAME_DELAY_MS, type GatewayCell, MB, type Mode, PACED_MS, REPS } from "./support/gateway-report.js";
import { closedLoop, type LoadResult, type LoadTarget } from "./support/load.js";
import { STREAM_FRAMES } from "./support/mock-upstream.js";
import { ANCHORED, ensurePeer, PEER_MODEL, PEER_PACKAGE, PEER_VERSION, startPeer } from "./support/peer.js";
import { canReadProcessStats, pinningAvailable, pinProcess } from "./support/process-stats.js";

/**
 * Parley against the peer the gateway targets were set from, in one run on this machine. The targets are
 * absolute figures from another machine; the peer's figures there and here give each target as a share of the
 * peer, which is a ratio this machine can check side by side.
 */
export default async function peerBench(): Promise<BenchSection> {
  const title = `Gateway against a peer: ${PEER_PACKAGE} ${PEER_VERSION}, side by side`;
  const cores = availableParallelism();
  if (!pinningAvailable(cores) || !canReadProcessStats()) {
    return { title, markdown: "Skipped: this needs two cores, `taskset` and /proc to pin and measure each side." };
  }
  let folder: string;
  try {
    folder = ensurePeer();
  } catch (error) {
    return { title, markdown: `Skipped: ${(error as Error).message}` };
  }
  const cli = buildCli();
  const mock = await startChildMockUpstream({ core: 0 });
  const paced = await startChildMockUpstream({ frameDelayMs: FRAME_DELAY_MS, core: 0 });
  const peer = await startPeer(folder, `${mock.baseUrl}/chat/completions`, 1);
  const pacedPeer = await startPeer(folder, `${paced.baseUrl}/chat/completions`, 1);
  let gateway: ChildGateway | undefined;
  const unpin = pinProcess(process.pid, 0);
  try {
    gateway = await startChildGateway({
      runner: { cli },
      config: {
        providers: {
          mock: { type: "openai", baseUrl: mock.baseUrl },
          paced: { type: "openai", baseUrl: paced.baseUrl },
        },
        routes: [
          { match: "paced-*", provider: "paced", model: "bench-model" },
          { match: "*", provider: "mock", model: "bench-model" },
        ],
        traces: { enabled: false },
        logLevel: "info",
      },
      discardLogs: true,
      core: 1,
    });
    const targets = await buildTargets(gateway.url, mock.baseUrl, paced.baseUrl);
    const peerTarget = (mode: Mode, origin: string): LoadTarget => ({
      origin,
      path: "/v1/messages",
      body: JSON.stringify({ ...claudeCodeLikeBody(mode === "stream"), model: PEER_MODEL }),
      headers: anthropicHeaders,
      check: mode === "stream" ? anthropicStreamEnded : parsesAs("content"),
    });
    const peerTargets = { stream: peerTarget("stream", peer.baseUrl), json: peerTarget("json", peer.baseUrl) };
    for (const mode of ["stream", "json"] as const) {
      await closedLoop(targets.parley[mode], 16, 1_000);
      await closedLoop(peerTargets[mode], 16, 1_000);
    }

    const direct = new Map<string, LoadResult[]>();
    const parley = new Map<string, GatewayCell[]>();
    const llms = new Map<string, GatewayCell[]>();
    for (let rep = 0; rep < REPS; rep++) {
      for (const mode of ["stream", "json"] as const) {
        for (const concurrency of [1, 16]) {
          const key = `${mode}/${concurrency}`;
          push(direct, key, await closedLoop(targets.direct[mode], concurrency, CELL_MS));
          push(parley, key, await gatewayCell(gateway.pid, targets.parley[mode], concurrency, CELL_MS));
          push(llms, key, await gatewayCell(peer.pid, peerTargets[mode], concurrency, CELL_MS));
        }
      }
    }
    const pacedPeerTarget = peerTarget("stream", pacedPeer.baseUrl);
    for (let rep = 0; rep < 2; rep++) {
      push(parley, "paced", await gatewayCell(gateway.pid, targets.pacedParley, 16, PACED_MS));
      push(llms, "paced", await gatewayCell(pacedPeer.pid, pacedPeerTarget, 16, PACED_MS));
    }
    return { title, markdown: peerReport(direct, parley, llms) };
  } finally {
    unpin();
    await gateway?.stop();
    await peer.stop();
    await pacedPeer.stop();
    await mock.stop();
    await paced.stop();
  }
}

interface Row {
  figure: string;
  target: number;
  anchored: number;
  /** The figure for one target's cells, and the per-rep Parley / peer ratio. */
  measure: (cells: Map<string, GatewayCell[]>) => number;
  ratio: () => number;
}

function peerReport(
  direct: Map<string, LoadResult[]>,
  parley: Map<string, GatewayCell[]>,
  llms: Map<string, GatewayCell[]>,
): string {
  const cells = (map: Map<string, GatewayCell[]>, key: string) => map.get(key) ?? [];
  const cpu = (cell: GatewayCell) => cell.cpuMs / Math.max(1, cell.requests + cell.errors);
  const addedP50 = (map: Map<string, GatewayCell[]>, key: string) =>
    cells(map, key).map((cell, rep) => cell.p50 - direct.get(key)![rep]!.p50);
  // Each rep's ratio is taken from cells measured back to back, then the median of those ratios.
  const repRatios = (key: string, figure: (cell: GatewayCell, rep: number) => number) =>
    median(cells(parley, key).map((cell, rep) => figure(cell, rep) / figure(cells(llms, key)[rep]!, rep)));
  const added = (key: string) => (cell: GatewayCell, rep: number) => cell.p50 - direct.get(key)![rep]!.p50;
  const cpuPerFrame = (cell: GatewayCell) => cpu(cell) / STREAM_FRAMES;
  const rows: Row[] = [
    {
      figure: "added p50 ms, c=1, stream",
      target: 0.3,
      anchored: ANCHORED.addedP50StreamC1,
      measure: (map) => median(addedP50(map, "stream/1")),
      ratio: () => repRatios("stream/1", added("stream/1")),
    },
    {
      figure: "added p50 ms, c=1, json",
      target: 0.3,
      anchored: ANCHORED.addedP50JsonC1,
      measure: (map) => median(addedP50(map, "json/1")),
      ratio: () => repRatios("json/1", added("json/1")),
    },
    {
      figure: "CPU ms per json request, c=16",
      target: 0.25,
      anchored: ANCHORED.cpuJsonC16,
      measure: (map) => median(cells(map, "json/16").map(cpu)),
      ratio: () => repRatios("json/16", cpu),
    },
    {
      figure: "CPU ms per paced stream frame, c=16",
      target: 0.03,
      anchored: ANCHORED.cpuPerPacedFrame,
      measure: (map) => median(cells(map, "paced").map(cpuPerFrame)),
      ratio: () => repRatios("paced", cpuPerFrame),
    },
    {
      figure: "RSS max MB (c ≤ 16)",
      target: 80,
      anchored: ANCHORED.rssMaxMb,
      measure: (map) => rssMax(map) / MB,
      ratio: () => rssMax(parley) / rssMax(llms),
    },
  ];
  const tableRows = rows.map((row) => {
    const share = row.target / row.anchored;
    const ratio = row.ratio();
    return [
      row.figure,
      fixed(row.target, row.target < 0.1 ? 3 : 2),
      fixed(row.anchored, row.anchored < 1 ? 3 : 2),
      fixed(share),
      fixed(row.measure(llms), 3),
      fixed(row.measure(parley), 3),
      fixed(ratio),
      ratio <= share ? "yes" : `no (${fixed(ratio / share)}× the share)`,
    ];
  });
  const throughput = (key: string) =>
    `${fixed(median(cells(parley, key).map((cell) => cell.perSecond)), 0)} / ${fixed(median(cells(llms, key).map((cell) => cell.perSecond)), 0)}`;
  const errors = [...parley.values(), ...llms.values()].flat().reduce((sum, cell) => sum + cell.errors, 0);
  return [
    `Why: the gateway targets are absolute figures set against ${PEER_PACKAGE} and anthropic-proxy on the research`,
    "machine. On this one every figure runs at its own speed, so each target is turned into a share of what the",
    "peer spent there (target / anchored), and Parley's own ratio to the peer is measured here, side by side.",
    "Parley would meet a target on the research machine when its ratio is at most that share (assuming both",
    "scale alike with the machine).",
    "",
    `Set-up as in the gateway section: the mock upstream and this load generator on core 0; Parley and the peer`,
    `(installed from npm into the ignored cache folder, its CJS build, logger off) each on core 1, one after the`,
    `other in every rep; ${REPS} reps of ${CELL_MS / 1000} s per cell, paced stream 2 × ${PACED_MS / 1000} s; medians.`,
    `The Claude-Code-like body for both; the peer is asked for model "${PEER_MODEL}". Requests that failed their`,
    `check: ${errors}.`,
    "",
    table(
      [
        "figure",
        "target",
        "peer, anchored",
        "target / anchored",
        "peer here",
        "Parley here",
        "Parley / peer here",
        "within the share",
      ],
      tableRows,
    ),
    "",
    `req/s Parley / peer here: json c=16 ${throughput("json/16")}, stream c=16 ${throughput("stream/16")}.`,
    "RSS does not scale with the machine's speed: its row compares sizes, not speeds.",
  ].join("\n");
}

function rssMax(map: Map<string, GatewayCell[]>): number {
  return Math.max(...[...map.values()].flat().map((cell) => cell.rssMaxBytes));
}
