import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";

const main = new URL("./main.ts", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "parley-serve-"));

interface Run {
  child: ChildProcessWithoutNullStreams;
  stdout: string;
  stderr: string;
  exit: Promise<number | null>;
}

function serve(args: string[], env: Record<string, string> = {}, nodeFlags: string[] = []): Run {
  const child = spawn(process.execPath, [...nodeFlags, "--import", "tsx", main, "serve", ...args], {
    env: { ...process.env, PARLEY_LOG_LEVEL: "silent", ...env },
  });
  const run: Run = {
    child,
    stdout: "",
    stderr: "",
    // "close", not "exit": by then everything the child wrote to stdout and stderr has been read.
    exit: new Promise((resolve) => child.on("close", (code) => resolve(code))),
  };
  child.stdout.on("data", (chunk: Buffer) => {
    run.stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    run.stderr += chunk.toString();
  });
  return run;
}

async function listening(run: Run): Promise<string> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const match = /parley listening on (http:\/\/\S+)\n/.exec(run.stdout);
    if (match) return match[1]!;
    if (run.child.exitCode !== null) throw new Error(`exited ${run.child.exitCode}: ${run.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`not listening: ${run.stderr}`);
}

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let upstream: ScriptedUpstream;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
});

afterAll(async () => {
  await upstream.close();
});

const chunk = (text: string) => ({
  id: "c",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
});

describe("parley serve", () => {
  test("prints the listening line, then one line per provider, serves, and exits 0 on SIGTERM", async () => {
    const run = serve(["--port", "0", "--store", "memory:", "--upstream", upstream.baseUrl], {
      PARLEY_LOG_LEVEL: "info",
    });
    const url = await listening(run);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await waitFor(() => run.stdout.includes("provider default"));
    // The scripted server has no model list: the line says so, and names go upstream as sent.
    expect(run.stdout).toBe(
      `parley listening on ${url}\nprovider default: ${upstream.baseUrl} (openai, preset generic guessed from the URL): ` +
        "no model list: GET /v1/models answered 404 (the server has no model list there); model names go as the " +
        "client sends them (choose one with --model (PARLEY_MODEL))\n",
    );
    const health = await request(`${url}/health`);
    expect(await health.body.json()).toEqual({ status: "ok" });
    run.child.kill("SIGTERM");
    expect(await run.exit).toBe(0);
    // Log lines are written in batches; the request's line still reaches stderr before the process ends.
    const lines = run.stderr
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toContainEqual(expect.objectContaining({ route: "GET /health", status: 200, msg: "request" }));
  });

  test("SIGTERM lets an open stream finish before exiting", async () => {
    const config = join(scratch, "grace.yaml");
    writeFileSync(config, `timeouts:\n  shutdownGraceMs: 5000\n`);
    const frames = openaiFrames([
      ...Array.from({ length: 20 }, (_, index) => chunk(`w${index} `)),
      { ...chunk(""), choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
    ]);
    upstream.enqueue({ kind: "sse", frames, frameDelayMs: 40 });
    const run = serve(["--port", "0", "--store", "memory:", "--config", config], {
      PARLEY_UPSTREAM_URL: upstream.baseUrl,
    });
    const url = await listening(run);
    const response = await request(`${url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", max_tokens: 10, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.statusCode).toBe(200);
    run.child.kill("SIGTERM");
    const text = await response.body.text();
    expect(text).toContain("w19 ");
    expect(text.trimEnd().endsWith('data: {"type":"message_stop"}')).toBe(true);
    expect(await run.exit).toBe(0);
  });

  test("a node flag worker threads refuse (--trace-gc) does not take the gateway down with its trace writer", async () => {
    upstream.enqueue({
      kind: "json",
      body: {
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: "traced" }, finish_reason: "stop" }],
      },
    });
    const store = join(scratch, "flags.db");
    const run = serve(["--port", "0", "--store", `sqlite:${store}`, "--upstream", upstream.baseUrl], {}, [
      "--trace-gc",
    ]);
    const url = await listening(run);
    const ask = () =>
      request(`${url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
      });
    const first = await ask();
    expect(first.statusCode).toBe(200);
    expect(await first.body.text()).toContain("traced");
    // The trace writer's thread starts on the first batch; the gateway still answers after it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const health = await request(`${url}/health`);
    expect(health.statusCode).toBe(200);
    await health.body.text();
    run.child.kill("SIGTERM");
    expect(await run.exit).toBe(0);
    const database = new Database(store, { readonly: true });
    expect(database.prepare("SELECT count(*) AS n FROM traces").get()).toEqual({ n: 1 });
    database.close();
  });

  test("a bad config file is an error naming the key, before listening", async () => {
    const config = join(scratch, "bad.yaml");
    writeFileSync(config, "providers:\n  nim:\n    baseUrl: not-a-url\n");
    const run = serve(["--config", config, "--store", "memory:"]);
    expect(await run.exit).toBe(1);
    expect(run.stderr).toContain("providers.nim.baseUrl");
    expect(run.stdout).not.toContain("listening");
  });

  test("bad flags and environment are errors naming the setting", async () => {
    const badPort = serve(["--port", "http"]);
    expect(await badPort.exit).toBe(1);
    expect(badPort.stderr).toContain("port");
    const badEnv = serve(["--store", "memory:"], { PARLEY_UPSTREAM_TYPE: "grpc" });
    expect(await badEnv.exit).toBe(1);
    expect(badEnv.stderr).toContain("upstream-type");
    const unknown = serve(["--colour"]);
    expect(await unknown.exit).toBe(2);
  });

  test("--help describes every flag", async () => {
    const run = serve(["--help"]);
    expect(await run.exit).toBe(0);
    for (const flag of [
      "--host",
      "--port",
      "--config",
      "--upstream",
      "--upstream-key",
      "--upstream-type",
      "--reasoning",
      "--model",
      "--preset",
      "--store",
      "--api-key",
    ]) {
      expect(run.stdout).toContain(flag);
    }
  });
});
