import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "./run-command.js";

/**
 * The Claude Code CLI for end-to-end tests: installed on demand from npm into a cache folder outside the
 * repository (never a project dependency), run headless against a gateway, its HTTP traffic recorded.
 */

/** The newest release the tests run. */
export const CLAUDE_CODE_VERSION = "2.1.332";

/**
 * The releases the end-to-end test runs through the same tool loop: one from before 2.1.150 and one from after
 * 2.1.154 (request shapes changed in between), and the newest. A new release is one entry here and one recorded
 * first request in `test/fixtures/claude-code/`.
 */
export const CLAUDE_CODE_VERSIONS = ["2.1.129", "2.1.160", CLAUDE_CODE_VERSION] as const;

const PACKAGE = "@anthropic-ai/claude-code";

/** `$XDG_CACHE_HOME/parley-test/claude-code-<version>` (or `~/.cache/...`); reused across runs. */
export function claudeCodeCacheDir(
  version: string = CLAUDE_CODE_VERSION,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const cacheHome = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME !== "" ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  return join(cacheHome, "parley-test", `claude-code-${version}`);
}

/** The native executable: the platform package's binary (what the wrapper's postinstall links as `bin/claude.exe`). */
function findBinary(prefix: string): string | undefined {
  const scope = join(prefix, "node_modules", "@anthropic-ai");
  const platform = `${process.platform}-${process.arch}`;
  const candidates = [
    join(scope, `claude-code-${platform}`, "claude"),
    join(scope, `claude-code-${platform}-musl`, "claude"),
    join(scope, "claude-code", "bin", "claude.exe"),
  ];
  // The wrapper ships a small placeholder `claude.exe` until its postinstall runs; the real one is ~380 MB.
  return candidates.find((path) => existsSync(path) && statSync(path).size > 1_000_000);
}

function reportsVersion(binary: string, version: string): boolean {
  const probe = spawnSync(binary, ["--version"], {
    encoding: "utf8",
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? "" },
  });
  return probe.status === 0 && probe.stdout.includes(version);
}

/**
 * The path of a working `claude` executable of `version`, installing `@anthropic-ai/claude-code@<version>` into
 * the cache first when it is missing or broken. Throws, saying why, when it cannot be installed or run here.
 */
export async function ensureClaudeCode(
  version: string = CLAUDE_CODE_VERSION,
  cacheDir = claudeCodeCacheDir(version),
): Promise<string> {
  const cached = findBinary(cacheDir);
  if (cached !== undefined && reportsVersion(cached, version)) return cached;
  mkdirSync(cacheDir, { recursive: true });
  const args = ["install", "--prefix", cacheDir, "--no-save", "--no-audit", "--no-fund", `${PACKAGE}@${version}`];
  const install = await runCommand("npm", args, { cwd: cacheDir, timeoutMs: 15 * 60_000 });
  if (install.code !== 0) {
    throw new Error(
      `installing ${PACKAGE}@${version} into ${cacheDir} failed (npm exit ${install.code}):\n${install.stderr.slice(-2_000)}`,
    );
  }
  const installed = findBinary(cacheDir);
  if (installed === undefined) {
    throw new Error(
      `npm installed ${PACKAGE}@${version} into ${cacheDir} but no native executable for ${process.platform}-${process.arch} came with it`,
    );
  }
  if (!reportsVersion(installed, version))
    throw new Error(`${installed} does not run here (\`claude --version\` failed)`);
  return installed;
}

export interface ClaudeCodeRun {
  /** The fresh HOME (and working directory) it ran in, removed afterwards; it appears in the prompts it sent. */
  home: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The `--output-format stream-json` lines, parsed (lines that are not JSON are left out). */
  events: Array<Record<string, unknown>>;
  /** The final `result` event. */
  result: Record<string, unknown> | undefined;
}

