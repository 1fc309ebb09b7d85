import { describe, expect, test } from "vitest";
import {
  anthropicPromptCache,
  type CacheCounts,
  cachedShare,
  canonicalJson,
  deepseekPromptCache,
  openaiChatPromptCache,
  openaiResponsesPromptCache,
  type PromptCacheServer,
  renderAnthropicPrompt,
  renderChatPrompt,
  tokensOf,
  vllmPromptCache,
} from "./prefix-cache.js";

type Json = Record<string, unknown>;

/** Text of `tokens` tokens of the stand-in tokeniser (4 ASCII bytes each). */
const text = (tokens: number, fill = "a") => fill.repeat(tokens * 4);

const chat = (model: string, ...contents: string[]): Json => ({
  model,
  messages: contents.map((content, index) => ({ role: index % 2 === 0 ? "user" : "assistant", content })),
});

const chatTokens = (body: Json) => tokensOf(renderChatPrompt(body).bytes.length);
/** The tokens of a Chat prompt that are whole (a partial last one cannot end a cached prefix). */
const wholeTokens = (body: Json) => Math.floor(renderChatPrompt(body).bytes.length / 4);

function use(server: PromptCacheServer, body: Json): CacheCounts {
  const counts = server.use(body);
  if ("refusal" in counts) throw new Error(JSON.stringify(counts.refusal));
  return counts;
}

describe("the tokeniser stand-in", () => {
  test("4 bytes a token over canonical JSON: key order, spacing and cache_control are not part of the prompt", () => {
    expect(tokensOf(0)).toBe(0);
    expect(tokensOf(5)).toBe(2);
    expect(canonicalJson({ b: 1, a: { d: [1, { f: 2, e: 3 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"e":3,"f":2}]},"b":1}',
    );
    expect(canonicalJson({ type: "text", text: "x", cache_control: { type: "ephemeral" } })).toBe(
      canonicalJson({ text: "x", type: "text" }),
    );
  });

  test("a Chat prompt is its tools, then its messages, whatever the request's other fields", () => {
    const body = {
      model: "m",
      stream: true,
      tools: [{ type: "function" }],
      messages: [{ role: "user", content: "hi" }],
    };
    expect(renderChatPrompt(body).bytes.toString()).toBe('{"type":"function"}{"content":"hi","role":"user"}');
  });

  test("an Anthropic prompt: tools, system, messages' blocks; breakpoints where cache_control is, the automatic one last", () => {
    const body = {
      model: "claude",
      tools: [{ name: "Read", cache_control: { type: "ephemeral" } }],
      system: [{ type: "text", text: "s" }],
      messages: [
        { role: "user", content: "q" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "a" },
            { type: "thinking", thinking: "t", signature: "x" },
          ],
        },
      ],
    };
    const plain = renderAnthropicPrompt(body);
    expect(plain.positionEnds).toHaveLength(5);
    expect(plain.breakpoints).toEqual([0]);
    // the top-level form marks the last block that can carry a mark (not a thinking block)
    const automatic = renderAnthropicPrompt({ ...body, cache_control: { type: "ephemeral" } });
    expect(automatic.breakpoints).toEqual([0, 3]);
    expect(automatic.bytes).toEqual(plain.bytes);
  });
});

describe("vLLM: blocks of 16 tokens, hashed by their prefix", () => {
  test("reads the longest prefix sent before, in whole blocks, and never the last token", () => {
    const vllm = vllmPromptCache();
    const first = chat("qwen", text(1000));
    expect(use(vllm, first)).toEqual({ prompt: chatTokens(first), read: 0, written: 0 });
    const grown = chat("qwen", text(1000), text(50, "b"), text(30, "c"));
    expect(use(vllm, grown).read).toBe(Math.floor(wholeTokens(first) / 16) * 16);
    // the same prompt again: every whole block but one that would hold its last token
    const again = use(vllm, grown);
    expect(again.read).toBe(Math.floor((chatTokens(grown) - 1) / 16) * 16);
    // a byte changed in the middle: the blocks before it only
    const changed = chat("qwen", `${text(500)}X${text(499)}`, text(50, "b"));
    expect(use(vllm, changed).read).toBe(Math.floor((500 * 4 + '{"content":"'.length) / 64) * 16);
    // another model: its own cache
    expect(use(vllm, chat("other", text(1000))).read).toBe(0);
  });

  test("reports cached tokens in prompt_tokens_details only with --enable-prompt-tokens-details", () => {
    const counts = { prompt: 100, read: 64, written: 0 };
    expect(vllmPromptCache().usage(counts, 5)).toEqual({
      prompt_tokens: 100,
      total_tokens: 105,
      completion_tokens: 5,
      prompt_tokens_details: { cached_tokens: 64 },
    });
    expect(vllmPromptCache({ promptTokensDetails: false }).usage(counts, 5).prompt_tokens_details).toBeNull();
  });
});

