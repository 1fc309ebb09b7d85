import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { loadConfig } from "../../src/gateway/config/load.js";
import { type RunningGateway, startGateway } from "../../src/gateway/server.js";
import { runCommand } from "./run-command.js";

/**
 * llama.cpp's `llama-server` on a tiny generated model, for the tests that need a real model server: built and
 * generated on first use by `scripts/llamacpp/ensure-server.mjs` (cached outside the repository; a lock makes
 * parallel test files wait for one build), started on 127.0.0.1 on a free port, stopped afterwards.
 */

export interface LlamaServerBuild {
  binary: string;
  model: string;
  /** The npm package the source came from, `node-llama-cpp@<version>`. */
  version: string;
  commit: string;
}

/** Building takes 6-7 minutes on two quiet cores the first time (25 on busy ones); the set-up waits this long. */
export const LLAMA_SERVER_BUILD_TIMEOUT_MS = 40 * 60_000;

const ENSURE_SCRIPT = fileURLToPath(new URL("../../scripts/llamacpp/ensure-server.mjs", import.meta.url));

/** The binary and model, building them first when the cache has none. Throws, saying why, when it cannot. */
export async function ensureLlamaServer(): Promise<LlamaServerBuild> {
  const outcome = await runCommand(process.execPath, [ENSURE_SCRIPT], {
    cwd: process.cwd(),
    timeoutMs: LLAMA_SERVER_BUILD_TIMEOUT_MS,
  });
  const line = outcome.stdout.trim().split("\n").at(-1) ?? "";
  if (outcome.code !== 0 || !line.startsWith("{")) {
    throw new Error(`building llama-server failed (exit ${outcome.code}):\n${outcome.stderr.slice(-3_000)}`);
  }
  return JSON.parse(line) as LlamaServerBuild;
}

export interface LlamaServerOptions {
  /** The name the server answers with (`--alias`). */
  alias?: string;
  /** `--reasoning-format`: `deepseek` splits thinking into `reasoning_content`, `none` leaves `<think>` in content. */
  reasoningFormat?: "deepseek" | "none" | "auto";
  /** `-c`: the context, one slot (`-np 1`), so this is also the per-request window. */
  contextSize?: number;
}

export interface RunningLlamaServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  alias: string;
  build: LlamaServerBuild;
  /** Everything it printed so far (its log goes to stderr). */
  log(): string;
  stop(): Promise<void>;
}

export const DEFAULT_ALIAS = "tiny-qwen3";

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts `llama-server` (seeded, one slot, two threads, offline) and resolves once `/health` answers 200. */
export async function startLlamaServer(
  build: LlamaServerBuild,
  options: LlamaServerOptions = {},
): Promise<RunningLlamaServer> {
  const alias = options.alias ?? DEFAULT_ALIAS;
  const port = await freePort();
  const args = [
    ...["-m", build.model, "--host", "127.0.0.1", "--port", String(port)],
    ...["-c", String(options.contextSize ?? 2048), "-np", "1", "-t", "2", "--seed", "7", "--alias", alias],
    ...["--no-webui", "--offline", "--reasoning-format", options.reasoningFormat ?? "deepseek"],
  ];
  const child = spawn(build.binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-200_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(origin, child, () => output);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return { origin, alias, build, log: () => output, stop: () => stopChild(child) };
}

async function waitForHealth(origin: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `llama-server exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${log().slice(-3_000)}`,
      );
    }
    try {
      const response = await fetch(`${origin}/health`);
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`llama-server did not answer ${origin}/health within 60 s:\n${log().slice(-3_000)}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/**
 * Parley as a new user starts it in front of the server: `parley serve --upstream <url>` (and `--upstream-type`
 * where given), nothing else but a free port and an in-memory store; resolves once the upstream's models are read.
 */
export async function startParleyFor(
  upstream: string,
  upstreamType?: "openai" | "anthropic" | "openai-responses",
): Promise<RunningGateway> {
  const config = loadConfig(
    {
      upstream,
      ...(upstreamType === undefined ? {} : { upstreamType }),
      port: "0",
      store: "memory:",
      inspector: false,
    },
    {},
  );
  const gateway = await startGateway(config, { logger: pino({ level: process.env.PARLEY_TEST_LOG ?? "silent" }) });
  // `parley serve` reports the providers' models once they answered; so do the tests before their first request.
  await gateway.discovery;
  return gateway;
}
