import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pino from "pino";
import { request } from "undici";
import { type BenchSection, rate } from "./harness.js";
import { claudeCodeLikeBody } from "./support/bodies.js";
import {
  buildCli,
  builtCliExists,
  type ChildGateway,
  type ChildMockUpstream,
  startChildBareProxy,
  startChildGateway,
  startChildMockUpstream,
} from "./support/children.js";
import { profilesIn, summarizeProfile } from "./support/cpu-profile.js";
import {
  anthropicHeaders,
  anthropicStreamEnded,
  buildTargets,
  gatewayCell,
  openaiStreamEnded,
  parsesAs,
  push,
} from "./support/gateway-cells.js";
import { FRAME_DELAY_MS, type Mode } from "./support/gateway-report.js";
import { closedLoop, type LoadTarget } from "./support/load.js";
import { streamFrames } from "./support/mock-upstream.js";
import { CCR_MODEL, ensurePeer, PEER_MODEL, startCcr, startPeer } from "./support/peer.js";
import { type Cells, LARGE_CONCURRENCIES, type PeerRun, peerReport, type System } from "./support/peer-report.js";
import { canReadProcessStats, pinningAvailable, pinProcess } from "./support/process-stats.js";
import { largeClaudeCodeBody } from "./support/session-body.js";
import { type TraceFloors, traceFloor } from "./support/trace-floor.js";

/**
 * The headline: `parley serve` exactly as the README starts it (the package's bin run by node, no config file,
 * the default SQLite store in a fresh empty folder, traces on), the same with traces off, the two peers
 * Claude Code users run instead, and the bare node:http + undici proxy as the floor, all in one run: every
 * cell of every system measured back to back within each rep, so that each ratio compares figures taken
 * moments apart on the same machine.
 */
const REPS = Number(process.env.PARLEY_BENCH_REPS ?? 3);
const CELL_MS = Number(process.env.PARLEY_BENCH_CELL_MS ?? 1_500);
const PACED_MS = 3_000;
const WARMUP_MS = 1_000;