describe("DeepSeek: units of 64 tokens", () => {
  test("reads whole units of the longest prefix sent before; hit and miss add up to the prompt", () => {
    const deepseek = deepseekPromptCache();
    const first = chat("deepseek-chat", text(1000));
    use(deepseek, first);
    const again = use(deepseek, first);
    expect(again.read).toBe(Math.floor(wholeTokens(first) / 64) * 64);
    const usage = deepseek.usage(again, 7);
    expect(usage).toMatchObject({
      prompt_tokens: again.prompt,
      prompt_tokens_details: { cached_tokens: again.read },
      prompt_cache_hit_tokens: again.read,
      prompt_cache_miss_tokens: again.prompt - again.read,
    });
  });
});

describe("OpenAI: 1,024 tokens at least, 128-token increments, routed by prompt_cache_key", () => {
  test("nothing below 1,024 tokens; then 1,024 + 128n of the prefix sent before", () => {
    const openai = openaiChatPromptCache();
    const short = chat("gpt", text(900));
    use(openai, short);
    expect(use(openai, short).read).toBe(0);
    const long = chat("gpt", text(3000));
    use(openai, long);
    const grown = chat("gpt", text(3000), text(400, "b"));
    const read = use(openai, grown).read;
    expect(read).toBe(1024 + Math.floor((wholeTokens(long) - 1024) / 128) * 128);
  });

  test("a request reads only what requests with its own key left; one without a key, what others without one left", () => {
    const openai = openaiChatPromptCache();
    const body = (key?: string) => ({
      ...chat("gpt", text(2000)),
      ...(key === undefined ? {} : { prompt_cache_key: key }),
    });
    use(openai, body("session-1"));
    expect(use(openai, body("session-1")).read).toBeGreaterThan(1024);
    expect(use(openai, body("session-2")).read).toBe(0);
    expect(use(openai, body()).read).toBe(0);
    expect(use(openai, body()).read).toBeGreaterThan(1024);
  });

  test("a key that changes every turn loses the cache however stable the prefix", () => {
    const openai = openaiChatPromptCache();
    const counts = [0, 1, 2, 3].map((turn) =>
      use(openai, { ...chat("gpt", text(2000), text(10 * turn)), prompt_cache_key: `turn-${turn}` }),
    );
    expect(cachedShare(counts)).toBe(0);
  });

  test("Chat and Responses report it in their own fields", () => {
    const counts = { prompt: 2000, read: 1152, written: 0 };
    expect(openaiChatPromptCache().usage(counts, 9)).toMatchObject({
      prompt_tokens: 2000,
      prompt_tokens_details: { cached_tokens: 1152 },
    });
    expect(openaiResponsesPromptCache().usage(counts, 9)).toMatchObject({
      input_tokens: 2000,
      input_tokens_details: { cached_tokens: 1152 },
      output_tokens: 9,
    });
    const responses = openaiResponsesPromptCache();
    const body = { model: "gpt", instructions: text(1500), input: "hi", prompt_cache_key: "k" };
    use(responses, body);
    expect(
      use(responses, {
        ...body,
        input: [
          { role: "user", content: "hi" },
          { role: "user", content: "more" },
        ],
      }).read,
    ).toBe(1024 + 128 * 3);
  });
});

