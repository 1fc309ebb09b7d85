import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openStore } from "../store/open-store.js";
import { claudeCodeSession } from "../store/test-support/claude-code-session.js";
import type { TraceRecord } from "../store/traces/trace-store.js";
import { runTrace } from "./trace.js";

const folder = mkdtempSync(join(tmpdir(), "parley-trace-cli-"));
const url = `sqlite:${join(folder, "parley.db")}`;
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const recorded: TraceRecord = {
  id: "tr_1",
  requestId: "req_1",
  createdAt: "2026-03-01T12:00:00.000Z",
  route: "POST /v1/messages",
  provider: "deepseek",
  clientModel: "claude-sonnet-4-5",
  upstreamModel: "deepseek-chat",
  status: 200,
  durationMs: 42,
  inputTokens: 12,
  outputTokens: 3,
  clientRequest: '{"model":"claude-sonnet-4-5","x-api-key":"sk-ant-api03-secretsecret","max_tokens":5,"messages":[]}',
  upstreamRequest: '{"model":"deepseek-chat","messages":[]}',
  upstreamResponse: 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n',
  clientResponse: '{"type":"message","content":[{"type":"text","text":"hi"}]}',
  lossy: [{ code: "reasoning-interleaving-flattened", message: "one reasoning field", path: "messages[1]" }],
  repair: [{ messageIndex: 0, code: "thinking-to-text" }],
  timings: { totalMs: 42 },
};

// A model name a client made up to attack the operator's terminal: a new line, a colour, a cursor move, a title.
const hostileModel = "claude\r\nFAKE LINE \u001b[31mred\u001b[2J\u001b]0;title\u0007\u009b1m\u202egnp.exe";
let turn: ReturnType<typeof claudeCodeSession> extends Generator<infer T> ? T : never;

