import Anthropic from "@anthropic-ai/sdk";
import { expect } from "vitest";
import { type ClaudeCodeRun, runClaudeCode } from "../support/claude-code.js";
import { printedContext, type Recipe, startServe, testServeArgs } from "../support/recipes.js";
import type { ServerShape } from "../support/server-shapes.js";
import { promptTokens, type ShapedUpstream, startShapedUpstream } from "../support/shaped-upstream.js";

/**
 * One recipe, run as documented: the scripted server shaped like the real one, `parley serve` with the recipe's
 * flags, Claude Code 2.1.330 with the recipe's variables, then the checks every recipe must pass.
 */

export const SAY_HELLO = "Say hello.";
export const RUN_ECHO = "Run the shell command `echo parley-recipe` and tell me what it printed.";

export interface RecipeOutcome {
  upstream: ShapedUpstream;
  run: ClaudeCodeRun;
  stdout: string;
}

export async function runRecipe(
  binary: string,
  recipe: Recipe,
  shape: ServerShape,
  prompt: string,
  sdkChecks?: (gatewayUrl: string, upstream: ShapedUpstream) => Promise<void>,
): Promise<RecipeOutcome> {
  const upstream = await startShapedUpstream(shape);
  const serving = await startServe(testServeArgs(recipe, upstream.baseUrl, shape.preset));
  try {
    const run = await runClaudeCode({
      binary,
      baseUrl: serving.url,
      prompt,
      env: recipe.claudeEnv,
      timeoutMs: 120_000,
    });
    await sdkChecks?.(serving.url, upstream);
    return { upstream, run, stdout: serving.stdout() };
  } finally {
    expect(await serving.close()).toBe(0);
    await upstream.close();
  }
}

/** What every recipe must give: a finished run, the served model upstream, the window Claude Code was told. */
export function expectRecipeWorked(outcome: RecipeOutcome, servedModel: string, answer: string): void {
  const { run, upstream, stdout } = outcome;
  const context = `exit ${run.code}; stderr:\n${run.stderr.slice(-1_500)}\nstdout tail:\n${run.stdout.slice(-1_500)}\nparley:\n${stdout}`;
  expect(run.code, context).toBe(0);
  expect(run.result, context).toMatchObject({ type: "result", subtype: "success", is_error: false });
  expect(String(run.result?.result), context).toContain(answer);
  expect(upstream.refused, context).toEqual([]);
  expect(upstream.requests.length).toBeGreaterThan(0);
  const shaped = upstream.shape.models.find((model) => model.id === servedModel)!;
  for (const request of upstream.requests) {
    const body = request.body as { model: string; max_tokens?: number };
    expect(body.model).toBe(servedModel);
    if (body.max_tokens !== undefined) {
      expect(body.max_tokens).toBeLessThanOrEqual(shaped.maxOutputTokens ?? shaped.contextWindow);
      expect(body.max_tokens + promptTokens(request.body as never)).toBeLessThanOrEqual(shaped.contextWindow);
    }
  }
}

/** The window the recipe tells Claude Code, the one Parley printed, and the one Claude Code used, agree. */
export function expectWindowAgrees(outcome: RecipeOutcome, recipe: Recipe, servedModel: string, window: number): void {
  expect(Number(recipe.claudeEnv.CLAUDE_CODE_MAX_CONTEXT_TOKENS)).toBe(window);
  expect(printedContext(outcome.stdout, servedModel), outcome.stdout).toBe(window);
  const usage = outcome.run.result?.modelUsage as Record<string, { contextWindow?: number }> | undefined;
  expect(usage?.[recipe.claudeEnv.ANTHROPIC_MODEL ?? servedModel]?.contextWindow).toBe(window);
}

/**
 * With the SDK, what Claude Code without the recipe's variables would send: its own model name and
 * `max_tokens: 128000`. It reaches the served model, lowered when the model cannot take it (`lowered`), and
 * `GET /v1/models` lists the model with its window.
 */
export async function expectClaudeDefaultsFit(
  gatewayUrl: string,
  upstream: ShapedUpstream,
  servedModel: string,
  window: number,
  lowered = true,
): Promise<void> {
  const client = new Anthropic({ baseURL: gatewayUrl, apiKey: "unused", maxRetries: 0 });
  const before = upstream.requests.length;
  const { data, response } = await client.messages
    .create({
      model: "claude-opus-5-5",
      max_tokens: 128_000,
      messages: [{ role: "user", content: SAY_HELLO }],
      stream: true,
    })
    .withResponse();
  let text = "";
  for await (const event of data)
    if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
  // Text after a `</think>` keeps the newlines the model wrote there.
  expect(text.trim()).toBe(`Hello from ${servedModel}.`);
  expect(response.headers.get("x-parley-lossy")?.includes("max_tokens-lowered") ?? false).toBe(lowered);
  const sent = upstream.requests.slice(before);
  expect(sent.map((request) => (request.body as { model: string }).model)).toEqual([servedModel]);
  const models = await client.models.list();
  const listed = models.data.find((model) => model.id === servedModel) as { max_input_tokens?: number } | undefined;
  expect(listed?.max_input_tokens).toBe(window);
}