describe("Anthropic: breakpoints, a 20-block lookback, a minimum length", () => {
  const system = [{ type: "text", text: text(1500), cache_control: { type: "ephemeral" } }];
  const block = (index: number) => ({ type: "text", text: `block ${index} ${text(20)}` });
  /** A conversation of `blocks` blocks in one user message, the breakpoint on the last. */
  const conversation = (blocks: number, extra: Json = {}) => ({
    model: "claude-sonnet-4-5",
    system,
    messages: [
      {
        role: "user",
        content: Array.from({ length: blocks }, (_, index) =>
          index === blocks - 1 ? { ...block(index), cache_control: { type: "ephemeral" } } : block(index),
        ),
      },
    ],
    ...extra,
  });

  test("the first request writes up to its last breakpoint; the next reads it and writes what it added", () => {
    const anthropic = anthropicPromptCache();
    const first = use(anthropic, conversation(3));
    expect(first.read).toBe(0);
    expect(first.written).toBe(first.prompt);
    const next = use(anthropic, conversation(6));
    expect(next.read).toBe(first.prompt);
    expect(next.written).toBe(next.prompt - first.prompt);
    expect(anthropic.usage(next, 20)).toEqual({
      input_tokens: 0,
      cache_creation_input_tokens: next.written,
      cache_read_input_tokens: next.read,
      output_tokens: 20,
    });
  });

  test("a moved breakpoint finds the last one within 20 blocks; farther back, only the system prompt's", () => {
    const anthropic = anthropicPromptCache();
    const first = use(anthropic, conversation(3));
    // 19 blocks added: the earlier breakpoint is the 20th position looked at
    expect(use(anthropic, conversation(22)).read).toBe(first.prompt);
    const systemOnly = tokensOf(renderAnthropicPrompt(conversation(1)).positionEnds[0]!);
    // 20 more: out of reach, the system breakpoint still is
    expect(use(anthropic, conversation(42)).read).toBe(systemOnly);
  });

  test("text after the last breakpoint is input; a prefix under the minimum is neither written nor read", () => {
    const marked = conversation(2);
    const body = {
      ...marked,
      messages: [...(marked.messages as Json[]), { role: "assistant", content: "ok" }, { role: "user", content: "go" }],
    };
    const rendered = renderAnthropicPrompt(body);
    const counts = use(anthropicPromptCache(), body);
    expect(counts.written).toBe(tokensOf(rendered.positionEnds[rendered.breakpoints.at(-1)!]!));
    expect(counts.prompt - counts.written).toBeGreaterThan(0);
    const small = anthropicPromptCache();
    const tiny = {
      model: "claude",
      system: [{ type: "text", text: "short", cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: "q" }],
    };
    expect(use(small, tiny)).toMatchObject({ read: 0, written: 0 });
    expect(use(small, tiny)).toMatchObject({ read: 0, written: 0 });
    // Opus 4.5's minimum: the 1,500-token system prompt is too short to cache
    expect(use(anthropicPromptCache({ minimumTokens: 4096 }), conversation(3)).written).toBe(0);
  });

  test("the automatic form caches the conversation as it grows", () => {
    const anthropic = anthropicPromptCache();
    const automatic = (turns: number) => ({
      model: "claude",
      cache_control: { type: "ephemeral" },
      system: text(1200),
      messages: Array.from({ length: turns * 2 - 1 }, (_, index) => ({
        role: index % 2 === 0 ? "user" : "assistant",
        content: `message ${index}`,
      })),
    });
    const first = use(anthropic, automatic(1));
    expect(first.written).toBe(first.prompt);
    const second = use(anthropic, automatic(2));
    expect(second.read).toBe(first.prompt);
  });

  test("a change of thinking settings misses the messages' entries, not the system prompt's", () => {
    const anthropic = anthropicPromptCache();
    use(anthropic, conversation(3, { thinking: { type: "enabled", budget_tokens: 1024 } }));
    const systemOnly = tokensOf(renderAnthropicPrompt(conversation(1)).positionEnds[0]!);
    expect(use(anthropic, conversation(4, { thinking: { type: "adaptive" } })).read).toBe(systemOnly);
  });

  test("more than four breakpoints are refused as the API refuses them", () => {
    const body = conversation(5);
    const marked = {
      ...body,
      messages: [
        {
          role: "user",
          content: Array.from({ length: 5 }, (_, index) => ({ ...block(index), cache_control: { type: "ephemeral" } })),
        },
      ],
    };
    expect(anthropicPromptCache().use(marked)).toEqual({
      refusal: {
        status: 400,
        body: {
          type: "error",
          error: {
            type: "invalid_request_error",
            message: "A maximum of 4 blocks with cache_control may be provided. Found 6.",
          },
        },
      },
    });
  });
});
