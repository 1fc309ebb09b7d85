import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ChildMockUpstream, startScript } from "./children.js";

/**
 * The peer the research anchors measured, run side by side with Parley: `@musistudio/llms`, the translation server
 * inside claude-code-router (anthropic-proxy, the other one measured, is not on npm). It is installed on demand
 * from npm into the repository's ignored cache folder, never as a project dependency.
 */

export const PEER_PACKAGE = "@musistudio/llms";
export const PEER_VERSION = "1.0.53";
/** llms routes by "provider,model" in the request's model field. */
export const PEER_MODEL = "mock,mock-model";

const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url));
const launcher = join(repositoryRoot, "bench/support/peer-llms.mjs");

/**
 * What the research anchors (perf-anchors.md, main and paced tables) measured for llms on their machine: medians
 * of 3 × 10 s, the proxy pinned to one core, the same mock upstream and request body as this benchmark.
 */
export const ANCHORED = {
  addedP50StreamC1: 2.36,
  addedP50JsonC1: 1.6,
  cpuJsonC16: 0.93,
  cpuStreamC16: 1.45,
  cpuPerPacedFrame: 12.07 / 67,
  rssMaxMb: 213,
} as const;

/** The installed package's folder; throws, saying why, when npm cannot install it here. */
export function ensurePeer(): string {
  const folder = join(repositoryRoot, `.cache/peers/llms-${PEER_VERSION}`);
  if (existsSync(join(folder, "node_modules", PEER_PACKAGE, "package.json"))) return folder;
  mkdirSync(folder, { recursive: true });
  // Its install scripts (protobufjs's, through a Google SDK it never uses here) are not needed to run it.
  const install = spawnSync(
    "npm",
    [
      "install",
      "--prefix",
      folder,
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      `${PEER_PACKAGE}@${PEER_VERSION}`,
    ],
    { encoding: "utf8", timeout: 10 * 60_000 },
  );
  if (install.status !== 0) {
    throw new Error(`npm install ${PEER_PACKAGE}@${PEER_VERSION} failed: ${(install.stderr ?? "").slice(-500)}`);
  }
  return folder;
}

/**
 * The second peer: claude-code-router, the CLI most Claude Code users put between it and another provider,
 * a devDependency of this repository (one bundled file, no install scripts). It is configured headless
 * (a config file under a HOME of its own, one provider, `Router.default`, no log, no telemetry).
 */
export const CCR_PACKAGE = "@musistudio/claude-code-router";
export const CCR_VERSION = "2.0.0";
/** ccr routes every request to `Router.default`: the client's model name stays Claude's. */
export const CCR_MODEL = "claude-sonnet-4-5";
const ccrLauncher = join(repositoryRoot, "bench/support/peer-ccr.mjs");

/** claude-code-router in its own process under a scratch HOME, optionally pinned, in front of `chatCompletionsUrl`. */
export function startCcr(chatCompletionsUrl: string, core?: number): Promise<ChildMockUpstream> {
  const installed = join(repositoryRoot, "node_modules", CCR_PACKAGE, "package.json");
  if (!existsSync(installed)) throw new Error(`${CCR_PACKAGE} is not installed (npm install)`);
  const home = mkdtempSync(join(tmpdir(), "parley-bench-ccr-"));
  return startScript([ccrLauncher, repositoryRoot, chatCompletionsUrl, home], /peer on (http:\/\/\S+)/, core, false);
}

/** The peer in its own process, optionally pinned, in front of `chatCompletionsUrl`. */
export function startPeer(folder: string, chatCompletionsUrl: string, core?: number): Promise<ChildMockUpstream> {
  return startScript([launcher, folder, chatCompletionsUrl], /peer on (http:\/\/\S+)/, core, false);
}
