import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The recipes as the documentation gives them: the fenced `sh recipe=NAME` blocks of docs/clients.md and the
 * README, each a `parley serve` command and a `claude` command with its variables. Tests run them as written, with
 * only the upstream URL replaced by the scripted server's (and the preset the real host or port would give).
 */

export interface Recipe {
  name: string;
  /** The arguments after `parley serve`. */
  serveArgs: string[];
  /** The variables set on the `claude` command. */
  claudeEnv: Record<string, string>;
}

const root = new URL("../../", import.meta.url);

export function readRecipes(relativePath: string): Map<string, Recipe> {
  const text = readFileSync(fileURLToPath(new URL(relativePath, root)), "utf8");
  const recipes = new Map<string, Recipe>();
  for (const match of text.matchAll(/^```sh recipe=([\w.-]+)\n([\s\S]*?)^```$/gm)) {
    const name = match[1]!;
    recipes.set(name, parseRecipe(name, match[2]!));
  }
  return recipes;
}

function parseRecipe(name: string, block: string): Recipe {
  const commands = block
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  const serve = commands.map(words).find((command) => command.includes("serve") && command.includes("parley"));
  const claude = commands.map(words).find((command) => command.at(-1) === "claude");
  if (serve === undefined || claude === undefined) throw new Error(`recipe ${name}: no parley serve or claude command`);
  const claudeEnv: Record<string, string> = {};
  for (const word of claude.slice(0, -1)) {
    const equals = word.indexOf("=");
    if (equals <= 0) throw new Error(`recipe ${name}: '${word}' is not a variable assignment`);
    claudeEnv[word.slice(0, equals)] = word.slice(equals + 1);
  }
  return { name, serveArgs: serve.slice(serve.indexOf("serve") + 1), claudeEnv };
}

/** Shell words: whitespace-separated, quotes removed (no expansions but `$NAME` kept as written). */
function words(command: string): string[] {
  const found: string[] = [];
  for (const match of command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) found.push(match[1] ?? match[2] ?? match[3]!);
  return found;
}

/**
 * The recipe's `parley serve` arguments for a test: the upstream URL replaced by the scripted server's (added when
 * the recipe relies on the default, Ollama's), `$KEY` references given a value, the preset the real URL would give
 * named (the scripted server listens on 127.0.0.1), a free port and a memory store.
 */
export function testServeArgs(recipe: Recipe, upstreamBaseUrl: string, preset: string): string[] {
  const args = recipe.serveArgs.map((arg) => (arg.startsWith("$") ? "sk-recipe-test" : arg));
  const upstream = args.indexOf("--upstream");
  if (upstream === -1) args.push("--upstream", upstreamBaseUrl);
  else args[upstream + 1] = upstreamBaseUrl;
  if (!args.includes("--preset")) args.push("--preset", preset);
  return [...args, "--port", "0", "--store", "memory:"];
}

export interface ServingGateway {
  url: string;
  /** What `parley serve` printed: the listening line and the provider lines. */
  stdout(): string;
  close(): Promise<number | null>;
}

const main = fileURLToPath(new URL("src/cli/main.ts", root));

/** `parley serve ARGS` from the sources; resolves once it has printed its provider lines. */
export async function startServe(args: string[], providers = 1): Promise<ServingGateway> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ["--import", "tsx", main, "serve", ...args], {
    env: { ...process.env, PARLEY_LOG_LEVEL: "silent" },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const url = /^parley listening on (http:\/\/\S+)\n/.exec(stdout)?.[1];
    if (url !== undefined && (stdout.match(/^provider /gm)?.length ?? 0) >= providers) {
      return {
        url,
        stdout: () => stdout,
        close: async () => {
          child.kill("SIGTERM");
          return exit;
        },
      };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`parley serve ${args.join(" ")} did not start:\n${stdout}\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The `context N` Parley printed for `model` on its provider line. */
export function printedContext(stdout: string, model: string): number | undefined {
  const escaped = model.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const match = new RegExp(`(?:^|[ ,:])${escaped} \\(context (\\d+)`, "m").exec(stdout);
  return match === null ? undefined : Number(match[1]);
}
