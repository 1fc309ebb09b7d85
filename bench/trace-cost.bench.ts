import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import type { BenchSection } from "./harness.js";
import { claudeCodeLikeBody } from "./support/bodies.js";
import { buildCli, type ChildGateway, startChildGateway, startChildMockUpstream } from "./support/children.js";
import { anthropicHeaders, anthropicStreamEnded, parsesAs } from "./support/gateway-cells.js";
import { closedLoop, type LoadTarget } from "./support/load.js";
import { canReadProcessStats, pinningAvailable, pinProcess, RssSampler } from "./support/process-stats.js";
import { traceCounters } from "./support/trace-counters.js";

/**
 * What traces cost, thread by thread: `parley serve` as the README starts it beside the same with traces off,
 * json and stream at c=16, alternating rounds. Per request: the whole process's CPU, the busiest thread's (the
 * event loop) and the rest (the trace writer, libuv's pool, V8's helpers). Alone:
 * `npx tsx bench/run.ts trace-cost` (after `npm run build`).
 */
const REPS = Number(process.env.PARLEY_BENCH_REPS ?? 3);
const CELL_MS = Number(process.env.PARLEY_BENCH_CELL_MS ?? 2_000);

interface ThreadTimes {
  [tid: string]: number;
}

function threadTimes(pid: number): ThreadTimes {
  const times: ThreadTimes = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // utime + stime in clock ticks, which Linux reports at 100 a second to user space.
      times[tid] = (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // The thread ended.
    }
  }
  return times;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function cell(gateway: ChildGateway, target: LoadTarget) {
  const before = threadTimes(gateway.pid);
  const rss = new RssSampler(gateway.pid).start();
  const result = await closedLoop(target, 16, CELL_MS);
  rss.stop();
  const after = threadTimes(gateway.pid);
  const deltas = Object.keys(after).map((tid) => (after[tid] ?? 0) - (before[tid] ?? 0));
  deltas.sort((a, b) => b - a);
  const total = deltas.reduce((sum, value) => sum + value, 0);
  const requests = result.requests + result.errors;
  return {
    totalUs: (total * 1000) / requests,
    mainUs: (deltas[0]! * 1000) / requests,
    restUs: ((total - deltas[0]!) * 1000) / requests,
    perSecond: result.perSecond,
    errors: result.errors,
    rssMb: rss.maxBytes / 1e6,
  };
}

export default async function traceCostBench(): Promise<BenchSection> {
  const title = "What traces cost, thread by thread";
  if (!pinningAvailable(availableParallelism()) || !canReadProcessStats()) {
    return { title, markdown: "Skipped: this needs two cores, `taskset` and /proc/PID/task." };
  }
  buildCli();
  const unpin = pinProcess(process.pid, 0);
  const mock = await startChildMockUpstream({ core: 0 });
  const start = (off: boolean) =>
    startChildGateway({
      runner: "dist",
      asUsersRun: { upstream: mock.baseUrl },
      ...(off ? { config: { traces: { enabled: false } } } : {}),
      discardLogs: true,
      core: 1,
    });
  const systems = { default: await start(false), off: await start(true) };
  const target = (origin: string, stream: boolean): LoadTarget => ({
    origin,
    path: "/v1/messages",
    body: JSON.stringify(claudeCodeLikeBody(stream)),
    headers: anthropicHeaders,
    check: stream ? anthropicStreamEnded : parsesAs("content"),
  });
  const results = new Map<string, Array<Awaited<ReturnType<typeof cell>>>>();
  let counters = "";
  try {
    for (const gateway of Object.values(systems)) {
      await closedLoop(target(gateway.url, false), 16, 1_000);
      await closedLoop(target(gateway.url, true), 16, 1_000);
    }
    for (let rep = 0; rep < REPS; rep++) {
      for (const mode of ["json", "stream"] as const) {
        const order = rep % 2 === 0 ? (["default", "off"] as const) : (["off", "default"] as const);
        for (const name of order) {
          const gateway = systems[name];
          const key = `${name === "default" ? "traces on" : "traces off"}, ${mode}`;
          const list = results.get(key) ?? [];
          list.push(await cell(gateway, target(gateway.url, mode === "stream")));
          results.set(key, list);
        }
      }
    }
    const { recorded, dropped } = await traceCounters(systems.default.url);
    // The last batch may still be on its way: what is counted is what the writer had finished.
    counters = `${recorded} recorded, ${dropped} dropped`;
  } finally {
    await Promise.all([systems.default.stop(), systems.off.stop(), mock.stop()]);
    unpin();
  }
  const lines = [
    "`parley serve` as the README starts it (traces on) and the same with traces off, side by side in one run",
    `(${REPS} reps of ${CELL_MS / 1000} s per cell, alternating, medians), the same mock and Claude Code-like request as`,
    "the headline, every thread of the server pinned to one core. CPU per request by thread, from",
    "/proc/PID/task: the event loop (the busiest thread) and all others together (the trace writer, V8's",
    "garbage-collection helpers, libuv's pool).",
    "",
    "| cell | µs/req, all threads | event loop | other threads | req/s | RSS max MB |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const [key, list] of results) {
    const m = (pick: (entry: (typeof list)[number]) => number) => median(list.map(pick));
    lines.push(
      `| ${key} | ${m((e) => e.totalUs).toFixed(0)} | ${m((e) => e.mainUs).toFixed(0)} | ${m((e) => e.restUs).toFixed(0)} | ${m((e) => e.perSecond).toFixed(0)} | ${m((e) => e.rssMb).toFixed(0)} |`,
    );
  }
  lines.push("");
  for (const mode of ["json", "stream"]) {
    const on = results.get(`traces on, ${mode}`) ?? [];
    const off = results.get(`traces off, ${mode}`) ?? [];
    const ratio = median(on.map((entry, index) => entry.totalUs / off[index]!.totalUs));
    const loop = median(on.map((entry, index) => entry.mainUs - off[index]!.mainUs));
    const rest = median(on.map((entry, index) => entry.restUs - off[index]!.restUs));
    lines.push(
      `- ${mode}: traces on / off, CPU per request ${ratio.toFixed(2)} (target <= 1.15); traces add ${loop.toFixed(0)} µs on the event loop and ${rest.toFixed(0)} µs in other threads.`,
    );
  }
  const errors = [...results.values()].flat().reduce((sum, entry) => sum + entry.errors, 0);
  lines.push(
    "",
    `Traces of the default config over the whole run: ${counters}. Requests that failed their check: ${errors}.`,
  );
  return { title, markdown: lines.join("\n") };
}
