import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openStore } from "../store/open-store.js";
import type { TraceRecord } from "../store/types.js";
import { runTrace } from "./trace.js";

const folder = mkdtempSync(join(tmpdir(), "parley-trace-cli-"));
const url = `sqlite:${join(folder, "parley.db")}`;
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const recorded: TraceRecord = {
  id: "tr_1",
  requestId: "req_1",
  createdAt: "2026-03-01T12:00:00.000Z",
  route: "/v1/messages",
  provider: "deepseek",
  model: "deepseek-chat",
  status: 200,
  clientRequest: { headers: { "x-api-key": "sk-ant-api03-secretsecret" }, body: { model: "claude", max_tokens: 5 } },
  upstreamRequest: { body: { model: "deepseek-chat", messages: [] } },
  upstreamResponse: 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n',
  clientResponse: '{"type":"message","content":[{"type":"text","text":"hi"}]}',
  lossy: [{ code: "reasoning-interleaving-flattened", message: "one reasoning field", path: "messages[1]" }],
  repair: [{ messageIndex: 0, code: "thinking-to-text" }],
  timings: { totalMs: 42 },
};

beforeAll(async () => {
  const store = await openStore(url);
  await store.recordTrace(recorded);
  await store.recordTrace({ ...recorded, id: "tr_2", createdAt: "2026-03-01T12:00:01.000Z", status: 502 });
  await store.close();
});

async function run(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runTrace(argv, {
    stdout(text) {
      stdout += text;
    },
    stderr(text) {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

describe("parley trace", () => {
  test("list prints the newest first as a table", async () => {
    const { code, stdout } = await run(["list", "--store", url]);
    expect(code).toBe(0);
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+TIME\s+ROUTE\s+PROVIDER\s+MODEL\s+STATUS$/);
    expect(lines[1]).toMatch(/^tr_2\s+2026-03-01T12:00:01.000Z\s+\/v1\/messages\s+deepseek\s+deepseek-chat\s+502$/);
    expect(lines[2]).toMatch(/^tr_1 .* 200$/);
    expect((await run(["list", "--store", url, "--limit", "1"])).stdout.trim().split("\n")).toHaveLength(2);
  });

  test("show puts client and upstream side by side, then lossy, repair and timings, keys redacted", async () => {
    const { code, stdout } = await run(["show", "tr_1", "--store", url, "--width", "100"]);
    expect(code).toBe(0);
    expect(stdout).toContain("trace tr_1  request req_1");
    expect(stdout).toContain("timings: totalMs 42 ms");
    expect(stdout).toMatch(/^CLIENT\s+\| UPSTREAM$/m);
    expect(stdout).toMatch(/"x-api-key": "\[redacted\]",?\s+\|\s+"model": "deepseek-chat"/);
    expect(stdout).toMatch(/\| data: \[DONE\]$/m);
    expect(stdout).toContain("  - reasoning-interleaving-flattened at messages[1]: one reasoning field");
    expect(stdout).toContain('  - {"messageIndex":0,"code":"thinking-to-text"}');
    expect(stdout).not.toContain("secretsecret");
    for (const line of stdout.split("\n")) expect(line.length).toBeLessThanOrEqual(100);
  });

  test("errors say what was wrong", async () => {
    expect(await run(["show", "missing", "--store", url])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("no trace with id 'missing'"),
    });
    expect(await run(["frobnicate"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("expected 'list' or 'show ID'"),
    });
    expect(await run(["list", "--store", `sqlite:${join(folder, "absent.db")}`])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("no store at"),
    });
    expect(await run(["list", "--limit", "zero"])).toMatchObject({ code: 2 });
    expect((await run(["--help"])).stdout).toContain("parley trace show ID");
  });
});
