import { execFile, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, inject, test } from "vitest";

/**
 * Parley as a user gets it: the tarball `npm pack` makes (from the built dist/: run `npm run build` after changing
 * src/), installed into an empty project outside the repository, with only what npm installs with it. The recipes
 * of docs/library.md are type-checked against the published types and run there as written.
 */
const run = promisify(execFile);
const repo = new URL("..", import.meta.url).pathname;
const MB = 1024 * 1024;

let work: string;
let project: string;
let tarballFiles: string[];
let installBytes: number;
let upstream: Server;

function sizeOf(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined || stat.isSymbolicLink()) return 0;
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((total, name) => total + sizeOf(join(path, name)), 0);
}

async function npm(args: string[], cwd: string) {
  return run("npm", [...args, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
    cwd,
    maxBuffer: 64 * MB,
  });
}

/** Runs a script in the consumer project (`node --input-type=module`), as its own file would. */
async function nodeIn(code: string, env: Record<string, string> = {}) {
  return run(process.execPath, ["--input-type=module", "-e", code], { cwd: project, env: { ...process.env, ...env } });
}

/** The recipes of docs/library.md: fenced `ts recipe=NAME` blocks. */
function recipes(): Map<string, string> {
  const doc = readFileSync(join(repo, "docs/library.md"), "utf8");
  return new Map([...doc.matchAll(/```ts recipe=(\S+)\n([\s\S]*?)```/g)].map((match) => [match[1]!, match[2]!]));
}

beforeAll(async () => {
  for (const built of ["dist/index.js", "dist/library/store.js", "dist/gateway.js", "dist/parley.js"])
    if (!existsSync(join(repo, built))) throw new Error(`${built} is missing: run npm run build`);
  work = mkdtempSync(join(tmpdir(), "parley-package-"));
  const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
    cwd: repo,
    maxBuffer: 64 * MB,
  });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarballFiles = packed!.files.map((file) => file.path);
  project = join(work, "consumer");
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  await npm(["install", join(work, packed!.filename)], project);
  installBytes = sizeOf(join(project, "node_modules"));
  // A scripted OpenAI-compatible server (vLLM's reasoning field) for the streaming recipe.
  const sse = readFileSync(join(repo, "test/fixtures/scripted/openai-vllm-reasoning.sse"), "utf8");
  upstream = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      if (request.method !== "POST" || request.url !== "/v1/chat/completions") {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(sse);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
}, 240_000);

const GATEWAY_STORE = () => `sqlite:${join(project, "traces", "gateway.db")}`;

/**
 * The installed binary serving with a SQLite store: a count_tokens call (the tokenizer's thread) and a streamed
 * answer (traced by the writer's thread, written out on SIGTERM). Gives the answer's request id.
 */
