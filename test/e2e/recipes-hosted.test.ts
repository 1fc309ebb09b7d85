import { beforeAll, describe, expect, test } from "vitest";
import { ensureClaudeCode } from "../support/claude-code.js";
import { DEEPSEEK, GLM, KIMI, MINIMAX, NIM, OPENROUTER } from "../support/hosted-server-shapes.js";
import { readRecipes } from "../support/recipes.js";
import {
  expectClaudeDefaultsFit,
  expectRecipeWorked,
  expectWindowAgrees,
  RUN_ECHO,
  runRecipe,
  SAY_HELLO,
} from "./recipe-checks.js";

/**
 * The hosted-provider recipes of docs/clients.md, each run as written against a scripted server shaped like the
 * provider's API: one real Claude Code 2.1.330 run per recipe (a tool turn for DeepSeek, a greeting for the others,
 * a few seconds each), and the SDK for what Claude Code without the recipe's variables would send.
 */

const recipes = readRecipes("docs/clients.md");
let binary: string;

beforeAll(async () => {
  binary = await ensureClaudeCode();
}, 20 * 60_000);

describe("Claude Code on hosted providers, as docs/clients.md says", { timeout: 180_000 }, () => {
  test("DeepSeek: --model among four, its 8192-token output limit", async () => {
    const outcome = await runRecipe(binary, recipes.get("deepseek")!, DEEPSEEK, RUN_ECHO, (url, upstream) =>
      expectClaudeDefaultsFit(url, upstream, "deepseek-chat", 131_072),
    );
    expectRecipeWorked(outcome, "deepseek-chat", "parley-recipe");
    expectWindowAgrees(outcome, recipes.get("deepseek")!, "deepseek-chat", 131_072);
    for (const request of outcome.upstream.requests) {
      expect((request.body as { max_tokens: number }).max_tokens).toBeLessThanOrEqual(8_192);
    }
  });

  test("NVIDIA NIM: ids only in its list, the window from the published limits", async () => {
    const model = "qwen/qwen3-coder-480b-a35b-instruct";
    const outcome = await runRecipe(binary, recipes.get("nvidia-nim")!, NIM, SAY_HELLO, (url, upstream) =>
      expectClaudeDefaultsFit(url, upstream, model, 262_144, false),
    );
    expectRecipeWorked(outcome, model, `Hello from ${model}.`);
    expectWindowAgrees(outcome, recipes.get("nvidia-nim")!, model, 262_144);
  });

  test("Kimi: the window from Moonshot's own list", async () => {
    const outcome = await runRecipe(binary, recipes.get("kimi")!, KIMI, SAY_HELLO);
    expectRecipeWorked(outcome, "kimi-k2.5", "Hello from kimi-k2.5.");
    expectWindowAgrees(outcome, recipes.get("kimi")!, "kimi-k2.5", 262_144);
  });

  test("GLM", async () => {
    const outcome = await runRecipe(binary, recipes.get("glm")!, GLM, SAY_HELLO, (url, upstream) =>
      expectClaudeDefaultsFit(url, upstream, "glm-4.7", 200_000, false),
    );
    expectRecipeWorked(outcome, "glm-4.7", "Hello from glm-4.7.");
    expectWindowAgrees(outcome, recipes.get("glm")!, "glm-4.7", 200_000);
  });

  test("MiniMax: no model list, reasoning in <think> tags", async () => {
    const outcome = await runRecipe(binary, recipes.get("minimax")!, MINIMAX, SAY_HELLO, (url, upstream) =>
      expectClaudeDefaultsFit(url, upstream, "MiniMax-M2.7", 204_800, false),
    );
    expectRecipeWorked(outcome, "MiniMax-M2.7", "Hello from MiniMax-M2.7.");
    expectWindowAgrees(outcome, recipes.get("minimax")!, "MiniMax-M2.7", 204_800);
    // The tags became a thinking block, not text Claude Code shows.
    expect(String(outcome.run.result?.result)).not.toContain("<think>");
  });

  test("OpenRouter: the window and output limit from its list", async () => {
    const outcome = await runRecipe(binary, recipes.get("openrouter")!, OPENROUTER, SAY_HELLO);
    expectRecipeWorked(outcome, "qwen/qwen3-coder", "Hello from qwen/qwen3-coder.");
    expectWindowAgrees(outcome, recipes.get("openrouter")!, "qwen/qwen3-coder", 262_144);
  });
});
