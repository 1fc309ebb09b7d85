import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url));
const builtCli = join(repositoryRoot, "dist/parley.js");
const sourceCli = join(repositoryRoot, "src/cli/main.ts");
const mockUpstreamScript = join(repositoryRoot, "bench/support/mock-upstream.ts");
const bareProxyScript = join(repositoryRoot, "bench/support/bare-proxy.mjs");

/**
 * How the child runs `parley serve`: the package's built CLI (what users run), the sources through tsx, or a
 * CLI built elsewhere (`{ cli: path }`, see `buildCli`).
 */
export type GatewayRunner = "dist" | "tsx" | { cli: string };

export interface ChildGatewayOptions {
  /** The config file's content (providers, routes, timeouts...); written to a temporary JSON file. */
  config?: Record<string, unknown>;
  /**
   * Runs it as the README starts it: `serve --upstream URL`, in a fresh empty folder as its working directory,
   * so that it opens its default store there (SQLite, traces on); no config file unless `config` is given,
   * no `--store`.
   */
  asUsersRun?: { upstream: string };
  /** Pins the gateway to this core with `taskset -c`. */
  core?: number;
  /** Defaults to `dist` when the CLI is built, else `tsx`. */
  runner?: GatewayRunner;
  /** Extra environment for the child (it inherits the parent's). */
  env?: Record<string, string>;
  /** Drops the child's stderr (its JSON logs) instead of keeping its tail. */
  discardLogs?: boolean;
  /** Gives up when the gateway has not printed its listening line by then. */
  readyTimeoutMs?: number;
  /** The store URL (default `memory:`). */
  store?: string;
  /** Options for node itself (`--cpu-prof`...), before the script. */
  nodeArgs?: string[];
}

export interface ChildGateway {
  url: string;
  pid: number;
  runner: GatewayRunner;
  /** From spawn to the listening line on stdout. */
  readyMs: number;
  /** Everything the child wrote to stderr so far (its logs). */
  stderr(): string;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

export function builtCliExists(): boolean {
  return existsSync(builtCli);
}

/**
 * Compiles and bundles the current sources into a scratch folder inside the repository (ignored by git, so
 * that the dependencies resolve) and returns the CLI's path: a benchmark then measures the code as it is now, run by
 * plain node, even when `dist/` is stale or absent. Type errors do not stop the emit.
 */
export function buildCli(options: { sourceMaps?: boolean; folder?: string } = {}): string {
  const outDir = join(repositoryRoot, ".cache", options.folder ?? "bench-dist");
  const maps = options.sourceMaps ? ["--sourceMap", "true"] : [];
  rmSync(outDir, { recursive: true, force: true });
  try {
    execFileSync(
      process.execPath,
      [
        join(repositoryRoot, "node_modules/typescript/bin/tsc"),
        "-p",
        "tsconfig.build.json",
        "--outDir",
        outDir,
        ...maps,
      ],
      {
        cwd: repositoryRoot,
        stdio: "ignore",
      },
    );
  } catch {
    // tsc exits non-zero on type errors but has still written the JavaScript
  }
  // Bundled as `npm run build` bundles the shipped binary, so that start-up is measured as users get it.
  const cli = join(outDir, "parley.js");
  execFileSync(process.execPath, [join(repositoryRoot, "scripts/bundle-cli.mjs"), join(outDir, "cli/main.js"), cli], {
    cwd: repositoryRoot,
    stdio: "ignore",
    env: { ...process.env, PARLEY_BUNDLE_SOURCEMAP: options.sourceMaps ? "1" : "0" },
  });
  if (!existsSync(cli)) throw new Error("building the CLI for the benchmark produced no parley.js");
  return cli;
}

/** The command line that starts `parley serve` with these arguments. */
export function serveCommand(
  runner: GatewayRunner,
  args: string[],
  core: number | undefined,
  nodeArgs: string[] = [],
): { file: string; args: string[] } {
  const entry = runner === "dist" ? [builtCli] : runner === "tsx" ? ["--import", "tsx", sourceCli] : [runner.cli];
  const node = [...nodeArgs, ...entry, "serve", ...args];
  if (core === undefined) return { file: process.execPath, args: node };
  return { file: "taskset", args: ["-c", String(core), process.execPath, ...node] };
}

/**
 * Runs `parley serve` in a child process on 127.0.0.1 (a free port, the in-memory store unless told) and resolves once it
 * prints its listening line. The child's pid is the gateway's own (taskset execs in place), so /proc/pid
 * gives the gateway's CPU and memory.
 */
export async function startChildGateway(options: ChildGatewayOptions): Promise<ChildGateway> {
  const runner = options.runner ?? (builtCliExists() ? "dist" : "tsx");
  const folder = mkdtempSync(join(tmpdir(), "parley-bench-"));
  const configPath = join(folder, "parley.json");
  if (options.config !== undefined) writeFileSync(configPath, JSON.stringify(options.config));
  const listen = ["--host", "127.0.0.1", "--port", "0"];
  const args =
    options.asUsersRun === undefined
      ? ["--config", configPath, ...listen, "--store", options.store ?? "memory:"]
      : ["--upstream", options.asUsersRun.upstream, ...listen, ...(options.config ? ["--config", configPath] : [])];
  const command = serveCommand(runner, args, options.core, options.nodeArgs);
  const started = performance.now();
  const child = spawn(command.file, command.args, {
    cwd: options.asUsersRun === undefined ? repositoryRoot : folder,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", options.discardLogs ? "ignore" : "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (text: string) => {
    // Keep the tail only: a long run must not grow the parent's memory.
    stderr = (stderr + text).slice(-64 * 1024);
  });
  const cleanUp = () => rmSync(folder, { recursive: true, force: true });
  let url: string;
  try {
    url = await waitForUrl(child, /parley listening on (http:\/\/\S+)/, options.readyTimeoutMs ?? 20_000, () => stderr);
  } catch (error) {
    child.kill("SIGKILL");
    cleanUp();
    throw error;
  }
  const readyMs = performance.now() - started;
  return {
    url,
    pid: child.pid!,
    runner,
    readyMs,
    stderr: () => stderr,
    stop: async (graceMs = 5_000) => {
      const code = await stopChild(child, graceMs);
      cleanUp();
      return code;
    },
  };
}

/** Resolves with the first capture of `pattern` once the child prints it on stdout. */
function waitForUrl(child: ChildProcess, pattern: RegExp, timeoutMs: number, stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(
      () => fail(new Error(`${child.spawnargs.join(" ")} did not start within ${timeoutMs} ms:\n${stderr()}`)),
      timeoutMs,
    );
    const onData = (text: string) => {
      stdout += text;
      const match = pattern.exec(stdout);
      if (match) {
        finish();
        resolve(match[1]!);
      }
    };
    const onExit = (code: number | null) =>
      fail(new Error(`${child.spawnargs.join(" ")} exited with code ${code}:\n${stderr()}`));
    const finish = () => {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.off("exit", onExit);
      // Keep draining stdout so the child never blocks on a full pipe.
      child.stdout?.resume();
    };
    const fail = (error: Error) => {
      finish();
      reject(error);
    };
    child.stdout?.setEncoding("utf8").on("data", onData);
    child.once("exit", onExit);
  });
}

