import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RunningGateway } from "../../src/gateway/server.js";
import { openStore } from "../../src/store/open-store.js";
import type { TraceRecord } from "../../src/store/traces/trace-store.js";
import { type Browser, launchChromium } from "../support/chromium.js";
import { postStream, startTestGateway } from "../support/gateway-harness.js";
import { traceOf } from "../support/inspector-session.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../support/scripted-upstream.js";

/**
 * The inspector with big data, in Chromium: the list of 100,000 stored traces (SQLite) opens and pages as fast as
 * a small one, and an exchange whose four bodies are about 2 MB each opens in about a second. The bounds are
 * generous (the machine running the suite is shared); the times are printed for docs/benchmarks.md.
 */

const KEY = "sk-parley-scale-key-5150";
const STORED = 100_000;

let folder: string;
let upstream: ScriptedUpstream;
let gateway: RunningGateway;
let browser: Browser;
let page: Page;

/** Summaries only: what the list reads. Written through the store's own trace writer, in big batches. */
async function fill(path: string): Promise<void> {
  const store = await openStore(`sqlite:${path}`, {
    traceRetention: false,
    traceQueue: { maxTraces: 20_000, batchTraces: 2_000, delayMs: 1 },
  });
  const start = Date.now() - 2 * STORED;
  let pending: Array<Promise<void>> = [];
  for (let index = 0; index < STORED; index++) {
    const trace: TraceRecord = {
      id: `trace_${(start + index).toString(16).padStart(12, "0")}${String(index).padStart(20, "0")}`,
      requestId: `req_fill_${index}`,
      createdAt: new Date(start + index).toISOString(),
      route: "POST /v1/messages",
      provider: "nim",
      clientModel: `claude-model-${index % 20}`,
      upstreamModel: `upstream-${index % 7}`,
      status: index % 50 === 0 ? 502 : 200,
      durationMs: 100 + (index % 900),
      inputTokens: 1000 + index,
      outputTokens: 50,
      tenant: "scale",
      conversationId: `conv_${index % 5_000}`,
      stream: index % 2 === 0,
      lossy: index % 100 === 0 ? [{ code: "field-dropped-top_k", message: "dropped", path: "top_k" }] : [],
      repair: [],
      timings: {},
    };
    pending.push(store.traces.record(trace));
    if (pending.length === 10_000) {
      await Promise.all(pending);
      pending = [];
    }
  }
  await Promise.all(pending);
  await store.close();
}

/** A long Claude Code-like history: about 2 MB of tool calls and their outputs. */
function bigHistory(): unknown[] {
  const output = "x".repeat(60) + "\n";
  const messages: unknown[] = [{ role: "user", content: "Refactor the parser." }];
  for (let turn = 0; turn < 330; turn++) {
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: `Step ${turn}: reading the next file.` },
        { type: "tool_use", id: `call_${turn}`, name: "Read", input: { file_path: `src/file-${turn}.ts` } },
      ],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `call_${turn}`, content: `${turn}: ${output.repeat(95)}` }],
    });
  }
  messages.push({ role: "user", content: "Now summarise." });
  return messages;
}

/** About 2 MB of streamed answer, in 2,000 chunks. */
function bigAnswer(): string[] {
  const chunk = (delta: object, finish: string | null = null) => ({
    id: "chatcmpl-big",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const piece = `${"summary ".repeat(120)}\n`;
  return openaiFrames([
    chunk({ role: "assistant", content: "" }),
    ...Array.from({ length: 2_000 }, () => chunk({ content: piece })),
    { ...chunk({}, "stop"), usage: { prompt_tokens: 500_000, completion_tokens: 250_000, total_tokens: 750_000 } },
  ]);
}

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), "parley-inspector-scale-"));
  const path = join(folder, "parley.db");
  await fill(path);
  upstream = await startScriptedUpstream("openai");
  gateway = await startTestGateway({
    providers: { nim: { type: "openai", upstream } },
    file: {
      store: `sqlite:${path}`,
      // The filled traces are this tenant's.
      apiKeys: [{ key: KEY, tenant: "scale" }],
      traces: { maxCount: 1_000_000, maxBodyBytes: 8 * 1024 * 1024 },
      limits: { maxBodyBytes: 16 * 1024 * 1024 },
    },
  });
  browser = await launchChromium();
  page = await browser.context.newPage();
  // The key, as the form would keep it, set from another page of the gateway's origin.
  await page.goto(`${gateway.url}/health`);
  await page.evaluate(`sessionStorage.setItem("parley-inspector-key", ${JSON.stringify(KEY)})`);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  await upstream?.close();
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

