import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** CPU time and resident memory of one process, read from /proc (Linux only). */
export interface ProcessStats {
  /** User + system CPU time since the process started. */
  cpuMs: number;
  rssBytes: number;
}

const clockTicksPerSecond = readClockTicks();

function readClockTicks(): number {
  try {
    const value = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
    return Number.isFinite(value) && value > 0 ? value : 100;
  } catch {
    return 100;
  }
}

export function canReadProcessStats(): boolean {
  try {
    readProcessStats(process.pid);
    return true;
  } catch {
    return false;
  }
}

export function readProcessStats(pid: number): ProcessStats {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name is in parentheses and may hold spaces: count fields from after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After the name, field 3 (state) is index 0, so utime (14) is index 11 and stime (15) index 12.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { cpuMs: (ticks * 1000) / clockTicksPerSecond, rssBytes: readRss(pid) };
}

function readRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}

/** Samples a process's RSS on a timer and keeps the largest value seen. */
export class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  maxBytes = 0;

  constructor(
    private readonly pid: number,
    private readonly intervalMs = 100,
  ) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    return this;
  }

  sample(): number {
    try {
      const rss = readRss(this.pid);
      if (rss > this.maxBytes) this.maxBytes = rss;
      return rss;
    } catch {
      // the process is gone: the maximum so far stands
      return 0;
    }
  }

  stop(): number {
    if (this.timer) clearInterval(this.timer);
    this.sample();
    return this.maxBytes;
  }
}

/** Whether `taskset` can pin processes to cores here (Linux with util-linux and at least two cores). */
export function pinningAvailable(cores: number): boolean {
  if (cores < 2) return false;
  try {
    execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Pins every thread of a running process to one core; returns a function that restores its former
 * affinity. Used to keep the load generator off the gateway's core.
 */
export function pinProcess(pid: number, core: number): () => void {
  const before = /:\s*([0-9a-f]+)\s*$/i.exec(execFileSync("taskset", ["-p", String(pid)], { encoding: "utf8" }))?.[1];
  execFileSync("taskset", ["-a", "-p", "-c", String(core), String(pid)], { stdio: "ignore" });
  return () => {
    if (before !== undefined) execFileSync("taskset", ["-a", "-p", before, String(pid)], { stdio: "ignore" });
  };
}
