import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "undici";
import { claudeCodeLikeBody } from "./support/bodies.js";
import { startMockUpstream } from "./support/mock-upstream.js";

const mock = await startMockUpstream();
const dir = mkdtempSync("/tmp/prof/rss-");
writeFileSync(
  `${dir}/c.json`,
  JSON.stringify({
    providers: { mock: { type: "openai", baseUrl: mock.baseUrl } },
    routes: [{ match: "*", provider: "mock", model: "m" }],
    traces: { enabled: false },
    logLevel: "info",
  }),
);
const extra = (process.env.NODE_FLAGS ?? "").split(" ").filter(Boolean);
const child = spawn(
  process.execPath,
  [...extra, "dist/parley.js", "serve", "--port", "0", "--store", "memory:", "--config", `${dir}/c.json`],
  {
    stdio: ["ignore", "pipe", "ignore"],
    env: { ...process.env, ...(process.env.CHILD_MALLOC ? { MALLOC_ARENA_MAX: process.env.CHILD_MALLOC } : {}) },
  },
);
const url: string = await new Promise((resolve) => {
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
    const m = /listening on (\S+)/.exec(out);
    if (m) resolve(m[1]!);
  });
});
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))![1]) / 1024;
console.log("idle", rss().toFixed(1));
for (const [mode, c] of [
  ["stream", 1],
  ["json", 16],
  ["stream", 128],
] as const) {
  const body = JSON.stringify(claudeCodeLikeBody(mode === "stream"));
  const t0 = performance.now();
  let max = 0;
  const timer = setInterval(() => {
    max = Math.max(max, rss());
  }, 50);
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (performance.now() - t0 < 3000) {
        const r = await request(`${url}/v1/messages`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        await r.body.text();
      }
    }),
  );
  clearInterval(timer);
  console.log(mode, c, "max rss", max.toFixed(1));
}
child.kill();
await mock.close();
