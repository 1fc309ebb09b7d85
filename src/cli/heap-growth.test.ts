import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { boundHeapGrowth } from "./heap-growth.js";

const run = promisify(execFile);

/**
 * A gateway-like heap: 16 requests in flight, each ~100 KB of objects that outlive a scavenge, and a store of
 * 10,000 entries replaced in turn. Prints the largest heap V8 kept along the way.
 */
const workload = (helper: string, bounded: boolean) => `
  ${bounded ? `const { boundHeapGrowth } = await import(${JSON.stringify(helper)}); boundHeapGrowth();` : ""}
  const live = new Array(10_000);
  const inflight = new Array(16);
  let largest = 0;
  for (let i = 0; i < 300_000; i++) {
    const request = [];
    for (let j = 0; j < 40; j++) request.push({ j, text: \`\${i}:\${j}\`.padEnd(2000, "y") + i });
    inflight[i % 16] = request;
    live[i % live.length] = { id: \`t\${i}\`, body: \`\${i}\`.padEnd(3000, "x") + i };
    if (i % 2000 === 0) largest = Math.max(largest, process.memoryUsage().heapTotal);
  }
  console.log(largest);
`;

async function largestHeap(bounded: boolean): Promise<number> {
  const folder = mkdtempSync(join(tmpdir(), "parley-heap-"));
  const script = join(folder, "workload.mjs");
  writeFileSync(script, workload(new URL("./heap-growth.ts", import.meta.url).href, bounded));
  const { stdout } = await run(process.execPath, ["--import", "tsx", script], { timeout: 60_000 });
  return Number(stdout.trim());
}

describe("boundHeapGrowth", () => {
  test("keeps a gateway-like heap well below what V8 lets it grow to by default", { timeout: 90_000 }, async () => {
    const [unbounded, bounded] = await Promise.all([largestHeap(false), largestHeap(true)]);
    // Measured: ~98 MB against ~72 MB.
    expect(bounded).toBeLessThan(unbounded * 0.85);
  });

  test("leaves a growth given on node's command line alone", () => {
    expect(boundHeapGrowth(["--heap-growing-percent=200"])).toBe(false);
    expect(boundHeapGrowth(["--heap_growing_percent=200"])).toBe(false);
  });
});
