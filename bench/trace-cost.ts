import { readdirSync, readFileSync } from "node:fs";
import { claudeCodeLikeBody } from "./support/bodies.js";
import { buildCli, type ChildGateway, startChildGateway, startChildMockUpstream } from "./support/children.js";
import { anthropicHeaders, anthropicStreamEnded, parsesAs } from "./support/gateway-cells.js";
import { closedLoop, type LoadTarget } from "./support/load.js";
import { pinProcess, RssSampler } from "./support/process-stats.js";

/**
 * What traces cost, thread by thread: `parley serve` as the README starts it beside the same with traces off,
 * json and stream at c=16, alternating rounds. Per request: the whole process's CPU, the busiest thread's (the
 * event loop) and the rest (the trace writer, libuv's pool, V8's helpers). A tool for working on the trace
 * path, printed, not written to docs/benchmarks.md: `npx tsx bench/trace-cost.ts` (after `npm run build`).
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

async function main(): Promise<void> {
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
          const key = `${name} ${mode}`;
          const list = results.get(key) ?? [];
          list.push(await cell(gateway, target(gateway.url, mode === "stream")));
          results.set(key, list);
        }
      }
    }
  } finally {
    await Promise.all([systems.default.stop(), systems.off.stop(), mock.stop()]);
    unpin();
  }
  console.log("| cell | µs/req all threads | event loop | other threads | req/s | RSS max MB | errors |");
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  for (const [key, list] of results) {
    const m = (pick: (entry: (typeof list)[number]) => number) => median(list.map(pick));
    console.log(
      `| ${key} | ${m((e) => e.totalUs).toFixed(0)} | ${m((e) => e.mainUs).toFixed(0)} | ${m((e) => e.restUs).toFixed(0)} | ${m((e) => e.perSecond).toFixed(0)} | ${m((e) => e.rssMb).toFixed(0)} | ${list.reduce((s, e) => s + e.errors, 0)} |`,
    );
  }
  for (const mode of ["json", "stream"]) {
    const ratios = (results.get(`default ${mode}`) ?? []).map(
      (entry, index) => entry.totalUs / results.get(`off ${mode}`)![index]!.totalUs,
    );
    console.log(`${mode}: default / traces off CPU per request, median of reps: ${median(ratios).toFixed(2)}`);
  }
}

await main();