export interface ClaudeCodeOptions {
  binary: string;
  baseUrl: string;
  prompt: string;
  apiKey?: string;
  timeoutMs?: number;
  /** More environment for the CLI (a recipe's variables); the base URL is always `baseUrl`. */
  env?: Record<string, string>;
  /** More arguments after the usual ones (`--continue` for the next turn of a session). */
  args?: string[];
  /** A HOME (and working directory) the caller made and removes, kept between runs so a session can continue. */
  home?: string;
  /**
   * The user's messages written as they come (`--input-format stream-json`, so also `--output-format stream-json`):
   * `send` writes one, `end` closes the input (the CLI finishes what it has and exits). `prompt` is not sent: the
   * caller sends its first message itself.
   */
  conversation?: (send: (text: string) => void, end: () => void) => void;
}

/**
 * `claude -p PROMPT --output-format stream-json --verbose --allowedTools Bash` in a minimal environment (`env -i`
 * style): a fresh HOME, the gateway as `ANTHROPIC_BASE_URL`, and the variables that stop telemetry, updates,
 * error reports and every other non-essential connection. It runs offline: any connection but to 127.0.0.1
 * goes to a proxy that is not there, so a release that needs the network fails here instead of passing on a
 * machine that has it.
 */
export async function runClaudeCode(options: ClaudeCodeOptions): Promise<ClaudeCodeRun> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), "parley-claude-home-"));
  try {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      TERM: "dumb",
      ANTHROPIC_BASE_URL: options.baseUrl,
      ANTHROPIC_API_KEY: options.apiKey ?? "sk-ant-parley-e2e",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_ERROR_REPORTING: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      HTTPS_PROXY: OFFLINE_PROXY,
      HTTP_PROXY: OFFLINE_PROXY,
      NO_PROXY: "127.0.0.1,localhost",
      ...options.env,
    };
    env.ANTHROPIC_BASE_URL = options.baseUrl;
    const conversation = options.conversation;
    const args = [
      ...(conversation === undefined ? ["-p", options.prompt] : ["-p", "--input-format", "stream-json"]),
      ...["--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"],
      ...(options.args ?? []),
    ];
    const stdin =
      conversation === undefined
        ? undefined
        : (input: import("node:stream").Writable) =>
            conversation(
              (text) => input.write(`${JSON.stringify({ type: "user", message: { role: "user", content: text } })}\n`),
              () => input.end(),
            );
    const outcome = await runCommand(options.binary, args, {
      cwd: home,
      env,
      timeoutMs: options.timeoutMs ?? 90_000,
      ...(stdin === undefined ? {} : { stdin }),
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
    return {
      home,
      code: outcome.code,
      signal: outcome.signal,
      stdout: outcome.stdout,
      stderr: outcome.stderr,
      events,
      result: events.findLast((event) => event.type === "result"),
    };
  } finally {
    if (options.home === undefined) rmSync(home, { recursive: true, force: true });
  }
}

/** A port nothing listens on (discard): a connection there is refused at once. */
const OFFLINE_PROXY = "http://127.0.0.1:9";

export interface ProxiedExchange {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  status: number;
  responseHeaders: IncomingHttpHeaders;
  /** The answer's body as it has come so far (the whole of it once the client has it). */
  responseText: string;
}

export interface RecordingProxy {
  url: string;
  exchanges: ProxiedExchange[];
  close(): Promise<void>;
}

/** A pass-through HTTP proxy in front of the gateway that records what the client sent and the status it got. */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const exchanges: ProxiedExchange[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        body = undefined;
      }
      const upstream = httpRequest(
        `${target}${req.url ?? "/"}`,
        { method: req.method ?? "GET", headers: { ...req.headers, host: new URL(target).host } },
        (answer) => {
          const exchange: ProxiedExchange = {
            method: req.method ?? "",
            path: req.url ?? "",
            headers: req.headers,
            body,
            status: answer.statusCode ?? 0,
            responseHeaders: answer.headers,
            responseText: "",
          };
          exchanges.push(exchange);
          answer.setEncoding("utf8");
          answer.on("data", (text: string) => {
            exchange.responseText += text;
          });
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", (error) => {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(`proxy: ${error.message}`);
      });
      upstream.end(raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
