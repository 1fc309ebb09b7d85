import { beforeAll, describe, expect, test } from "vitest";
import { ensureClaudeCode, runClaudeCode, startRecordingProxy } from "../support/claude-code.js";
import { readRecipes, startServe } from "../support/recipes.js";
import { refusingPort } from "../support/refusing-port.js";
import { LLAMACPP, LMSTUDIO, OLLAMA, SGLANG, VLLM } from "../support/server-shapes.js";
import {
  expectClaudeDefaultsFit,
  expectRecipeWorked,
  expectWindowAgrees,
  RUN_ECHO,
  runRecipe,
  SAY_HELLO,
} from "./recipe-checks.js";

/**
 * The local-server recipes of docs/clients.md and the README's one-liner, each run as written: one real Claude Code
 * 2.1.330 run per recipe (a tool turn for vLLM and the README, a greeting for the others, a few seconds each), and
 * the SDK for what Claude Code without the recipe's variables would send.
 */

const recipes = readRecipes("docs/clients.md");
const readme = readRecipes("README.md").get("readme")!;
let binary: string;

beforeAll(async () => {
  binary = await ensureClaudeCode();
}, 20 * 60_000);

describe("Claude Code on local servers, as docs/clients.md says", { timeout: 180_000 }, () => {
  test("the README's one-liner against vLLM: only --upstream, Claude Code's own model name, a tool turn", async () => {
    const served = VLLM.models[0]!.id;
    const outcome = await runRecipe(binary, readme, VLLM, RUN_ECHO, (url, upstream) =>
      expectClaudeDefaultsFit(url, upstream, served, 65_536),
    );
    expectRecipeWorked(outcome, served, "parley-recipe");
    // Claude Code asked for its own model and 128000 tokens; the server got its model and what its window leaves.
    const first = outcome.upstream.requests[0]!.body as { max_tokens: number };
    expect(first.max_tokens).toBeLessThan(65_536);
  });

  test("vLLM", async () => {
    const outcome = await runRecipe(binary, recipes.get("vllm")!, VLLM, RUN_ECHO);
    expectRecipeWorked(outcome, "Qwen/Qwen3-Coder-30B-A3B-Instruct", "parley-recipe");
    expectWindowAgrees(outcome, recipes.get("vllm")!, "Qwen/Qwen3-Coder-30B-A3B-Instruct", 65_536);
  });

  test("Ollama: --model among its pulled models, the window of the loaded model", async () => {
    const outcome = await runRecipe(binary, recipes.get("ollama")!, OLLAMA, SAY_HELLO, (url, upstream) =>
      expectClaudeDefaultsFit(url, upstream, "qwen3-coder:30b", 65_536),
    );
    expectRecipeWorked(outcome, "qwen3-coder:30b", "Hello from qwen3-coder:30b.");
    expectWindowAgrees(outcome, recipes.get("ollama")!, "qwen3-coder:30b", 65_536);
  });

  test("llama.cpp", async () => {
    const outcome = await runRecipe(binary, recipes.get("llamacpp")!, LLAMACPP, SAY_HELLO);
    expectRecipeWorked(outcome, "ggml-org/gpt-oss-20b-GGUF", "Hello from ggml-org/gpt-oss-20b-GGUF.");
    expectWindowAgrees(outcome, recipes.get("llamacpp")!, "ggml-org/gpt-oss-20b-GGUF", 65_536);
  });

  test("SGLang", async () => {
    const outcome = await runRecipe(binary, recipes.get("sglang")!, SGLANG, SAY_HELLO, (url, upstream) =>
      expectClaudeDefaultsFit(url, upstream, "zai-org/GLM-4.5-Air", 65_536),
    );
    expectRecipeWorked(outcome, "zai-org/GLM-4.5-Air", "Hello from zai-org/GLM-4.5-Air.");
    expectWindowAgrees(outcome, recipes.get("sglang")!, "zai-org/GLM-4.5-Air", 65_536);
  });

  test("LM Studio", async () => {
    const outcome = await runRecipe(binary, recipes.get("lmstudio")!, LMSTUDIO, SAY_HELLO);
    expectRecipeWorked(outcome, "qwen/qwen3-coder-30b", "Hello from qwen/qwen3-coder-30b.");
    expectWindowAgrees(outcome, recipes.get("lmstudio")!, "qwen/qwen3-coder-30b", 65_536);
  });
});

describe("Claude Code and a server that is not running", { timeout: 120_000 }, () => {
  test("start-up says so, and Claude Code shows the URL and the flag at once, without retrying", async () => {
    const held = await refusingPort();
    const port = held.port;
    const serving = await startServe([
      "--upstream",
      `http://127.0.0.1:${port}/v1`,
      "--port",
      "0",
      "--store",
      "memory:",
    ]);
    const proxy = await startRecordingProxy(serving.url);
    try {
      expect(serving.stdout()).toContain(
        `provider default: http://127.0.0.1:${port}/v1 (openai, preset generic guessed from the URL): unreachable: connection refused`,
      );
      const run = await runClaudeCode({ binary, baseUrl: proxy.url, prompt: SAY_HELLO });
      const posts = proxy.exchanges.filter((exchange) => exchange.method === "POST");
      expect(posts.map((exchange) => exchange.status)).toEqual([502]);
      expect(run.result?.is_error).toBe(true);
      expect(String(run.result?.result)).toContain(`nothing answers at http://127.0.0.1:${port}/v1`);
      expect(String(run.result?.result)).toContain("--upstream");
      expect(Number(run.result?.duration_api_ms)).toBeLessThan(5_000);
    } finally {
      await proxy.close();
      await serving.close();
      await held.release();
    }
  });
});
