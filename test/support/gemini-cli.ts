import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "./run-command.js";

/**
 * Gemini CLI for end-to-end tests: installed on demand from npm into a cache folder outside the repository (never a
 * project dependency; it is one JavaScript bundle run by this Node), run headless with `-p` against a gateway, in a
 * fresh HOME whose settings select the API-key auth type and turn off usage statistics, telemetry and updates.
 */

/** The newest release on npm when the test was written (`npm view @google/gemini-cli version`). */
export const GEMINI_CLI_VERSION = "0.61.0";
const PACKAGE = "@google/gemini-cli";

/** `$XDG_CACHE_HOME/parley-test/gemini-cli-<version>` (or `~/.cache/...`); reused across runs. */
export function geminiCliCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cacheHome = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME !== "" ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  return join(cacheHome, "parley-test", `gemini-cli-${GEMINI_CLI_VERSION}`);
}

/** The bundle's entry point (what the package's `gemini` bin links to). */
function entryPoint(prefix: string): string {
  return join(prefix, "node_modules", "@google", "gemini-cli", "bundle", "gemini.js");
}

function reportsVersion(entry: string): boolean {
  const home = mkdtempSync(join(tmpdir(), "parley-gemini-probe-"));
  try {
    const probe = spawnSync(process.execPath, [entry, "--version"], {
      encoding: "utf8",
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? "", HOME: home, GEMINI_CLI_HOME: home },
    });
    return probe.status === 0 && probe.stdout.trim() === GEMINI_CLI_VERSION;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * The path of a working Gemini CLI bundle, installing `@google/gemini-cli@<version>` into the cache first when it is
 * missing or broken (its optional native add-ons, a keychain and a pty, are not needed headless and are not built).
 * Throws, saying why, when it cannot be installed or run here.
 */
export async function ensureGeminiCli(cacheDir = geminiCliCacheDir()): Promise<string> {
  const entry = entryPoint(cacheDir);
  if (existsSync(entry) && reportsVersion(entry)) return entry;
  mkdirSync(cacheDir, { recursive: true });
  const args = [
    "install",
    "--prefix",
    cacheDir,
    "--no-save",
    "--no-audit",
    "--no-fund",
    "--ignore-scripts",
    `${PACKAGE}@${GEMINI_CLI_VERSION}`,
  ];
  const install = await runCommand("npm", args, { cwd: cacheDir, timeoutMs: 15 * 60_000 });
  if (install.code !== 0) {
    throw new Error(
      `installing ${PACKAGE}@${GEMINI_CLI_VERSION} into ${cacheDir} failed (npm exit ${install.code}):\n${install.stderr.slice(-2_000)}`,
    );
  }
  if (!existsSync(entry)) throw new Error(`npm installed ${PACKAGE}@${GEMINI_CLI_VERSION} but ${entry} is missing`);
  if (!reportsVersion(entry)) throw new Error(`${entry} does not run here (\`gemini --version\` failed)`);
  return entry;
}

export interface GeminiCliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The `--output-format stream-json` lines, parsed (lines that are not JSON are left out). */
  events: Array<Record<string, unknown>>;
  /** The text of the answer: every assistant `message` event's content, joined. */
  answer: string;
  /** The final `result` event. */
  result: Record<string, unknown> | undefined;
}

export interface GeminiCliOptions {
  /** The bundle `ensureGeminiCli` gave. */
  entry: string;
  /** The gateway's origin (Gemini CLI appends `/v1beta/models/...`). */
  baseUrl: string;
  /** The model it asks for (`-m`); naming one also spares the side request that picks a model. */
  model: string;
  prompt: string;
  apiKey?: string;
  /** Files to create in the working folder before the run, by name. */
  files?: Record<string, string>;
  timeoutMs?: number;
}

/**
 * `gemini -p PROMPT -m MODEL --output-format stream-json -y` in a minimal environment: a fresh HOME and working
 * folder, the gateway as `GOOGLE_GEMINI_BASE_URL`, any key as `GEMINI_API_KEY`, and settings that select that
 * key's auth type (headless, the variable alone is refused) and stop every connection but the gateway's. Any other
 * connection goes to a proxy that is not there, so a release that needs the network fails here.
 */
export async function runGeminiCli(options: GeminiCliOptions): Promise<GeminiCliRun> {
  const home = mkdtempSync(join(tmpdir(), "parley-gemini-home-"));
  const workdir = join(home, "work");
  mkdirSync(join(home, ".gemini"), { recursive: true });
  mkdirSync(workdir);
  for (const [name, text] of Object.entries(options.files ?? {})) writeFileSync(join(workdir, name), text);
  writeFileSync(
    join(home, ".gemini", "settings.json"),
    `${JSON.stringify(
      {
        security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
        general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
      },
      null,
      2,
    )}\n`,
  );
  try {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      GEMINI_CLI_HOME: home,
      TERM: "dumb",
      NO_COLOR: "1",
      GOOGLE_GEMINI_BASE_URL: options.baseUrl,
      GEMINI_API_KEY: options.apiKey ?? "parley-e2e-gemini-key",
      HTTPS_PROXY: OFFLINE_PROXY,
      HTTP_PROXY: OFFLINE_PROXY,
      NO_PROXY: "127.0.0.1,localhost",
    };
    const args = [options.entry, "-p", options.prompt, "-m", options.model, "--output-format", "stream-json", "-y"];
    const outcome = await runCommand(process.execPath, args, {
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
    const answer = events
      .filter((event) => event.type === "message" && event.role === "assistant")
      .map((event) => String(event.content ?? ""))
      .join("");
    return { ...outcome, events, answer, result: events.findLast((event) => event.type === "result") };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** A port nothing listens on (discard): a connection there is refused at once. */
const OFFLINE_PROXY = "http://127.0.0.1:9";
