import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, test } from "vitest";
import { countInputTokens } from "./token-count.js";
import { countBounded, countInRuns, EXACT_CHARACTERS, MAX_RUN } from "./token-count-bounded.js";

const count = (text: string) => countTokens(text, { disallowedSpecial: new Set() });
const request = (text: string) => ({ messages: [{ role: "user" as const, parts: [{ type: "text" as const, text }] }] });

describe("counting stays linear in the input", () => {
  // Before the runs were bounded, 80 KB of `=` took 2.7 s and 160 KB of `Z` 13 s: quadratic in the run.
  test.each([
    ["=", 160 * 1024],
    ["Z", 160 * 1024],
    [" ", 160 * 1024],
    ["\n", 160 * 1024],
    ["\u3000", 160 * 1024],
  ])("a run of %j, %i long, is counted in well under a second", (character, length) => {
    const started = performance.now();
    const tokens = countInRuns(character.repeat(length), count);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(tokens).toBeGreaterThan(0);
  });

  test("ordinary text is counted exactly as the tokenizer counts it whole", () => {
    const prose =
      "The quick brown fox, in 1987, jumped over the lazy dog's fence.\n\tIndented — and 日本語 too. ".repeat(500);
    expect(countInRuns(prose, count)).toBe(count(prose));
  });

  test("a cut run costs at most one token per cut, and never splits a surrogate pair", () => {
    const emoji = "😀".repeat(MAX_RUN * 2);
    const exact = count("x".repeat(MAX_RUN * 8));
    expect(countInRuns("x".repeat(MAX_RUN * 8), count)).toBeLessThanOrEqual(exact + 8);
    const seen: string[] = [];
    countInRuns(emoji, (text) => {
      seen.push(text);
      return count(text);
    });
    expect(seen.length).toBeGreaterThan(1);
    for (const segment of seen) expect(segment).toMatch(/^(?:\uD83D\uDE00)+$/);
  });

  test("past EXACT_CHARACTERS the count is scaled from samples, within 2% on prose", () => {
    const prose = "Parley keeps an LLM conversation whole while it crosses API formats; nothing is dropped. ";
    const long = prose.repeat(Math.ceil((EXACT_CHARACTERS * 3) / prose.length));
    const exact = countInRuns(long, count);
    const sampled = countBounded(long, count);
    expect(Math.abs(sampled - exact) / exact).toBeLessThan(0.02);
  });
});

describe("countInputTokens", () => {
  test("counts on the tokenizer's thread, and 1 MiB of one character does not take long", async () => {
    expect(await countInputTokens(request("Hello, world"))).toBe(count("Hello, world") + 3);
    const started = performance.now();
    expect(await countInputTokens(request("=".repeat(1 << 20)))).toBeGreaterThan(1_000);
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
