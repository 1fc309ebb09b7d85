import { describe, expect, test } from "vitest";
import { type ConversationRequest, InvalidRequestError } from "../../core/index.js";
import { APPROXIMATION_OVERCOUNT, answerRoom, fitRequest, type PromptCount } from "./fit-request.js";

/** `max_tokens` always fits the window; a prompt that alone fills it is the client's context-overflow error. */

const request = (maxTokens?: number): ConversationRequest => ({
  model: "m",
  messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }],
  ...(maxTokens === undefined ? {} : { maxTokens }),
});
const window4k = { contextWindow: 4_096, contextSource: "the configuration" };
const counted = (approximate: number, exact = approximate): PromptCount & { exactAsked: number } => {
  const count = {
    exactAsked: 0,
    approximate: () => approximate,
    exact: async () => {
      count.exactAsked++;
      return exact;
    },
  };
  return count;
};

describe("fitRequest", () => {
  test("the issue's case: a 4,096-token server never gets max_tokens 128000", async () => {
    const count = counted(3_000);
    const { request: fitted, lossy } = await fitRequest(request(128_000), "local", window4k, count);
    expect(fitted.maxTokens).toBe(answerRoom(4_096, 3_000));
    expect(fitted.maxTokens).toBeGreaterThan(0);
    expect(fitted.maxTokens! + 3_000).toBeLessThanOrEqual(4_096);
    expect(lossy).toEqual([
      {
        code: "max_tokens-lowered",
        message: `max_tokens 128000 lowered to ${fitted.maxTokens}: what local's context window of 4096 tokens (from the configuration) leaves after a prompt of about 3000 tokens`,
        path: "max_tokens",
      },
    ]);
    expect(count.exactAsked).toBe(0);
  });

  test("a max_tokens that fits is left alone, and so is a request with none", async () => {
    expect((await fitRequest(request(100), "local", window4k, counted(500))).lossy).toEqual([]);
    expect((await fitRequest(request(), "local", window4k, counted(500))).request.maxTokens).toBeUndefined();
  });

  test("an approximation over the window is checked with the tokenizer: under it, the answer gets what is left", async () => {
    const count = counted(4_500, 3_900);
    const { request: fitted } = await fitRequest(request(128_000), "local", window4k, count);
    expect(count.exactAsked).toBe(1);
    expect(fitted.maxTokens).toBe(answerRoom(4_096, 3_900));
    expect(fitted.maxTokens).toBeGreaterThanOrEqual(98);
  });

  test("a prompt that alone fills the window is refused with the counts, naming messages", async () => {
    const refusal = await fitRequest(request(100), "local", window4k, counted(9_000, 8_200)).catch((error) => error);
    expect(refusal).toBeInstanceOf(InvalidRequestError);
    expect(refusal.path).toBe("messages");
    expect(refusal.status).toBe(400);
    expect(refusal.contextOverflow).toEqual({ promptTokens: 8_200, contextWindow: 4_096 });
    // also without max_tokens: the prompt alone decides
    await expect(fitRequest(request(), "local", window4k, counted(4_096))).rejects.toThrow(/context window is 4096/);
  });

  test("without the tokenizer, the approximation's floor decides", async () => {
    const count: PromptCount = { approximate: () => 5_000, exact: () => Promise.reject(new Error("no tokenizer")) };
    const floor = Math.floor(5_000 / APPROXIMATION_OVERCOUNT);
    const { request: fitted } = await fitRequest(request(128_000), "local", window4k, count);
    expect(fitted.maxTokens).toBe(answerRoom(4_096, floor));
    const over: PromptCount = { approximate: () => 6_000, exact: () => Promise.reject(new Error("no tokenizer")) };
    await expect(fitRequest(request(100), "local", window4k, over)).rejects.toMatchObject({
      contextOverflow: { promptTokens: Math.floor(6_000 / APPROXIMATION_OVERCOUNT), contextWindow: 4_096 },
    });
  });

  test("the output limit still applies, and the thinking budget follows a lowered max_tokens", async () => {
    const limits = { ...window4k, maxOutputTokens: 512, outputSource: "the configuration" };
    const thinking = { ...request(2_000), thinking: { type: "enabled" as const, budgetTokens: 1_024 } };
    const { request: fitted } = await fitRequest(thinking, "local", limits, counted(100));
    expect(fitted.maxTokens).toBe(512);
    expect(fitted.thinking?.budgetTokens).toBe(256);
  });

  test("the room left never grows with the prompt and never reaches zero below the window", () => {
    for (const window of [4_096, 32_768]) {
      let previous = Number.POSITIVE_INFINITY;
      for (let prompt = 0; prompt < window; prompt += 7) {
        const room = answerRoom(window, prompt);
        expect(room).toBeGreaterThanOrEqual(1);
        expect(room).toBeLessThanOrEqual(window - prompt);
        expect(room).toBeLessThanOrEqual(previous);
        previous = room;
      }
    }
  });
});
