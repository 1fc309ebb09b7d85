import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RunningGateway } from "../../src/gateway/server.js";
import { type Browser, launchChromium } from "../support/chromium.js";
import { type Json, postJson, startTestGateway } from "../support/gateway-harness.js";
import { runClaudeCodeLikeSession, traceOf } from "../support/inspector-session.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../support/scripted-upstream.js";

/**
 * The inspector as a person uses it, in a real headless Chromium: the key asked for, the list filling while a
 * Claude Code-like session runs, an exchange with its repair and losses at their blocks, a body's markup shown as
 * text, a conversation turn by turn. `PARLEY_SCREENSHOTS=1` writes the screenshots docs/inspector.md shows.
 */

const KEY = "sk-parley-inspector-key-7731";
const UPSTREAM_KEY = "sk-upstream-inspector-key-9942";
const shots =
  process.env.PARLEY_SCREENSHOTS === "1"
    ? new URL("../../docs/images/", import.meta.url).pathname
    : mkdtempSync(join(tmpdir(), "parley-shots-"));

let upstream: ScriptedUpstream;
let gateway: RunningGateway;
let browser: Browser;
let page: Page;
/** What the page did that it should not: script errors, policy violations, dialogs (an injected alert). */
const misdeeds: string[] = [];
let traceIds: string[] = [];

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  gateway = await startTestGateway({
    providers: { nim: { type: "openai", upstream, apiKey: UPSTREAM_KEY } },
    apiKeys: [KEY],
  });
  browser = await launchChromium();
  page = await browser.context.newPage();
  page.on("pageerror", (error) => misdeeds.push(`page error: ${error.message}`));
  // A failed request is judged by its response below (the first, keyless call is meant to get a 401).
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
      misdeeds.push(`console: ${message.text()}`);
    }
  });
  page.on("response", (response) => {
    const keyless = response.status() === 401 && response.request().headers()["x-api-key"] === undefined;
    if (response.status() >= 400 && !keyless) misdeeds.push(`${response.status()} ${response.url()}`);
  });
  page.on("dialog", (dialog) => {
    misdeeds.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  // Runs in the page before its own script (the test's, not the page's: the policy does not apply to it).
  await page.addInitScript({
    content: `document.addEventListener("securitypolicyviolation", (event) =>
      console.error("CSP violation: " + event.violatedDirective + " " + event.blockedURI));`,
  });
});

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  await upstream?.close();
});

async function screenshot(name: string): Promise<void> {
  const file = join(shots, name);
  await page.screenshot({ path: file, fullPage: false });
  expect(statSync(file).size).toBeGreaterThan(10_000);
}

