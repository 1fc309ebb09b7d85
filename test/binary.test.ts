import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { describe, expect, test } from "vitest";
import { startScriptedUpstream } from "./support/scripted-upstream.js";

/**
 * The binary users run is the bundle `npm install` builds (dist/parley.js), not the sources the other tests
 * import: its lazily loaded parts (store drivers, YAML, the tokenizer, undici's pool) must resolve from it.
 */
const binary = new URL("../dist/parley.js", import.meta.url).pathname;

describe("the built parley binary", () => {
  test("exists after npm install", () => {
    expect(existsSync(binary), "run npm install (or npm run build) first").toBe(true);
  });

  test("converts a request", () => {
    const anthropic = { model: "m", max_tokens: 5, messages: [{ role: "user", content: "hi" }] };
    const run = spawnSync(process.execPath, [binary, "convert", "request", "--from", "anthropic", "--to", "openai"], {
      input: JSON.stringify(anthropic),
      encoding: "utf8",
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ model: "m", messages: [{ role: "user", content: "hi" }] });
  });

  test("a reader that closes the pipe early ends the output quietly, not with a crash", async () => {
    const stream = readFileSync(new URL("fixtures/anthropic/claude-sonnet-4-thinking-long.sse", import.meta.url));
    const child = spawn(process.execPath, [binary, "convert", "stream", "--from", "anthropic", "--to", "openai"]);
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // Like `| head -c 100`: read the first bytes, then close our end.
    child.stdout.once("data", () => child.stdout.destroy());
    child.stdin.end(stream);
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(stderr).not.toContain("EPIPE");
    expect(code).toBe(0);
  });

  test("serves with the default SQLite store, counts tokens and serves the inspector", async () => {
    const store = `sqlite:${join(mkdtempSync(join(tmpdir(), "parley-bin-")), "parley.db")}`;
    const child = spawn(process.execPath, [binary, "serve", "--port", "0", "--store", store], {
      env: { ...process.env, PARLEY_LOG_LEVEL: "silent" },
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const match = /parley listening on (\S+)\n/.exec(out);
          if (match) resolve(match[1]!);
        });
        child.on("exit", (code) => reject(new Error(`exited ${code}`)));
      });
      const health = await request(`${url}/health`);
      expect(await health.body.json()).toEqual({ status: "ok" });
      const count = await request(`${url}/v1/messages/count_tokens`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "Hello there, how are you?" }] }),
      });
      const counted = (await count.body.json()) as { input_tokens: number };
      expect(counted.input_tokens).toBeGreaterThan(5);
      expect(counted.input_tokens).toBeLessThan(20);
      const created = await request(`${url}/v1/conversations`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(created.statusCode).toBe(201);
      await created.body.dump();
      // The inspector's page and the assets built beside the bundle.
      for (const path of ["/inspect", "/inspect/assets/inspector.js", "/inspect/assets/inspector.css"]) {
        const asset = await request(`${url}${path}`);
        expect(asset.statusCode, path).toBe(200);
        expect((await asset.body.text()).length).toBeGreaterThan(400);
      }
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  });

  test("records a trace through its writer thread, which `parley trace show` finds by request id", async () => {
    const upstream = await startScriptedUpstream("openai");
    const store = `sqlite:${join(mkdtempSync(join(tmpdir(), "parley-bin-")), "parley.db")}`;
    const child = spawn(
      process.execPath,
      [binary, "serve", "--port", "0", "--store", store, "--upstream", upstream.baseUrl],
      { env: { ...process.env, PARLEY_LOG_LEVEL: "silent" } },
    );
    let requestId = "";
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const match = /parley listening on (\S+)\n/.exec(out);
          if (match) resolve(match[1]!);
        });
        child.on("exit", (code) => reject(new Error(`exited ${code}`)));
      });
      upstream.enqueue({
        kind: "json",
        body: {
          id: "c",
          object: "chat.completion",
          created: 1,
          model: "m",
          choices: [{ index: 0, message: { role: "assistant", content: "Hi." }, finish_reason: "stop" }],
        },
      });
      const reply = await request(`${url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "claude-x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
      });
      expect(reply.statusCode).toBe(200);
      await reply.body.dump();
      requestId = String(reply.headers["request-id"]);
    } finally {
      // Stopping writes what the trace writer still holds.
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
      await upstream.close();
    }
    const shown = spawnSync(process.execPath, [binary, "trace", "show", requestId, "--store", store], {
      encoding: "utf8",
    });
    expect(shown.status, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`request ${requestId}`);
    expect(shown.stdout).toContain("model claude-x -> default claude-x");
    // Without keys the gateway has one user, whose tenant every trace records.
    expect(shown.stdout).toMatch(/^tenant default\b/m);
    expect(shown.stdout).toMatch(/^client response\s+\d+ bytes, JSON, model claude-x\n {2}text: Hi\.$/m);
  });
});
