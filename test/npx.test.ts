import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { request } from "undici";
import { describe, expect, test } from "vitest";

/**
 * `npx parley serve` runs the gateway under `npm exec` and a shell: a SIGTERM to npx ends those two, and the gateway
 * must not be left serving. npx runs here with its own cache folder and with scripts off, so that it links the
 * project without running its `prepare` build (the bundle is already built) and needs no network.
 */

const root = fileURLToPath(new URL("..", import.meta.url));

describe("npx parley serve", () => {
  test("stopped by SIGTERM to the npx process, leaves no gateway behind", { timeout: 60_000 }, async () => {
    expect(existsSync(join(root, "dist/parley.js")), "run npm install (or npm run build) first").toBe(true);
    const cache = mkdtempSync(join(tmpdir(), "parley-npx-cache-"));
    const marker = randomUUID();
    const npx = spawn(
      "npx",
      ["parley", "serve", "--port", "0", "--store", "memory:", "--upstream", "http://127.0.0.1:9/v1"],
      {
        cwd: root,
        env: {
          ...process.env,
          npm_config_cache: cache,
          npm_config_ignore_scripts: "true",
          npm_config_offline: "true",
          npm_config_update_notifier: "false",
          PARLEY_LOG_LEVEL: "silent",
          PARLEY_TEST_MARKER: marker,
        },
      },
    );
    try {
      let stdout = "";
      npx.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      const exited = new Promise<void>((resolve) => npx.on("exit", () => resolve()));
      const url = await waitFor(() => /parley listening on (\S+)\n/.exec(stdout)?.[1], 45_000);
      expect((await request(`${url}/health`)).statusCode).toBe(200);
      npx.kill("SIGTERM");
      await exited;
      const gone = await waitFor(async () => ((await answers(url)) ? undefined : true), 10_000).catch(() => false);
      expect(gone, "the gateway still answers after npx was stopped").toBe(true);
    } finally {
      npx.kill("SIGKILL");
      killMarked(marker);
      rmSync(cache, { recursive: true, force: true });
    }
  });
});

async function answers(url: string): Promise<boolean> {
  try {
    await (await request(`${url}/health`)).body.dump();
    return true;
  } catch {
    return false;
  }
}

async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A gateway this test started and left behind (the check failed) is ended by its process id. */
function killMarked(marker: string): void {
  if (!existsSync("/proc")) return;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "utf8").includes(`PARLEY_TEST_MARKER=${marker}`)) {
        process.kill(Number(entry), "SIGKILL");
      }
    } catch {
      // Gone already, or not ours to read.
    }
  }
}