/** The cursor of a page that starts after the newest `count` traces. */
async function cursorAfter(count: number): Promise<string> {
  let cursor: string | undefined;
  for (let seen = 0; seen < count; seen += 200) {
    const page = await gateway.state.store!.traces.list({ limit: 200, tenant: "scale", ...(cursor ? { cursor } : {}) });
    cursor = page.nextCursor;
  }
  return cursor!;
}

/** Milliseconds `action` takes. */
async function timed(action: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await action();
  return Math.round(performance.now() - started);
}

describe("the inspector with big data", () => {
  test(`the list of ${STORED.toLocaleString("en-US")} traces opens, filters and pages quickly`, async () => {
    const measured: Record<string, number> = {};
    measured["first page, page shown"] = await timed(async () => {
      await page.goto(`${gateway.url}/inspect#/`);
      await expect.poll(() => page.locator("tbody tr").count(), { timeout: 10_000 }).toBe(50);
    });
    const newest = await page.locator("tbody tr").first().getAttribute("data-id");
    expect(String(newest)).toContain(String(STORED - 1));
    measured["next page, scrolled to"] = await timed(async () => {
      await page.locator("p.more").scrollIntoViewIfNeeded();
      await expect.poll(() => page.locator("tbody tr").count(), { timeout: 10_000 }).toBe(150);
    });
    measured["filter has losses, shown"] = await timed(async () => {
      await page.locator("label", { hasText: "has losses" }).locator("input").check();
      // Every hundredth trace lost something: the filtered list is those only.
      await expect
        .poll(
          async () => {
            const ids = await page
              .locator("tbody tr")
              .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-id")));
            return ids.length === 50 && ids.every((id) => String(id).endsWith("00"));
          },
          { timeout: 10_000 },
        )
        .toBe(true);
    });
    for (const [name, query] of [
      ["API, first page", ""],
      ["API, a page far down", `&cursor=${encodeURIComponent(await cursorAfter(50_000))}`],
      ["API, model filter", "&model=claude-model-3"],
      ["API, status 5xx", "&status=5xx"],
      ["API, conversation", "&conversation=conv_42"],
    ] as const) {
      measured[name] = await timed(async () => {
        const reply = await request(`${gateway.url}/inspect/api/traces?limit=50${query}`, {
          headers: { "x-api-key": KEY },
        });
        expect(reply.statusCode).toBe(200);
        expect(((await reply.body.json()) as { traces: unknown[] }).traces.length).toBeGreaterThan(0);
      });
    }
    console.log(`inspector list, ${STORED} traces (ms): ${JSON.stringify(measured)}`);
    for (const [name, ms] of Object.entries(measured)) expect(ms, name).toBeLessThan(5_000);
  });

  test("an exchange of 2 MB bodies opens in about a second: server time and page render", async () => {
    upstream.enqueue({ kind: "sse", frames: bigAnswer() });
    const reply = await postStream(
      `${gateway.url}/v1/messages`,
      { model: "claude-sonnet-4-5", max_tokens: 4096, stream: true, messages: bigHistory() },
      { "x-api-key": KEY },
    );
    expect(reply.status).toBe(200);
    const { id } = await traceOf(gateway, reply);
    const trace = (await gateway.state.store!.traces.get(id))!;
    const sizes = [trace.clientRequest, trace.upstreamRequest, trace.upstreamResponse, trace.clientResponse].map(
      (body) => Buffer.byteLength(body ?? ""),
    );
    for (const size of sizes) expect(size).toBeGreaterThan(1_900_000);
    let viewBytes = 0;
    const server = await timed(async () => {
      const answer = await request(`${gateway.url}/inspect/api/traces/${id}`, { headers: { "x-api-key": KEY } });
      expect(answer.statusCode).toBe(200);
      viewBytes = Buffer.byteLength(await answer.body.text());
    });
    const opened = await timed(async () => {
      await page.goto(`${gateway.url}/inspect#/exchange/${id}`);
      await page.locator("section.response .pairing .block").first().waitFor({ timeout: 20_000 });
      await page.locator(".stream table.events tbody tr").first().waitFor({ timeout: 20_000 });
    });
    console.log(
      `inspector exchange, bodies ${sizes.map((size) => (size / 1e6).toFixed(2)).join(" / ")} MB: ` +
        `view ${(viewBytes / 1e6).toFixed(2)} MB, server ${server} ms, opened in the page (server and render) ${opened} ms`,
    );
    // Every block the request had is on the page, folded where unchanged.
    expect(await page.locator("section.request .fold button").first().textContent()).toMatch(/unchanged blocks/);
    expect(opened).toBeLessThan(5_000);
  });
});
