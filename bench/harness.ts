import { cpus, totalmem } from "node:os";

/** One section of docs/benchmarks.md, produced by one bench module. */
export interface BenchSection {
  title: string;
  /** Markdown body: a table of ratios measured side by side in one run, plus how to read it. */
  markdown: string;
}

export type BenchModule = () => Promise<BenchSection>;

/** Runs `work` repeatedly for about `ms` milliseconds after a warm-up; returns runs per second. */
export function rate(work: () => void, ms = 500): number {
  const warmUntil = performance.now() + ms / 5;
  while (performance.now() < warmUntil) work();
  let runs = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    work();
    runs++;
    now = performance.now();
  }
  return (runs * 1000) / (now - start);
}

/**
 * Measures two pieces of work alternately, several rounds each, so machine noise hits both alike;
 * returns the median rate of each and the median of the per-round ratios.
 */
export function sideBySide(
  subject: () => void,
  baseline: () => void,
  rounds = 5,
  ms = 300,
): { subject: number; baseline: number; ratio: number } {
  const subjectRates: number[] = [];
  const baselineRates: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const s = rate(subject, ms);
    const b = rate(baseline, ms);
    subjectRates.push(s);
    baselineRates.push(b);
    ratios.push(s / b);
  }
  return { subject: median(subjectRates), baseline: median(baselineRates), ratio: median(ratios) };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function machineNote(): string {
  const cpu = cpus()[0]?.model ?? "unknown CPU";
  return `${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}`;
}

export function table(header: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export function fixed(value: number, digits = 2): string {
  return value.toFixed(digits);
}
