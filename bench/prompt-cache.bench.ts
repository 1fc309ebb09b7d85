import { type SessionRun, sessionStraight, sessionThroughParley } from "../test/support/cache-share.js";
import { CACHING_SERVERS, type CachingServerName } from "../test/support/caching-upstream.js";
import { cachedShare } from "../test/support/prefix-cache.js";
import { type BenchSection, fixed, table } from "./harness.js";

/**
 * The share of a long agent session's input that the upstream reads from its prompt cache, through Parley and
 * straight: the same 50-turn Claude Code session, once through the gateway and once as a native client of the
 * upstream's API sends it, each to a fresh mock that caches as the real server does (`test/support/prefix-cache.ts`).
 * The mocks are deterministic, so one run of each is the measurement.
 */
const TURNS = 50;

/** How the session reaches each upstream through Parley, and straight. */
const ROUTES: Record<CachingServerName, { parley: string; straight: string }> = {
  vllm: { parley: "Chat, translated", straight: "a Chat client" },
  deepseek: { parley: "Chat, translated", straight: "a Chat client" },
  anthropic: { parley: "Claude Code's bytes, its `cache_control`", straight: "Claude Code" },
  "openai-chat": { parley: "Chat, translated, Parley's key", straight: "a Chat client, its own key" },
  "openai-responses": { parley: "Responses, translated, Parley's key", straight: "a Codex-like client, its own key" },
};

const percent = (share: number) => `${fixed(share * 100, 2)} %`;
const readingTurns = (run: SessionRun) => run.upstream.filter((counts) => counts.read > 0).length;
const inputTokens = (run: SessionRun) => run.upstream.reduce((sum, counts) => sum + counts.prompt, 0);

export default async (): Promise<BenchSection> => {
  const rows: Array<Array<string | number>> = [];
  for (const name of Object.keys(ROUTES) as CachingServerName[]) {
    const parley = await sessionThroughParley(name, TURNS);
    const straight = await sessionStraight(name, TURNS);
    const through = cachedShare(parley.upstream);
    const direct = cachedShare(straight.upstream);
    rows.push([
      CACHING_SERVERS[name].label,
      ROUTES[name].parley,
      ROUTES[name].straight,
      percent(through),
      percent(direct),
      fixed(through / direct, 3),
      `${readingTurns(parley)} / ${readingTurns(straight)}`,
      `${inputTokens(parley).toLocaleString("en-US")} / ${inputTokens(straight).toLocaleString("en-US")}`,
    ]);
  }
  return {
    title: `Prompt cache over a ${TURNS}-turn Claude Code session`,
    markdown: [
      table(
        [
          "upstream (mock)",
          "through Parley: what it sends",
          "straight: sent by",
          "input read from the cache, through Parley",
          "straight",
          "through / straight",
          `turns reading the cache, of ${TURNS} (Parley / straight)`,
          "input tokens (Parley / straight)",
        ],
        rows,
      ),
      "",
      `One Claude Code session of ${TURNS} turns (its recorded first request of 2.1.332 with the prose the fixture`,
      "leaves out put back at its length, about 12,000 tokens of system prompt and tools; then the model thinks and",
      "calls Read, Bash or Edit, or every sixth turn answers, and the client sends the tool's 0.5-6 KB output or its",
      "next request; the breakpoint moves to the last block every turn, as Claude Code moves it), through `parley",
      "serve` to a mock upstream of each kind. Straight is the same conversation sent to a fresh mock of the same kind",
      "by a native client of the upstream's API, built by hand and not through Parley: for Anthropic, Claude Code's",
      "own requests; for the others, the system blocks as that API's system prompt, the tools as functions, each",
      "answer appended as it came (reasoning in its own field, Responses' output items as they are) and the tool's",
      "output after it, with what such a client sends for caching (nothing on vLLM and DeepSeek, its session id as",
      "`prompt_cache_key` on OpenAI, as Codex does). The share is the session's tokens read from the cache over all",
      "its input tokens, as the mock reports them in its own usage fields (Claude Code reads the same counts through",
      "Parley: `src/gateway/gateway-prompt-cache-share.test.ts`).",
      "",
      "The mocks cache as the servers document it (`test/support/prefix-cache.ts`): vLLM's automatic prefix caching",
      "in 16-token blocks (`prompt_tokens_details.cached_tokens`, as with `--enable-prompt-tokens-details`), the last",
      "token always computed; DeepSeek's disk cache in 64-token units (`prompt_cache_hit_tokens`); Anthropic's",
      "breakpoints with the 20-block lookback and a 1,024-token minimum (`cache_read_input_tokens`,",
      "`cache_creation_input_tokens`); OpenAI's 1,024-token minimum and 128-token increments per",
      "(`prompt_cache_key`, prompt start), Chat and Responses alike. Their tokeniser is a stand-in: canonical JSON of",
      "the prompt's elements (tools, then messages) at 4 bytes a token, so the two columns count slightly different",
      "renderings of one conversation. The first turn reads nothing anywhere; a turn after it reads the whole prompt",
      "before it (to the cache's grain) when that prompt's bytes come back unchanged, so the share is what a",
      "session of this length can get, and a ratio of 1.000 means Parley costs the cache nothing.",
    ].join("\n"),
  };
};