beforeAll(async () => {
  // Kept whatever their age: these dates are fixed, and the writer would prune them as it wrote.
  const store = await openStore(url, { traceRetention: false });
  const session = claudeCodeSession(120);
  for (let index = 0; index < 120; index++) turn = session.next().value as typeof turn;
  await Promise.all([
    store.traces.record(recorded),
    store.traces.record({
      ...recorded,
      id: "tr_2",
      requestId: "req_2",
      createdAt: "2026-03-01T12:00:01.000Z",
      status: 502,
      lossy: [],
    }),
    store.traces.record({
      ...recorded,
      id: "tr_3",
      requestId: "req_3",
      createdAt: "2026-03-01T12:00:02.000Z",
      clientModel: hostileModel,
    }),
    store.traces.record({
      ...recorded,
      ...turn,
      id: "tr_cc",
      requestId: "req_cc",
      createdAt: "2026-03-01T11:00:00.000Z",
    }),
  ]);
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
  test("list prints the newest first as a table, with both models, and pages by cursor", async () => {
    const { code, stdout } = await run(["list", "--store", url]);
    expect(code).toBe(0);
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toMatch(
      /^ID\s+TIME\s+ROUTE\s+MODEL\s+PROVIDER\s+UPSTREAM MODEL\s+STATUS\s+MS\s+TOKENS\s+LOSSY\s+REPAIR$/,
    );
    expect(lines[2]).toMatch(
      /^tr_2\s+2026-03-01T12:00:01.000Z\s+POST \/v1\/messages\s+claude-sonnet-4-5\s+deepseek\s+deepseek-chat\s+502\s+42\s+12\/3\s+0\s+1$/,
    );
    expect(lines[3]).toMatch(/^tr_1 .* 200 .* 1\s+1$/);
    const first = await run(["list", "--store", url, "--limit", "2"]);
    expect(first.stdout.trim().split("\n")).toHaveLength(4);
    const cursor = /more: --cursor (\S+)/.exec(first.stdout)![1]!;
    const rest = await run(["list", "--store", url, "--limit", "2", "--cursor", cursor]);
    expect(rest.stdout).toMatch(/^tr_1 /m);
    expect(rest.stdout).toMatch(/^tr_cc /m);
    expect(rest.stdout).not.toContain("more:");
  });

  test("list filters by status class, model and losses", async () => {
    const ids = async (...filters: string[]) =>
      (await run(["list", "--store", url, ...filters])).stdout
        .trim()
        .split("\n")
        .slice(1)
        .map((line) => line.split(" ")[0]);
    expect(await ids("--status", "5xx")).toEqual(["tr_2"]);
    expect(await ids("--status", "200", "--model", "deepseek-chat")).toEqual(["tr_3", "tr_1", "tr_cc"]);
    expect(await ids("--no-losses")).toEqual(["tr_2"]);
    expect((await run(["list", "--store", url, "--status", "teapot"])).code).toBe(2);
  });

  test("what a client sent is printed with control characters escaped, never raw", async () => {
    const listed = (await run(["list", "--store", url])).stdout;
    const shown = (await run(["show", "tr_3", "--store", url])).stdout;
    const full = (await run(["show", "tr_3", "--store", url, "--full"])).stdout;
    const json = (await run(["show", "tr_3", "--store", url, "--json"])).stdout;
    for (const output of [listed, shown, full, json]) {
      expect(output).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
      expect(output).not.toContain("\nFAKE LINE");
    }
    expect(listed).toContain("claude\\x0d\\x0aFAKE LINE \\x1b[31mred\\x1b[2J\\x1b]0;title\\x07\\x9b1m\\u202egnp.exe");
    expect(shown).toContain("model claude\\x0d\\x0aFAKE LINE");
    // Still the same JSON, the model name whole.
    expect(JSON.parse(json).clientModel).toBe(hostileModel);
  });

  test("show takes the trace id or the request id, compact by default, the bodies one flag away", async () => {
    const byId = await run(["show", "tr_cc", "--store", url]);
    const byRequest = await run(["show", "req_cc", "--store", url]);
    expect(byId.code).toBe(0);
    expect(byRequest.stdout).toBe(byId.stdout);
    const lines = byId.stdout.trim().split("\n");
    expect(lines.length).toBeLessThan(30);
    expect(byId.stdout).toContain("trace tr_cc  request req_cc");
    expect(byId.stdout).toContain("model claude-sonnet-4-5 -> deepseek deepseek-chat");
    expect(byId.stdout).toMatch(
      /^client request\s+[\d,]+ bytes, model claude-sonnet-4-5, 239 messages, \d+ tools, system/m,
    );
    expect(byId.stdout).toMatch(/^ {2}last user: \[tool_result\] /m);
    expect(byId.stdout).toMatch(/^upstream response\s+[\d,]+ bytes, event stream of \d+ events/m);
    expect(byId.stdout).toContain("  - reasoning-interleaving-flattened at messages[1]: one reasoning field");
    const full = await run(["show", "req_cc", "--store", url, "--full", "--width", "100"]);
    expect(full.stdout.split("\n").length).toBeGreaterThan(1_200);
    expect(full.stdout).toMatch(/^CLIENT\s+\| UPSTREAM$/m);
    for (const line of full.stdout.split("\n")) expect(line.length).toBeLessThanOrEqual(100);
    const json = JSON.parse((await run(["show", "req_cc", "--store", url, "--json"])).stdout) as TraceRecord;
    expect(json.clientRequest).toBe(turn.clientRequest);
    expect(json.upstreamRequest).toBe(turn.upstreamRequest);
    expect(json.upstreamResponse).toBe(turn.upstreamResponse);
    expect(json.clientResponse).toBe(turn.clientResponse);
  });

  test("keys are redacted before they are stored", async () => {
    const { stdout } = await run(["show", "tr_1", "--store", url, "--json"]);
    expect(stdout).toContain('\\"x-api-key\\":\\"[redacted]\\"');
    expect(stdout).not.toContain("secretsecret");
  });

  test("errors say what was wrong", async () => {
    expect(await run(["show", "missing", "--store", url])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("no trace with id or request id 'missing'"),
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