describe("the inspector in a browser", () => {
  test("asks for the key, then lists the exchanges newest first while a session runs", async () => {
    await page.goto(`${gateway.url}/inspect`);
    const keyInput = page.locator("input[name=key]");
    await keyInput.waitFor();
    await keyInput.fill(KEY);
    await page.getByRole("button", { name: "Open" }).click();
    await page.getByText("No exchanges recorded yet").waitFor();
    // The session runs while the list is on screen; its rows arrive without a reload.
    const session = runClaudeCodeLikeSession(gateway, upstream, { key: KEY, pauseMs: 600 });
    await page.locator("tbody tr").first().waitFor({ timeout: 20_000 });
    const replies = await session;
    traceIds = [];
    for (const reply of replies) traceIds.push((await traceOf(gateway, reply)).id);
    await expect.poll(() => page.locator("tbody tr").count(), { timeout: 20_000 }).toBe(3);
    expect(
      await page.locator("tbody tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-id"))),
    ).toEqual([...traceIds].reverse());
    const newest = page.locator("tbody tr").first();
    await expect.poll(() => newest.locator(".badge.repair").textContent()).toBe("1 repaired");
    expect(await newest.locator(".badge.lossy").textContent()).toMatch(/^\d+ lost$/);
    expect(await newest.textContent()).toContain("claude-sonnet-4-5");
    expect(await newest.textContent()).toContain("200");
    // Its tokens in and out (the upstream counted 1,500 prompt tokens, none from its cache) and the cache hit ratio.
    expect(await newest.locator("td.tokens").textContent()).toBe("1,500 / 200% cache hit");
    await screenshot("inspector-list.png");
    // A filter the session matches none of empties the list; clearing it brings the rows back.
    await page.getByLabel("Model").fill("gpt-nothing");
    await expect.poll(() => page.locator("tbody tr").count()).toBe(0);
    await page.getByLabel("Model").fill("");
    await page.locator("label", { hasText: "has losses" }).locator("input").check();
    await expect.poll(() => page.locator("tbody tr").count()).toBe(3);
  });

  test("an exchange: repair and losses at their blocks, markup in a body shown as text, raw bodies, streams", async () => {
    await page.locator(`tbody tr[data-id="${traceIds[2]}"] td.time a`).click();
    await page.locator(".exchange-head h1").waitFor();
    const request = page.locator("section.request");
    // The repair, at the Read call the user interrupted (the client's side).
    const interrupted = request.locator('.cell.left .block[data-path="messages[5].content[0]"]');
    expect(await interrupted.locator(".block-title").textContent()).toContain("tool call Read (call_3)");
    expect(await interrupted.locator(".note.repair").getAttribute("data-code")).toBe("added-interrupted-tool-result");
    // The loss, at the tool message the failed result became (the upstream's side).
    const failed = request.locator('.cell.right .block[data-path="messages[5].content"]');
    expect(await failed.locator(".note.lossy").getAttribute("data-code")).toBe("tool-error-flag-dropped");
    // The result repair made exists on the upstream side only.
    expect(await request.locator(".gutter.change-added").count()).toBeGreaterThan(0);
    // The failed test's output holds a script tag: it is text on the page, and nothing ran.
    expect(await failed.locator("pre.text").textContent()).toBe("1 failing: parses <script>alert(1)</script>");
    expect(await page.locator("script").count()).toBe(1);
    // The heading's token figures: input, cached, output, and the share of the prompt read from the cache.
    const facts = await page
      .locator(".exchange-head dl")
      .evaluate((list) =>
        Object.fromEntries(
          [...list.querySelectorAll("dt")].map((term) => [term.textContent, term.nextElementSibling?.textContent]),
        ),
      );
    expect(facts.tokens).toBe("1,500 in · 0 cached · 20 out");
    expect(facts["cache hit"]).toBe("0% of the prompt read from the provider's cache");
    expect(await page.locator(".exchange-head .switch-notice").count()).toBe(0);
    await screenshot("inspector-exchange.png");
    await failed.evaluate((element) => element.scrollIntoView({ block: "center" }));
    await screenshot("inspector-exchange-reports.png");
    // The raw body, one click away.
    await page.getByRole("button", { name: "raw Sent upstream" }).click();
    const raw = page.locator("pre.raw-body");
    await raw.waitFor();
    expect(JSON.parse((await raw.textContent()) ?? "").messages).toHaveLength(9);
    // The streams, event by event with the time each came.
    const events = page.locator(".stream").nth(1).locator("tbody tr");
    expect(await events.count()).toBeGreaterThan(2);
    expect(await events.first().locator("td").first().textContent()).toMatch(/^\+\d/);
    expect(await page.locator(".stream").first().textContent()).toContain("message_stop");
    // What the client changed in its own history since its previous request.
    await page.getByRole("button", { name: "Compare with the previous request" }).click();
    await page.locator(".previous .pairing").waitFor();
    expect(await page.locator(".previous .gutter.change-added").count()).toBe(5);
    const html = await page.content();
    expect(html).not.toContain(KEY);
    expect(html).not.toContain(UPSTREAM_KEY);
  });

  test("a conversation: its messages turn by turn, each turn with its exchange, its tokens and a model switch", async () => {
    const created = await postJson(`${gateway.url}/v1/conversations`, {}, { "x-api-key": KEY });
    const id = (created.body as Json).id as string;
    const answer = (text: string, prompt: number, cached: number, completion: number) => ({
      kind: "json" as const,
      body: {
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage: {
          prompt_tokens: prompt,
          completion_tokens: completion,
          total_tokens: prompt + completion,
          prompt_tokens_details: { cached_tokens: cached },
        },
      },
    });
    upstream.enqueue(
      answer("Paris.", 1200, 0, 8),
      answer("About 2.1 million people.", 1300, 0, 12),
      answer("About 105 square kilometres.", 1400, 1200, 15),
    );
    // The second turn asks for another model: the upstream's cache of the first is not its.
    for (const [model, question] of [
      ["claude-haiku-4-5", "Capital of France?"],
      ["claude-sonnet-4-5", "Its population?"],
      ["claude-sonnet-4-5", "And its area?"],
    ] as const) {
      const reply = await postJson(
        `${gateway.url}/v1/messages`,
        { model, max_tokens: 50, messages: [{ role: "user", content: question }] },
        { "x-api-key": KEY, "x-parley-conversation-id": id },
      );
      await traceOf(gateway, reply);
    }
    await page.goto(`${gateway.url}/inspect#/conversation/${id}`);
    await page.locator("section.turn").nth(2).waitFor();
    const turns = page.locator("section.turn");
    expect(await turns.count()).toBe(3);
    expect(await turns.nth(0).locator("pre.text").allTextContents()).toEqual(["Capital of France?", "Paris."]);
    expect(await turns.nth(1).locator("h2 a").count()).toBe(1);
    // Turn by turn: input, cached and output tokens and the cache hit ratio; the switch where it happened.
    expect(await turns.locator(".turn-tokens").allTextContents()).toEqual([
      "1,200 in · 0 cached · 8 out",
      "1,300 in · 0 cached · 12 out",
      "200 in · 1,200 cached · 15 out",
    ]);
    expect(await turns.locator(".tag.cache-hit").allTextContents()).toEqual([
      "0% cache hit",
      "0% cache hit",
      "86% cache hit",
    ]);
    expect(await turns.nth(1).locator(".switch-notice").textContent()).toBe(
      "model switched: claude-haiku-4-5 (nim) → claude-sonnet-4-5 (nim), cache emptied",
    );
    expect(await page.locator(".switch-notice").count()).toBe(1);
    expect(await page.locator(".conversation-tokens").textContent()).toBe(
      "cache hit 31% over 3 exchanges (2,700 in · 1,200 cached · 35 out) · 1 model switch",
    );
    await turns.nth(1).getByRole("button", { name: "What the client changed in this turn's request" }).click();
    await turns.nth(1).locator(".pairing").waitFor();
    await screenshot("inspector-conversation.png");
    // The switched turn's exchange says so too, and so does its row in the list.
    await turns.nth(1).locator("h2 a").click();
    await page.locator(".exchange-head h1").waitFor();
    expect(await page.locator(".exchange-head .switch-notice").textContent()).toBe(
      "model switched: claude-haiku-4-5 (nim) → claude-sonnet-4-5 (nim), cache emptied",
    );
    await page.goto(`${gateway.url}/inspect#/`);
    await page.locator("label", { hasText: "has losses" }).locator("input").uncheck();
    await page.getByLabel("Model").fill("claude-sonnet-4-5");
    const switched = page.locator("tbody tr", { has: page.locator(".badge.switch") });
    await expect.poll(() => switched.count()).toBe(1);
    expect(await switched.locator(".badge.switch").getAttribute("title")).toBe(
      "model switched: claude-haiku-4-5 (nim) → claude-sonnet-4-5 (nim), cache emptied",
    );
  });

  test("nothing the page did broke its policy or ran a body's script", () => {
    expect(misdeeds).toEqual([]);
  });
});