export default async function peerBench(): Promise<BenchSection> {
  const title = "Headline: `parley serve` as users run it, against its peers and the bare proxy";
  if (!pinningAvailable(availableParallelism()) || !canReadProcessStats()) {
    return { title, markdown: "Skipped: this needs two cores, `taskset` and /proc to pin and measure each side." };
  }
  if (!builtCliExists()) return { title, markdown: "Skipped: `npm run build` first (the bin runs dist/parley.js)." };
  const started: Array<{ stop(): Promise<unknown> }> = [];
  const keep = <T extends { stop(): Promise<unknown> }>(child: T): T => {
    started.push(child);
    return child;
  };
  const unpin = pinProcess(process.pid, 0);
  try {
    const mock = keep(await startChildMockUpstream({ core: 0 }));
    const paced = keep(await startChildMockUpstream({ frameDelayMs: FRAME_DELAY_MS, core: 0 }));
    const completions = (upstream: ChildMockUpstream) => `${upstream.baseUrl}/chat/completions`;
    const parley = (upstream: ChildMockUpstream, tracesOff: boolean) =>
      startChildGateway({
        runner: "dist",
        asUsersRun: { upstream: upstream.baseUrl },
        ...(tracesOff ? { config: { traces: { enabled: false } } } : {}),
        discardLogs: true,
        core: 1,
      }).then(keep);
    const parleyDefault = await parley(mock, false);
    const parleyOff = await parley(mock, true);
    const pacedDefault = await parley(paced, false);
    const pacedOff = await parley(paced, true);
    const bare = keep(
      await startChildBareProxy({
        mode: "http",
        upstreamUrl: completions(mock),
        pacedUrl: completions(paced),
        core: 1,
      }),
    );
    const targets = await buildTargets(parleyDefault.url, mock.baseUrl, paced.baseUrl);
    const anthropicTarget = (origin: string, mode: Mode, model?: string): LoadTarget => ({
      origin,
      path: "/v1/messages",
      body: JSON.stringify({ ...claudeCodeLikeBody(mode === "stream"), ...(model ? { model } : {}) }),
      headers: anthropicHeaders,
      check: mode === "stream" ? anthropicStreamEnded : parsesAs("content"),
    });
    const gatewaySystem = (name: string, main: ChildGateway, pacedOne: ChildGateway): System => ({
      name,
      pid: main.pid,
      pacedPid: pacedOne.pid,
      targets: {
        json: anthropicTarget(main.url, "json"),
        stream: anthropicTarget(main.url, "stream"),
        paced: anthropicTarget(pacedOne.url, "stream"),
      },
    });
    const systems: System[] = [
      gatewaySystem("Parley", parleyDefault, pacedDefault),
      gatewaySystem("Parley, traces off", parleyOff, pacedOff),
      {
        name: "bare proxy",
        pid: bare.pid,
        pacedPid: bare.pid,
        targets: {
          json: { ...targets.direct.json, origin: bare.baseUrl, path: "/v1/chat/completions" },
          stream: { ...targets.direct.stream, origin: bare.baseUrl, path: "/v1/chat/completions" },
          paced: { ...targets.pacedDirect, origin: bare.baseUrl, path: "/paced/v1/chat/completions" },
        },
        floor: true,
      },
    ];
    const peerSystem = async (name: string, start: (url: string) => Promise<ChildMockUpstream>, model: string) => {
      const main = keep(await start(completions(mock)));
      const pacedOne = keep(await start(completions(paced)));
      systems.push({
        name,
        pid: main.pid,
        pacedPid: pacedOne.pid,
        targets: {
          json: anthropicTarget(main.baseUrl, "json", model),
          stream: anthropicTarget(main.baseUrl, "stream", model),
          paced: anthropicTarget(pacedOne.baseUrl, "stream", model),
        },
        peer: true,
      });
    };
    // A change measured against its base: `PARLEY_BENCH_PREVIOUS=<other checkout>/dist/parley.js`, run as users run it.
    const previousCli = process.env.PARLEY_BENCH_PREVIOUS;
    if (previousCli !== undefined && previousCli !== "") {
      const previous = (upstream: ChildMockUpstream) =>
        startChildGateway({
          runner: { cli: previousCli },
          asUsersRun: { upstream: upstream.baseUrl },
          discardLogs: true,
          core: 1,
        }).then(keep);
      systems.push({
        ...gatewaySystem("Parley, previous build", await previous(mock), await previous(paced)),
        previous: true,
      });
    }
    const skipped: string[] = [];
    try {
      const folder = ensurePeer();
      await peerSystem("llms 1.0.53", (url) => startPeer(folder, url, 1), PEER_MODEL);
    } catch (error) {
      skipped.push(`@musistudio/llms: ${(error as Error).message}`);
    }
    try {
      await peerSystem("claude-code-router 2.0.0", (url) => startCcr(url, 1), CCR_MODEL);
    } catch (error) {
      skipped.push(`@musistudio/claude-code-router: ${(error as Error).message}`);
    }

    for (const system of systems) {
      for (const mode of ["stream", "json"] as const) await closedLoop(system.targets[mode], 16, WARMUP_MS);
    }
    const run: PeerRun = {
      systems,
      reps: REPS,
      cellMs: CELL_MS,
      pacedMs: PACED_MS,
      direct: new Map(),
      cells: new Map(systems.map((system) => [system.name, new Map()])),
      large: { bodyBytes: 0, direct: new Map(), parley: new Map(), bare: new Map() },
      skipped,
    };
    const cellsOf = (system: System): Cells => run.cells.get(system.name)!;
    for (let rep = 0; rep < REPS; rep++) {
      // The order turns each rep, so that drift within a rep favours no system.
      const order = systems.map((_, index) => systems[(index + rep) % systems.length]!);
      for (const mode of ["stream", "json"] as const) {
        for (const concurrency of [1, 16]) {
          const key = `${mode}/${concurrency}`;
          push(run.direct, key, await closedLoop(targets.direct[mode], concurrency, CELL_MS));
          for (const system of order) {
            push(cellsOf(system), key, await gatewayCell(system.pid, system.targets[mode], concurrency, CELL_MS));
          }
        }
      }
    }
    for (let rep = 0; rep < 2; rep++) {
      for (const system of systems) {
        push(cellsOf(system), "paced", await gatewayCell(system.pacedPid, system.targets.paced, 16, PACED_MS));
      }
    }
    run.jsonFloor = await jsonFloor(parleyDefault.url, targets.direct.json);
    run.traceFloor = await traceFloors(parleyDefault.url, targets.direct);
    await largeCells(run, parleyDefault, bare, mock);
    run.profile = await profileDefault(mock, anthropicTarget);
    return { title, markdown: peerReport(run) };
  } finally {
    unpin();
    for (const child of started.reverse()) await child.stop();
  }
}