async function servedAndTraced(): Promise<string> {
  const address = upstream.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  const binary = join(project, "node_modules/parley/dist/parley.js");
  const child = spawn(
    process.execPath,
    [binary, "serve", "--port", "0", "--store", GATEWAY_STORE(), "--upstream", `http://127.0.0.1:${port}/v1`],
    { cwd: project, env: { ...process.env, PARLEY_LOG_LEVEL: "silent" } },
  );
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const match = /parley listening on (\S+)\n/.exec(out);
        if (match) resolve(match[1]!);
      });
      child.on("exit", (code) => reject(new Error(`parley serve exited ${code}`)));
    });
    const counted = await fetch(`${url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "Hello there, how are you?" }] }),
    });
    expect(((await counted.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(5);
    const answer = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(answer.status).toBe(200);
    await answer.text();
    const requestId = answer.headers.get("request-id") ?? "";
    expect(requestId).toMatch(/^req_/);
    return requestId;
  } finally {
    // Stopping writes what the trace writer still holds.
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }
}

afterAll(() => {
  upstream?.close();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe("the npm package", () => {
  test("holds the licence, the notices and what its exports name; no source maps, tests or test support", () => {
    for (const file of ["LICENSE", "NOTICE.md", "README.md", "package.json", "dist/THIRD-PARTY-NOTICES.md"])
      expect(tarballFiles).toContain(file);
    expect(readFileSync(join(repo, "LICENSE"), "utf8")).toMatch(/Apache License\s+Version 2\.0, January 2004/);
    const manifest = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as {
      exports: Record<string, string | Record<string, string>>;
      bin: Record<string, string>;
    };
    for (const target of Object.values(manifest.exports).flatMap((value) =>
      typeof value === "string" ? [value] : Object.values(value),
    ))
      expect(tarballFiles).toContain(target.replace(/^\.\//, ""));
    for (const bin of Object.values(manifest.bin)) expect(tarballFiles).toContain(bin);
    // The worker threads' modules: beside the bundles (the binary's and parley/gateway's), and beside the store's.
    for (const worker of [
      "token-count-worker.js",
      "prepare-worker.js",
      "trace-worker.js",
      "store/sqlite/trace-worker.js",
    ])
      expect(tarballFiles).toContain(`dist/${worker}`);
    const unwanted = tarballFiles.filter((file) =>
      /\.map$|\.test\.|\.suite\.|test-support|^test\/|^src\/|^dist\/cli\//.test(file),
    );
    expect(unwanted).toEqual([]);
  });

  test("a consumer that only converts installs under 15 MB, without the optional drivers", () => {
    expect(installBytes / MB).toBeLessThan(15);
    for (const optional of ["better-sqlite3", "pg", "gpt-tokenizer", "yaml"])
      expect(existsSync(join(project, "node_modules", optional))).toBe(false);
    console.log(`install: ${(installBytes / MB).toFixed(1)} MB`);
  });

  test("import { repair } bundles under 40 KB, two stream decoders under 64 KB and all three under 70 KB, for a browser", async () => {
    const bundle = async (code: string) => {
      const entry = join(project, `entry-${Math.random().toString(36).slice(2)}.mjs`);
      writeFileSync(entry, code);
      // platform browser: a node: import anywhere on the way fails the build.
      const result = await build({
        entryPoints: [entry],
        bundle: true,
        minify: true,
        format: "esm",
        platform: "browser",
        write: false,
        logLevel: "silent",
      });
      return result.outputFiles[0]!.contents.length;
    };
    const sizes = {
      repairRoot: await bundle(`import { repair, anthropicRepairTarget } from "parley";
        console.log(repair([], anthropicRepairTarget()));`),
      repairSubpath: await bundle(`import { repair } from "parley/repair";
        import { openaiRepairTarget } from "parley/codecs";
        console.log(repair([], openaiRepairTarget({ preset: "deepseek" })));`),
      streams: await bundle(
        `import { readStream, anthropicStreamDecoder, openaiStreamDecoder } from "parley/stream";
        import { anthropicStreamDecoder as a, openaiStreamDecoder as o } from "parley/codecs";
        const first = readStream(globalThis.body, o({ preset: "vllm" }));
        const second = readStream(globalThis.body, a({ preset: "deepseek" }));
        console.log(await first.message(), await second.message());`.replace(
          "import { readStream, anthropicStreamDecoder, openaiStreamDecoder }",
          "import { readStream }",
        ),
      ),
      responses: await bundle(`import { readStream } from "parley/stream";
        import { responsesStreamDecoder } from "parley/codecs";
        console.log(await readStream(globalThis.body, responsesStreamDecoder({ provider: "openai" })).message());`),
      threeStreams: await bundle(`import { readStream } from "parley/stream";
        import { anthropicStreamDecoder as a, openaiStreamDecoder as o, responsesStreamDecoder as r } from "parley/codecs";
        const streams = [o({ preset: "vllm" }), a({ preset: "deepseek" }), r({ provider: "openai" })];
        for (const decoder of streams) console.log(await readStream(globalThis.body, decoder).message());`),
      everything: await bundle(`import * as parley from "parley"; console.log(parley);`),
    };
    console.log(`bundles (minified bytes): ${JSON.stringify(sizes)}`);
    expect(sizes.repairRoot).toBeLessThan(40 * 1024);
    expect(sizes.repairSubpath).toBeLessThan(40 * 1024);
    // A program pays only for the decoders it imports (measured, minified bytes): the Anthropic and Chat decoders
    // 57,751, as before the Responses format joined, 61,426 since the Chat one reads Google's thought signatures; the
    // Responses one alone 32,097 (32,949 now); all three 67,132, 70,818 now.
    expect(sizes.streams).toBeLessThan(64 * 1024);
    expect(sizes.responses).toBeLessThan(40 * 1024);
    expect(sizes.threeStreams).toBeLessThan(70 * 1024);
    // The whole root bundles for a browser too (no node: import in it), and tree shaking is what keeps it small.
    expect(sizes.everything).toBeGreaterThan(sizes.streams);
  });

  test("a missing optional driver is named, with the install that adds it", async () => {
    const { stdout } = await nodeIn(`
      import { openStore } from "parley/store";
      for (const url of ["sqlite:./x.db", "postgres://127.0.0.1:1/none"]) {
        try { await openStore(url); console.log("opened"); }
        catch (error) { console.log(error.name + ": " + error.message); }
      }`);
    expect(stdout).toContain(
      "MissingPackageError: the SQLite store (sqlite:) needs the package better-sqlite3: npm install better-sqlite3",
    );
    expect(stdout).toContain(
      "MissingPackageError: the PostgreSQL store (postgres:) needs the package pg: npm install pg",
    );
  });

  test("the worker threads start from the installed package: the store's trace writer, the binary's and its tokenizer", async () => {
    // The optional drivers, as a user installs them (linked from the repository's own: no native build here),
    // unlinked after, before a later npm install could count them extraneous.
    const links = ["better-sqlite3", "gpt-tokenizer"].map((name) => join(project, "node_modules", name));
    for (const link of links) symlinkSync(join(repo, "node_modules", basename(link)), link, "dir");
    try {
      const program = `import { openStore } from "parley/store";
        const store = await openStore("sqlite:./traces/library.db");
        const trace = { id: "t1", requestId: "r1", createdAt: new Date().toISOString(), route: "/v1/messages",
          clientRequest: "{}", lossy: [], repair: [], timings: {} };
        await store.traces.record(trace);
        console.log((await store.traces.get("r1"))?.id, store.traces.stats().recorded);
        await store.close();`;
      writeFileSync(join(project, "trace.mjs"), program);
      // Ending on `await store.close()` exits 0: the writer's thread, idle once it answered the close, kept nothing
      // alive until it exited, and node gave up on the await (exit code 13) in about two runs of three.
      for (let attempt = 0; attempt < 4; attempt++) {
        rmSync(join(project, "traces"), { recursive: true, force: true });
        const stored = await run(process.execPath, ["trace.mjs"], { cwd: project });
        expect(stored.stdout.trim()).toBe("t1 1");
      }
      // Run as `node --input-type=module -e`: the writer's thread must not inherit --input-type, which its file refuses.
      rmSync(join(project, "traces"), { recursive: true, force: true });
      const evaluated = await run(process.execPath, ["--input-type=module", "-e", program], { cwd: project });
      expect(evaluated.stdout.trim()).toBe("t1 1");
      const requestId = await servedAndTraced();
      const binary = join(project, "node_modules/parley/dist/parley.js");
      const shown = await run(process.execPath, [binary, "trace", "show", requestId, "--store", GATEWAY_STORE()], {
        cwd: project,
      });
      expect(shown.stdout).toContain(`request ${requestId}`);
    } finally {
      for (const link of links) unlinkSync(link);
    }
  }, 60_000);

  test("the binary and the gateway subpath run with what the package installed", async () => {
    const { stdout } = await run(process.execPath, [join(project, "node_modules/parley/dist/parley.js"), "--help"]);
    expect(stdout).toMatch(/Usage: parley/);
    const gateway = await nodeIn(`import { startGateway, loadConfig } from "parley/gateway";
      console.log(typeof startGateway, typeof loadConfig);`);
    expect(gateway.stdout.trim()).toBe("function function");
  });

  test("every recipe of docs/library.md type-checks against the published types and runs as written", async () => {
    const found = recipes();
    expect([...found.keys()].sort()).toEqual(["convert", "normalize", "repair", "responses", "store", "stream"]);
    // The store recipe's driver, as its comment says to install it.
    await npm(["install", "pg"], project);
    mkdirSync(join(project, "recipes"), { recursive: true });
    for (const [name, code] of found) writeFileSync(join(project, "recipes", `${name}.ts`), code);
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          noEmit: true,
          skipLibCheck: false,
          types: ["node"],
          typeRoots: [join(repo, "node_modules/@types")],
        },
        include: ["recipes"],
      }),
    );
    const tsc = join(repo, "node_modules/typescript/bin/tsc");
    const checked = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project }).catch(
      (error: { stdout: string }) => ({ stdout: error.stdout, failed: true }),
    );
    expect(checked.stdout).toBe("");

    await build({
      entryPoints: [...found.keys()].map((name) => join(project, "recipes", `${name}.ts`)),
      outdir: join(project, "recipes"),
      outExtension: { ".js": ".mjs" },
      format: "esm",
      platform: "node",
      logLevel: "silent",
    });
    const address = upstream.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const schema = `parley_recipe_${Math.random().toString(36).slice(2, 10)}`;
    const storeUrl = new URL(inject("postgresUrl"));
    await nodeIn(`import pg from "pg"; const client = new pg.Client(${JSON.stringify(storeUrl.toString())});
        await client.connect(); await client.query("CREATE SCHEMA ${schema}"); await client.end();`);
    storeUrl.searchParams.set("options", `-c search_path=${schema}`);
    const env = { OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, AGENT_STORE: storeUrl.toString() };
    const output = async (name: string) =>
      (
        await run(process.execPath, [join(project, "recipes", `${name}.mjs`)], {
          cwd: project,
          env: { ...process.env, ...env },
        })
      ).stdout;

    expect(await output("convert")).toBe(
      'user assistant tool\n{"name":"bash","arguments":"{\\"command\\":\\"ls /tmp\\"}"}\nlossy: reasoning-placeholder-added at messages[1]\n',
    );
    const streamed = await output("stream");
    expect(streamed).toBe("(thinking) The user wants a greeting.\nHello!\nstop: end_turn; parts: thinking, text\n");

    const first = await output("store");
    const second = await output("store");
    const id = /conversation (\S+): 1 messages/.exec(first)?.[1];
    expect(id).toBeDefined();
    expect(second).toContain(`conversation ${id}: 2 messages`);
    expect(second).toMatch(/1 user\n2 user\n/);

    const repaired = await output("repair");
    expect(repaired).toMatch(/^violations: [1-9]/);
    expect(repaired).toContain("violations after: 0");
    expect(repaired).toContain('"type":"tool_result","tool_use_id":"call_1"');

    expect(await output("responses")).toBe(
      'thinking-to-text\ntext, tool_use\n{"id":"rs_01","type":"reasoning","summary":[{"type":"summary_text","text":"List it first."}],"encrypted_content":"gAAAAB-sealed-by-openai"}\n',
    );

    const normalized = await output("normalize");
    expect(normalized).toContain("entries[0]: plain\nentries[1]: openai\nentries[2]: openai\nentries[3]: orchestrator");
    expect(normalized).toContain("Anthropic messages");
    const admin = `import pg from "pg"; const client = new pg.Client(${JSON.stringify(inject("postgresUrl"))});
        await client.connect(); await client.query("DROP SCHEMA ${schema} CASCADE"); await client.end();`;
    await nodeIn(admin);
  }, 180_000);
});
