import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ProxiedExchange } from "./claude-code.js";

/**
 * The first request of each Claude Code release the end-to-end test runs, recorded in
 * `test/fixtures/claude-code/<version>.first-request.json`: what a release sends is data, so a new release's
 * shape is one fixture away from the conversion checks of `src/gateway/gateway-claude-code-requests.test.ts`.
 * Record (or re-record) with `PARLEY_RECORD_CLAUDE_CODE=1 npx vitest run test/e2e/claude-code.test.ts`. Runs made
 * to send the newest shapes are recorded as `<version>.<name>.json` by `test/e2e/claude-code-shapes.test.ts`.
 */

export interface ClaudeCodeRequestFixture {
  release: string;
  /** How a recording other than a first request was produced (the run's settings, what the scripted model did). */
  note?: string;
  method: string;
  path: string;
  /** The headers that say what the request is (betas, API version, client); never keys or session ids. */
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

const folder = new URL("../fixtures/claude-code/", import.meta.url);
const KEPT_HEADERS = ["anthropic-beta", "anthropic-version", "user-agent", "x-app"];

export const recordingClaudeCode = process.env.PARLEY_RECORD_CLAUDE_CODE === "1";

export function claudeCodeFixtureFile(version: string): string {
  return fileURLToPath(new URL(`${version}.first-request.json`, folder));
}

export function readClaudeCodeFixture(version: string): ClaudeCodeRequestFixture | undefined {
  const file = claudeCodeFixtureFile(version);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as ClaudeCodeRequestFixture) : undefined;
}

export function readClaudeCodeFixtures(): ClaudeCodeRequestFixture[] {
  return readdirSync(folder)
    .filter((name) => name.endsWith(".first-request.json"))
    .sort()
    .map((name) => JSON.parse(readFileSync(new URL(name, folder), "utf8")) as ClaudeCodeRequestFixture);
}

/** Prose longer than this (system prompt, reminders, tool descriptions) keeps its start only. */
const PROSE_KEPT = 400;

/**
 * A recorded exchange as a fixture, with what belongs to the machine and the run replaced: the temporary HOME
 * the CLI ran in (as a path, and as Claude Code's dashed project name), the kernel version, and the device
 * and session ids in `metadata.user_id`. Long prose (`text`, `description`) keeps its first 400 characters and
 * says how much was left out: the shape is what a translator depends on, and Claude Code's own prompt text is
 * not the project's to copy.
 */
export function fixtureFromExchange(
  version: string,
  exchange: ProxiedExchange,
  home: string,
): ClaudeCodeRequestFixture {
  const headers: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = exchange.headers[name];
    if (typeof value === "string") headers[name] = value;
  }
  const replacements: Array<[string | RegExp, string]> = [
    [home, "/home/user/project"],
    [home.replaceAll("/", "-"), "-home-user-project"],
    [/OS Version: [^\n]*/g, "OS Version: Linux 6.0.0"],
    [/"device_id":"[0-9a-f]+"/g, `"device_id":"${"0".repeat(64)}"`],
    [/"session_id":"[0-9a-f-]+"/g, '"session_id":"00000000-0000-4000-8000-000000000000"'],
    // the billing line's per-run values, sent when it takes the base URL for Anthropic's own
    [/\bcch=[0-9a-f]+/g, "cch=00000"],
    [/\bcc_prev_req=req_[0-9A-Za-z]+/g, "cc_prev_req=req_000"],
    [/\bcc_prompt_id=[0-9a-f-]+/g, "cc_prompt_id=00000000-0000-4000-8000-000000000000"],
  ];
  const body = mapStrings(exchange.body, (text, key) => {
    const cleaned = replacements.reduce((out, [pattern, value]) => out.replaceAll(pattern, value), text);
    if ((key !== "text" && key !== "description") || cleaned.length <= PROSE_KEPT) return cleaned;
    return `${cleaned.slice(0, PROSE_KEPT)} [${cleaned.length - PROSE_KEPT} more characters of Claude Code's text left out]`;
  }) as Record<string, unknown>;
  return { release: version, method: exchange.method, path: exchange.path, headers, body };
}

export function writeClaudeCodeFixture(fixture: ClaudeCodeRequestFixture, name?: string): void {
  const file =
    name === undefined ? claudeCodeFixtureFile(fixture.release) : namedClaudeCodeFixtureFile(fixture.release, name);
  writeFileSync(file, `${JSON.stringify(fixture, null, 2)}\n`);
}

/** `test/fixtures/claude-code/<version>.<name>.json`: a recorded request other than a release's first. */
export function namedClaudeCodeFixtureFile(version: string, name: string): string {
  return fileURLToPath(new URL(`${version}.${name}.json`, folder));
}

export function readNamedClaudeCodeFixture(version: string, name: string): ClaudeCodeRequestFixture | undefined {
  const file = namedClaudeCodeFixtureFile(version, name);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as ClaudeCodeRequestFixture) : undefined;
}

/**
 * What a translator depends on in a request, without the text: fields, thinking and effort settings, betas, each
 * message's role and block kinds, each tool's kind of definition. Two runs of one release give the same shape.
 */
export function requestShape(request: Pick<ClaudeCodeRequestFixture, "path" | "headers" | "body">): unknown {
  const body = request.body as {
    system?: unknown;
    messages?: Array<{ role?: unknown; content?: unknown }>;
    tools?: Array<Record<string, unknown>>;
  } & Record<string, unknown>;
  return {
    path: request.path,
    betas: (request.headers["anthropic-beta"] ?? "").split(",").sort(),
    fields: Object.keys(body).sort(),
    thinking: body.thinking,
    output_config: body.output_config,
    context_management: body.context_management,
    system: Array.isArray(body.system) ? body.system.map(blockShape) : typeof body.system,
    messages: (body.messages ?? []).map((message) => ({
      role: message.role,
      fields: Object.keys(message).sort(),
      content: Array.isArray(message.content) ? message.content.map(blockShape) : typeof message.content,
    })),
    tools: [...new Set((body.tools ?? []).map((tool) => `${tool.type ?? "custom"}: ${keysOf(tool)}`))].sort(),
  };
}

function blockShape(block: unknown): string {
  const type = (block as { type?: unknown } | null)?.type;
  return `${String(type)}: ${keysOf(block)}`;
}

function keysOf(value: unknown): string {
  return value !== null && typeof value === "object" ? Object.keys(value).sort().join(",") : typeof value;
}

/** Every string in `value` through `map`, with the key it sits under (`undefined` in an array). */
function mapStrings(value: unknown, map: (text: string, key: string | undefined) => string, key?: string): unknown {
  if (typeof value === "string") return map(value, key);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, mapStrings(item, map, name)]));
  return value;
}
