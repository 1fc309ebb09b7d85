import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../src/store/open-store.js";
import type { TraceRecord } from "../src/store/traces/trace-store.js";
import { claudeCodeLikeBody } from "./support/bodies.js";
import { streamFrames } from "./support/mock-upstream.js";

/**
 * The SQLite trace writer's CPU per trace, apart from the rest of the process: `npx tsx bench/trace-writer-cpu.ts`
 * records TRACES (default 20,000) Claude Code-like traces (a ~6.5 KB request, its Chat Completions form, two
 * small JSON answers, or with STREAM=1 two event streams and their arrival times, one loss reported) through the real store, 16 at a time a macrotask apart and paced below the queue's bound,
 * past the default 10,000 kept (so that pruning is paid as in a gateway's steady state). It prints each
 * thread's CPU per trace (Linux: /proc/self/task; the writer is the busiest thread besides main), the
 * process's, and what `recordTrace` takes on the caller's thread. Not part of `npm run bench`: a tool for
 * changes to the writer.
 */
const TRACES = Number(process.env.TRACES ?? 20_000);
/** `STREAM=1`: streamed answers instead (the mock upstream's 67 frames, the client's events, their arrival times). */
const STREAM = process.env.STREAM === "1";

function threadTicks(): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    // utime and stime, in clock ticks (1/100 s), after the command name.
    const fields = readFileSync(`/proc/self/task/${tid}/stat`, "utf8").split(") ")[1]!.split(" ");
    ticks.set(tid, Number(fields[11]) + Number(fields[12]));
  }
  return ticks;
}

const client = JSON.stringify(claudeCodeLikeBody(false));
const upstream = JSON.stringify({ model: "bench-model", messages: claudeCodeLikeBody(false).messages });
const answer = { role: "assistant", content: "Done: the file was read." };
const upstreamStream = streamFrames.join("");
const clientStream = streamFrames
  .slice(1, -2)
  .map((frame) => {
    const text = (JSON.parse(frame.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]!.delta
      .content;
    const data = { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } };
    return `event: content_block_delta\ndata: ${JSON.stringify(data)}\n\n`;
  })
  .join("");
const arrivals = (frames: number) => {
  const marks: number[] = [];
  for (let index = 0; index < frames; index++) marks.push(index * 180, Math.round(index * 51.7) / 10);
  return marks;
};

function trace(index: number): TraceRecord {
  return {
    id: `tr_${String(index + 1_000_000)}_${"x".repeat(16)}`,
    requestId: `req_${String(index + 1_000_000)}_${"y".repeat(16)}`,
    createdAt: new Date().toISOString(),
    route: "/v1/messages",
    provider: "mock",
    clientModel: "claude-sonnet-4-5",
    upstreamModel: "bench-model",
    status: 200,
    durationMs: 3.2,
    inputTokens: 1200,
    outputTokens: 30,
    tenant: "default",
    stream: false,
    clientRequest: client,
    upstreamRequest: upstream,
    upstreamResponse: STREAM
      ? upstreamStream
      : JSON.stringify({ id: `chatcmpl-${index}`, choices: [{ index: 0, message: answer }] }),
    clientResponse: STREAM
      ? clientStream
      : JSON.stringify({ id: `msg_${index}`, type: "message", ...answer, stop_reason: "end_turn" }),
    ...(STREAM ? { arrivals: { upstreamResponse: arrivals(67), clientResponse: arrivals(66) } } : {}),
    // What every Claude Code request to a Chat Completions provider reports.
    lossy: [
      { code: "cache_control-stripped", message: "cache_control cannot be sent", path: "messages[0].content[0]" },
    ],
    repair: [],
    timings: { totalMs: 3.2, upstreamMs: 2.1 },
  };
}

const folder = mkdtempSync(join(tmpdir(), "parley-trace-writer-"));
const store = await openStore(`sqlite:${join(folder, "traces.db")}`);
try {
  // The writer's thread started and its statements prepared before measuring.
  await Promise.all(Array.from({ length: 500 }, (_, index) => store.traces.record(trace(-1 - index))));
  const cpuBefore = process.cpuUsage();
  const ticksBefore = threadTicks();
  let callerMs = 0;
  const recorded: Array<Promise<void>> = [];
  for (let index = 0; index < TRACES; index += 16) {
    const started = performance.now();
    for (let one = index; one < Math.min(TRACES, index + 16); one++) recorded.push(store.traces.record(trace(one)));
    callerMs += performance.now() - started;
    await new Promise((resolve) => setImmediate(resolve));
    while (store.traces.stats().queued > 1_000) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.all(recorded);
  const cpu = process.cpuUsage(cpuBefore);
  const threads = [...threadTicks()]
    .map(
      ([tid, ticks]) =>
        [tid === String(process.pid) ? "main" : tid, ((ticks - (ticksBefore.get(tid) ?? 0)) * 1e4) / TRACES] as const,
    )
    .filter(([, us]) => us >= 1)
    .map(([tid, us]) => `${tid} ${us.toFixed(0)}`);
  console.log(`µs a trace by thread: ${threads.join(", ")}`);
  console.log(
    `process: ${((cpu.user + cpu.system) / TRACES).toFixed(0)} µs a trace; recordTrace on the caller: ${((callerMs * 1e3) / TRACES).toFixed(1)} µs`,
  );
  console.log(
    `stats: ${JSON.stringify(store.traces.stats())}; file: ${statSync(join(folder, "traces.db")).size} bytes`,
  );
} finally {
  await store.close();
  rmSync(folder, { recursive: true, force: true });
}
