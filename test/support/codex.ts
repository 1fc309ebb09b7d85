import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "./run-command.js";

/**
 * The Codex CLI for end-to-end tests: installed on demand from npm into a cache folder outside the repository
 * (never a project dependency; its platform binary comes as an optional npm dependency), run headless with
 * `codex exec` against a gateway, in a fresh `CODEX_HOME` whose config points a model provider at it.
 */

export const CODEX_VERSION = "0.171.0";
const PACKAGE = "@openai/codex";

/** `$XDG_CACHE_HOME/parley-test/codex-<version>` (or `~/.cache/...`); reused across runs. */
export function codexCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cacheHome = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME !== "" ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  return join(cacheHome, "parley-test", `codex-${CODEX_VERSION}`);
}

/** The native executable the platform package holds (`vendor/<target triple>/bin/codex`). */
function findBinary(prefix: string): string | undefined {
  const scope = join(prefix, "node_modules", "@openai");
  if (!existsSync(scope)) return undefined;
  const platformPackages = readdirSync(scope).filter((name) => name.startsWith("codex-"));
  for (const name of [...platformPackages, "codex"]) {
    const vendor = join(scope, name, "vendor");
    if (!existsSync(vendor)) continue;
    for (const triple of readdirSync(vendor)) {
      const candidate = join(vendor, triple, "bin", process.platform === "win32" ? "codex.exe" : "codex");
      if (existsSync(candidate) && statSync(candidate).size > 1_000_000) return candidate;
    }
  }
  return undefined;
}

function reportsVersion(binary: string): boolean {
  const probe = spawnSync(binary, ["--version"], {
    encoding: "utf8",
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? "" },
  });
  return probe.status === 0 && probe.stdout.includes(CODEX_VERSION);
}

/**
 * The path of a working `codex` executable, installing `@openai/codex@0.169.0` into the cache first when it is
 * missing or broken. Throws, saying why, when it cannot be installed or run here.
 */
export async function ensureCodex(cacheDir = codexCacheDir()): Promise<string> {
  const cached = findBinary(cacheDir);
  if (cached !== undefined && reportsVersion(cached)) return cached;
  mkdirSync(cacheDir, { recursive: true });
  const args = ["install", "--prefix", cacheDir, "--no-save", "--no-audit", "--no-fund", `${PACKAGE}@${CODEX_VERSION}`];
  const install = await runCommand("npm", args, { cwd: cacheDir, timeoutMs: 15 * 60_000 });
  if (install.code !== 0) {
    throw new Error(
      `installing ${PACKAGE}@${CODEX_VERSION} into ${cacheDir} failed (npm exit ${install.code}):\n${install.stderr.slice(-2_000)}`,
    );
  }
  const installed = findBinary(cacheDir);
  if (installed === undefined) {
    throw new Error(
      `npm installed ${PACKAGE}@${CODEX_VERSION} into ${cacheDir} but no native executable for ${process.platform}-${process.arch} came with it`,
    );
  }
  if (!reportsVersion(installed)) throw new Error(`${installed} does not run here (\`codex --version\` failed)`);
  return installed;
}

export interface CodexRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The `--json` event lines, parsed (lines that are not JSON are left out). */
  events: Array<Record<string, unknown>>;
  /** The text of the last `agent_message` item Codex printed. */
  lastMessage: string | undefined;
}

export interface CodexOptions {
  binary: string;
  /** The gateway's API root, `http://host:port/v1`. */
  baseUrl: string;
  model: string;
  prompt: string;
  apiKey?: string;
  timeoutMs?: number;
  /** More `config.toml` lines after the model's settings: top-level keys first, then any table (`[features]`). */
  config?: string[];
  /** The model provider's `name` (Codex decides some behaviour by it: `OpenAI` compacts remotely). */
  providerName?: string;
  /** A HOME the caller made and removes, kept between runs so that a later run can resume the session. */
  home?: string;
  /** `codex exec resume --last PROMPT`: the next turn of the newest session in `home`. */
  resume?: boolean;
}

/**
 * `codex exec --json PROMPT` in a minimal environment: a fresh HOME and `CODEX_HOME` whose config names one model
 * provider (the gateway, Responses wire, no retries), no sandbox (the test's working folder is a throwaway one),
 * and nothing that would reach OpenAI.
 */
export async function runCodex(options: CodexOptions): Promise<CodexRun> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "parley-codex-home-"));
  const codexHome = join(home, ".codex");
  const workdir = join(home, "work");
  mkdirSync(codexHome, { recursive: true });
  mkdirSync(workdir, { recursive: true });
  writeFileSync(
    join(codexHome, "config.toml"),
    [
      `model = ${JSON.stringify(options.model)}`,
      `model_provider = "parley"`,
      `model_reasoning_summary = "auto"`,
      `approval_policy = "never"`,
      `sandbox_mode = "danger-full-access"`,
      ...(options.config ?? []),
      "",
      "[model_providers.parley]",
      `name = ${JSON.stringify(options.providerName ?? "Parley")}`,
      `base_url = ${JSON.stringify(options.baseUrl)}`,
      `wire_api = "responses"`,
      `env_key = "PARLEY_E2E_KEY"`,
      "request_max_retries = 0",
      "stream_max_retries = 0",
      "",
    ].join("\n"),
  );
  try {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      CODEX_HOME: codexHome,
      TERM: "dumb",
      PARLEY_E2E_KEY: options.apiKey ?? "sk-parley-e2e",
      RUST_LOG: "error",
    };
    const args = [
      ...["exec", "--json", "--skip-git-repo-check", "--cd", workdir],
      ...(options.resume === true ? ["resume", "--last"] : []),
      options.prompt,
    ];
    const outcome = await runCommand(options.binary, args, {
      cwd: workdir,
      env,
      timeoutMs: options.timeoutMs ?? 120_000,
    });
    const events = outcome.stdout
      .split("\n")
      .filter((line) => line.trim().startsWith("{"))
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
    const messages = events
      .map((event) => event.item as { type?: string; text?: string } | undefined)
      .filter((item) => item?.type === "agent_message");
    return { ...outcome, events, lastMessage: messages.at(-1)?.text };
  } finally {
    if (options.home === undefined) rmSync(home, { recursive: true, force: true });
  }
}
