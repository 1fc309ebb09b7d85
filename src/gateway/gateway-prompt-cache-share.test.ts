import { beforeAll, describe, expect, test } from "vitest";
import { type SessionRun, sessionStraight, sessionThroughParley } from "../../test/support/cache-share.js";
import type { CachingServerName } from "../../test/support/caching-upstream.js";
import { cachedShare } from "../../test/support/prefix-cache.js";

/**
 * What the prompt cache is worth through Parley: a 20-turn Claude Code session through the gateway to upstreams
 * that cache as the real servers do (`test/support/prefix-cache.ts`), beside the same session sent straight to a
 * fresh upstream of the same kind by a native client of its API (`test/support/cache-session.ts`). Byte-stable
 * prefixes (`gateway-prompt-cache.test.ts`) are the means; the share of input read from the cache is the end.
 * `npm run bench` runs the same for 50 turns (`bench/prompt-cache.bench.ts`).
 */
const TURNS = 20;

/** The cache's grain on each server: a turn reads the previous turn's whole prompt, less at most this. */
const GRAIN: Record<CachingServerName, number> = {
  vllm: 16,
  deepseek: 64,
  anthropic: 0,
  "openai-chat": 128,
  "openai-responses": 128,
};

describe.each(Object.keys(GRAIN) as CachingServerName[])("a 20-turn Claude Code session, %s upstream", (name) => {
  let parley: SessionRun;
  let straight: SessionRun;

  beforeAll(async () => {
    parley = await sessionThroughParley(name, TURNS);
    straight = await sessionStraight(name, TURNS);
  }, 60_000);

  test("reads as much from the cache through Parley as straight", () => {
    expect(parley.upstream).toHaveLength(TURNS);
    expect(straight.upstream).toHaveLength(TURNS);
    const through = cachedShare(parley.upstream);
    const direct = cachedShare(straight.upstream);
    expect(direct).toBeGreaterThan(0.9);
    expect(Math.abs(through - direct), `through Parley ${through}, straight ${direct}`).toBeLessThan(0.005);
  });

  test("every turn after the first reads all that the turn before it sent", () => {
    expect(parley.upstream[0]!.read).toBe(0);
    for (let turn = 1; turn < TURNS; turn++) {
      const { read } = parley.upstream[turn]!;
      const before = parley.upstream[turn - 1]!.prompt;
      expect(read, `turn ${turn}`).toBeLessThanOrEqual(before);
      expect(read, `turn ${turn}`).toBeGreaterThanOrEqual(before - GRAIN[name]);
    }
  });

  test("Claude Code reads the upstream's counts: reads, writes and the prompt's size", () => {
    expect(parley.client).toEqual(parley.upstream);
  });

  if (name === "anthropic")
    test("the upstream gets Claude Code's breakpoints: the system prompt's, and the last block's, moving", () => {
      for (const body of parley.bodies) {
        const system = body.system as Array<Record<string, unknown>>;
        expect(system.filter((block) => block.cache_control !== undefined)).toHaveLength(2);
        const messages = body.messages as Array<{ content: Array<Record<string, unknown>> }>;
        const marked = messages.flatMap((message) => message.content.filter((block) => block.cache_control));
        expect(marked).toEqual([messages.at(-1)!.content.at(-1)]);
      }
      // the first turn writes it all; later turns write only what they added
      expect(parley.upstream[0]!.written).toBe(parley.upstream[0]!.prompt);
    });

  if (name === "openai-chat" || name === "openai-responses")
    test("every turn carries the session's one prompt_cache_key", () => {
      const keys = new Set(parley.bodies.map((body) => body.prompt_cache_key));
      expect(keys.size).toBe(1);
      expect([...keys][0]).toMatch(/^parley-[0-9a-f]{40}$/);
    });
});