/**
 * A Claude Code-sized request (the whole history re-sent, over a megabyte) through the default config and
 * through the bare proxy, streamed as Claude Code asks.
 */
async function largeCells(run: PeerRun, parley: ChildGateway, bare: ChildMockUpstream, mock: ChildMockUpstream) {
  const body = largeClaudeCodeBody();
  run.large.bodyBytes = Buffer.byteLength(body);
  const parleyTarget: LoadTarget = {
    origin: parley.url,
    path: "/v1/messages",
    body,
    headers: anthropicHeaders,
    check: anthropicStreamEnded,
  };
  const sent = await request(`${parley.url}/v1/messages`, { method: "POST", headers: anthropicHeaders, body });
  const answer = await sent.body.text();
  if (sent.statusCode !== 200) throw new Error(`the gateway answered ${sent.statusCode}: ${answer.slice(0, 500)}`);
  const upstreamBody = await (await request(`${new URL(mock.baseUrl).origin}/last-request?stream=1`)).body.text();
  const openai = (origin: string, path: string): LoadTarget => ({
    origin,
    path,
    body: upstreamBody,
    headers: { "content-type": "application/json", authorization: "Bearer bench" },
    check: openaiStreamEnded,
  });
  const direct = openai(new URL(mock.baseUrl).origin, `${new URL(mock.baseUrl).pathname}/chat/completions`);
  const viaBare = openai(bare.baseUrl, "/v1/chat/completions");
  await closedLoop(parleyTarget, 4, WARMUP_MS);
  await closedLoop(viaBare, 4, WARMUP_MS);
  for (let rep = 0; rep < run.reps; rep++) {
    for (const concurrency of LARGE_CONCURRENCIES) {
      const key = String(concurrency);
      push(run.large.direct, key, await closedLoop(direct, concurrency, CELL_MS));
      push(run.large.parley, key, await gatewayCell(parley.pid, parleyTarget, concurrency, CELL_MS));
      push(run.large.bare, key, await gatewayCell(bare.pid, viaBare, concurrency, CELL_MS));
    }
  }
}

/**
 * Where the default config's time goes: one more gateway as users run it, under `node --cpu-prof`, the json c=16
 * load for a few seconds; each thread's profile summarized by self time and divided by the requests served.
 */