export function stopChild(child: ChildProcess, graceMs: number): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill("SIGTERM");
  });
}

export interface ChildMockUpstream {
  baseUrl: string;
  pid: number;
  stop(): Promise<number | null>;
}

/** The benchmark's mock upstream (see mock-upstream.ts) in its own process, optionally pinned to a core. */
export async function startChildMockUpstream(options: {
  frameDelayMs?: number;
  core?: number;
}): Promise<ChildMockUpstream> {
  const args = [mockUpstreamScript, `--frame-delay=${options.frameDelayMs ?? 0}`];
  return startScript(args, /mock upstream on (http:\/\/\S+)/, options.core);
}

/**
 * A floor `parley serve` is compared with (see bare-proxy.mjs): the bare HTTP proxy (`http`, to both upstreams)
 * or a TCP relay (`tcp`, to one).
 */
export async function startChildBareProxy(options: {
  mode: "http" | "tcp";
  upstreamUrl: string;
  pacedUrl?: string;
  core?: number;
}): Promise<ChildMockUpstream> {
  const args = [bareProxyScript, options.mode, options.upstreamUrl, ...(options.pacedUrl ? [options.pacedUrl] : [])];
  return startScript(args, /bare proxy on (http:\/\/\S+)/, options.core, false);
}

/**
 * A script in its own node process (TypeScript through tsx), optionally pinned with `taskset -c` (which execs
 * in place, so the pid is the script's own and /proc/pid gives its CPU), that prints its URL when ready.
 */
export async function startScript(
  args: string[],
  ready: RegExp,
  core: number | undefined,
  typescript = true,
): Promise<ChildMockUpstream> {
  const node = typescript ? ["--import", "tsx", ...args] : args;
  const command =
    core === undefined
      ? { file: process.execPath, args: node }
      : { file: "taskset", args: ["-c", String(core), process.execPath, ...node] };
  const child = spawn(command.file, command.args, { cwd: repositoryRoot, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (text: string) => {
    stderr = (stderr + text).slice(-16 * 1024);
  });
  try {
    const baseUrl = await waitForUrl(child, ready, 20_000, () => stderr);
    return { baseUrl, pid: child.pid!, stop: () => stopChild(child, 3_000) };
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}