async function profileDefault(
  mock: ChildMockUpstream,
  targetOf: (origin: string, mode: Mode) => LoadTarget,
): Promise<NonNullable<PeerRun["profile"]>> {
  const folder = mkdtempSync(join(tmpdir(), "parley-bench-profile-"));
  try {
    // The same bundle as dist/parley.js, built with source maps so that each frame is named by its source file.
    const mapped = buildCli({ sourceMaps: true, folder: "bench-profile-dist" });
    const gateway = await startChildGateway({
      runner: { cli: mapped },
      asUsersRun: { upstream: mock.baseUrl },
      nodeArgs: ["--cpu-prof", "--cpu-prof-dir", folder],
      discardLogs: true,
      core: 1,
    });
    let requests = 0;
    try {
      const target = targetOf(gateway.url, "json");
      // The warm-up's requests are in the profile too.
      requests += (await closedLoop(target, 16, WARMUP_MS)).requests;
      requests += (await closedLoop(target, 16, PROFILE_MS)).requests;
    } finally {
      await gateway.stop();
    }
    const [main, ...workers] = profilesIn(folder);
    const bundles = ["parley.js", "trace-worker.js"].map((file) => join(dirname(mapped), file));
    return {
      requests,
      main: summarizeProfile(main!, bundles),
      workers: workers.map((path) => summarizeProfile(path, bundles)),
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const PROFILE_MS = 4_000;

/** The trace floors (support/trace-floor.ts), bare and kept, on the very bodies of the json and stream cells. */
async function traceFloors(gatewayUrl: string, direct: Record<Mode, LoadTarget>): Promise<TraceFloors> {
  const post = async (url: string, headers: Record<string, string>, body: string) =>
    (await request(url, { method: "POST", headers, body })).body.text();
  const floors: TraceFloors = { json: 0, stream: 0, kept: { json: 0, stream: 0 }, triggered: 0 };
  for (const mode of ["json", "stream"] as const) {
    const clientRequest = JSON.stringify(claudeCodeLikeBody(mode === "stream"));
    const clientAnswer = await post(`${gatewayUrl}/v1/messages`, anthropicHeaders, clientRequest);
    const target = direct[mode];
    const upstreamAnswer = await post(`${target.origin}${target.path}`, target.headers, target.body);
    const bodies = [clientRequest, target.body, upstreamAnswer, clientAnswer] as const;
    floors[mode] = (await traceFloor(bodies)).micros;
    const kept = await traceFloor(bodies, { kept: true });
    floors.kept[mode] = kept.micros;
    floors.triggered += kept.triggered;
  }
  return floors;
}

/**
 * What any translating gateway must do that the bare proxy does not, per non-streamed request: parse the answer
 * and write both bodies anew (the bare proxy parses the request too, and passes the answer's bytes on). Measured
 * in this process on the very bodies of the json cells: JSON.stringify of the parsed request, JSON.parse and
 * JSON.stringify of the upstream's answer and of the client's.
 */
async function jsonFloor(
  gatewayUrl: string,
  direct: LoadTarget,
): Promise<{ request: number; frame: number; logLine: number }> {
  const upstreamAnswer = await (
    await request(`${direct.origin}${direct.path}`, { method: "POST", headers: direct.headers, body: direct.body })
  ).body.text();
  const clientBody = JSON.stringify(claudeCodeLikeBody(false));
  const clientAnswer = await (
    await request(`${gatewayUrl}/v1/messages`, { method: "POST", headers: anthropicHeaders, body: clientBody })
  ).body.text();
  const parsedRequest = JSON.parse(clientBody) as unknown;
  const perSecond = rate(() => {
    JSON.stringify(parsedRequest);
    JSON.stringify(JSON.parse(upstreamAnswer));
    JSON.stringify(JSON.parse(clientAnswer));
  }, 1_000);
  // A streamed frame: the upstream's chunk parsed, the client's event written.
  const frame = streamFrames[5]!.slice("data: ".length);
  const framesPerSecond = rate(() => {
    const chunk = JSON.parse(frame) as { choices: Array<{ delta: { content: string } }> };
    const text = chunk.choices[0]!.delta.content;
    JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } });
  }, 1_000);
  // The one line a gateway logs per request (pino as Parley's server makes it, its fields for a json request),
  // into a stream that keeps nothing: serializing the line, not writing it (Parley writes lines in 8 KB batches).
  const logger = pino({ level: "info", base: null }, { write: () => {} });
  const linesPerSecond = rate(() => {
    logger.info(
      {
        requestId: "req_0192f3c4d5e6a7b8c9d0e1f2a3b4c5d6",
        route: "POST /v1/messages",
        status: 200,
        durationMs: 0.61,
        provider: "mock",
        upstreamModel: PEER_MODEL,
        clientModel: "claude-sonnet-4-5",
        stream: false,
        upstreamMs: 0.21,
        attempts: 1,
        inputTokens: 1812,
        outputTokens: 64,
      },
      "request",
    );
  }, 1_000);
  return { request: 1e6 / perSecond, frame: 1e6 / framesPerSecond, logLine: 1e6 / linesPerSecond };
}
