import { createHash } from "node:crypto";

/**
 * Prompt caches kept the way the real servers keep them, for the scripted upstreams: what a server counts as read
 * from its cache for a request depends only on what earlier requests sent it, as their documentation says. A test
 * or a benchmark then reads the share of a session's input that came from the cache off the usage each answer
 * reports, in the server's own fields.
 *
 * - vLLM (automatic prefix caching, docs.vllm.ai "Automatic Prefix Caching" and the v1 KV cache manager): the
 *   prompt's tokens in blocks of 16, each block hashed with all before it; a block is a hit when a request before
 *   held the same block after the same prefix. Only whole blocks count, and the last prompt token is always computed
 *   (`max_cache_hit_length = num_tokens - 1`), so a repeated prompt reads all its whole blocks but the one holding
 *   its last token. Reported as `usage.prompt_tokens_details.cached_tokens` when the server runs with
 *   `--enable-prompt-tokens-details`, else `prompt_tokens_details: null`.
 * - DeepSeek (api-docs.deepseek.com, "Context Caching"): the disk cache in units of 64 tokens, a hit for the longest
 *   prefix an earlier request sent, in whole units; `prompt_cache_hit_tokens` and `prompt_cache_miss_tokens` beside
 *   `prompt_tokens_details.cached_tokens` (as the recorded answer in test/fixtures/deepseek shows: 320 of 339). The
 *   V4 pages describe prefix units persisted at each request's end instead; for a session that only appends, both
 *   read the previous prompt, to within a unit.
 * - Anthropic (docs.claude.com, "Prompt caching"): the prompt in the order tools, system, messages, each tool,
 *   system block and content block one position; `cache_control` on up to 4 of them (a fifth is refused with the
 *   API's 400, "A maximum of 4 blocks with cache_control may be provided. Found 5.", as users quote it), and the
 *   top-level `cache_control` (automatic caching) one more on the last block that can carry one. A request reads the
 *   longest prefix an earlier request wrote, looking back from each breakpoint over at most 20 positions (the
 *   breakpoint's own included); it writes the prefix up to each breakpoint past that (`cache_creation_input_tokens`
 *   from the read's end to the last breakpoint), and `input_tokens` is the rest. A prefix shorter than the model's
 *   minimum is neither written nor read: 1,024 tokens here, Sonnet 4.5's and Opus 4.1's (Opus 4.5 and later and
 *   Haiku 4.5 take 4,096, Haiku 3.5 2,048: the `minimumTokens` option). Changing `thinking` or `tool_choice`
 *   invalidates the messages' entries, not those of tools and system. Entries do not expire (the 5-minute TTL is
 *   refreshed by every read and a session here runs in seconds).
 * - OpenAI, Chat Completions and Responses (platform.openai.com, "Prompt caching"): prompts of 1,024 tokens or more,
 *   hits in increments of 128 tokens (1,024, 1,152, 1,280...), routed by a hash of the prompt's first 256 tokens
 *   combined with `prompt_cache_key`: a request reads what an earlier one with the same key (or the same lack of
 *   one) and the same start left. `usage.prompt_tokens_details.cached_tokens` (Chat) or
 *   `usage.input_tokens_details.cached_tokens` (Responses). A deterministic stand-in cannot show what the key buys on
 *   the real service (requests of one prefix spread over machines past about 15 a minute); it shows that a key
 *   that changes between turns loses the cache.
 *
 * The tokeniser is a stand-in, the same for every server: the prompt rendered as canonical JSON (keys sorted, no
 * spaces, `cache_control` left out: a breakpoint marks the prompt, it is not part of it), each element of the
 * prompt one after the other (a chat template's order: tools, then messages), 4 bytes of UTF-8 a token. Any change
 * to a byte of an element changes every token after it, as a real template and tokeniser would; key order and
 * spacing of the JSON as sent do not, as they do not for a template. Every cache is scoped to its model, and keeps
 * prompts only: vLLM and DeepSeek also keep an answer's generated tokens, which the next prompt holds again only
 * where the template renders the answer as it was generated (seldom: Qwen3's drops the thinking), so an answer
 * counts as new input on the next turn here, on every server alike.
 */

export const BYTES_PER_TOKEN = 4;

/** Tokens of `bytes` bytes of rendered prompt: a partial last token counts. */
export function tokensOf(bytes: number): number {
  return Math.ceil(bytes / BYTES_PER_TOKEN);
}

type Json = Record<string, unknown>;

/** JSON with every object's keys sorted and `cache_control` left out. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonical(value));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  const out: Json = {};
  for (const key of Object.keys(value).sort()) {
    if (key === "cache_control") continue;
    out[key] = canonical((value as Json)[key]);
  }
  return out;
}

/** A request's prompt as a server renders it. */
export interface RenderedPrompt {
  bytes: Buffer;
  /** Where each position ends, in bytes: Anthropic's blocks (a tool, a system block, a content block). */
  positionEnds: number[];
  /** The positions marked with `cache_control`, in order. */
  breakpoints: number[];
}

class PromptWriter {
  private readonly parts: string[] = [];
  private length = 0;
  readonly positionEnds: number[] = [];
  readonly breakpoints: number[] = [];

  /** Text that is part of the prompt but no position (a role's marker, the settings before the messages). */
  text(text: string): void {
    this.parts.push(text);
    this.length += Buffer.byteLength(text);
  }

  position(value: unknown, breakpoint: boolean): void {
    this.text(canonicalJson(value));
    if (breakpoint) this.breakpoints.push(this.positionEnds.length);
    this.positionEnds.push(this.length);
  }

  done(): RenderedPrompt {
    return { bytes: Buffer.from(this.parts.join("")), positionEnds: this.positionEnds, breakpoints: this.breakpoints };
  }
}

const marked = (value: unknown): boolean =>
  value !== null && typeof value === "object" && (value as Json).cache_control !== undefined;

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Chat Completions: the tools, then the messages, each one element. */
export function renderChatPrompt(body: Json): RenderedPrompt {
  const writer = new PromptWriter();
  for (const tool of asArray(body.tools)) writer.position(tool, false);
  for (const message of asArray(body.messages)) writer.position(message, false);
  return writer.done();
}

/** Responses: the instructions, the tools, then the input items (a string input is one user message). */
export function renderResponsesPrompt(body: Json): RenderedPrompt {
  const writer = new PromptWriter();
  if (body.instructions !== undefined && body.instructions !== null) writer.position(body.instructions, false);
  for (const tool of asArray(body.tools)) writer.position(tool, false);
  const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : asArray(body.input);
  for (const item of input) writer.position(item, false);
  return writer.done();
}

/** Block types that cannot carry `cache_control` themselves (they are cached as part of a prefix). */
const UNMARKABLE = new Set(["thinking", "redacted_thinking"]);

/**
 * Anthropic Messages: tools, system blocks, the settings that invalidate the messages' entries, then every content
 * block of every message (a string content is one text block), a message's role before its first block.
 */
export function renderAnthropicPrompt(body: Json): RenderedPrompt {
  const writer = new PromptWriter();
  for (const tool of asArray(body.tools)) writer.position(tool, marked(tool));
  const system = typeof body.system === "string" ? [{ type: "text", text: body.system }] : asArray(body.system);
  for (const block of system) writer.position(block, marked(block));
  writer.text(canonicalJson({ thinking: body.thinking ?? null, tool_choice: body.tool_choice ?? null }));
  let lastMarkable = -1;
  for (const message of asArray(body.messages)) {
    const { role, content } = (message ?? {}) as Json;
    writer.text(canonicalJson({ role }));
    const blocks = typeof content === "string" ? [{ type: "text", text: content }] : asArray(content);
    for (const block of blocks) {
      const type = (block as Json | null)?.type;
      if (!UNMARKABLE.has(String(type))) lastMarkable = writer.positionEnds.length;
      writer.position(block, marked(block));
    }
  }
  // automatic caching: one breakpoint on the last block that can carry one
  if (marked(body) && lastMarkable >= 0 && !writer.breakpoints.includes(lastMarkable))
    writer.breakpoints.push(lastMarkable);
  return writer.done();
}

/**
 * The hashes of the prompt's prefixes ending at `ends` (bytes, ascending), each covering every byte before it and
 * the scope: equal hashes, equal prefixes of one scope.
 */
export function prefixHashes(scope: string, bytes: Buffer, ends: readonly number[]): string[] {
  const hash = createHash("sha256").update(`${scope}\u0000`);
  const out: string[] = [];
  let at = 0;
  for (const end of ends) {
    hash.update(bytes.subarray(at, end));
    at = end;
    out.push(hash.copy().digest("hex"));
  }
  return out;
}

/** What a server's cache did with one request, in tokens. */
export interface CacheCounts {
  /** Every input token of the request (read, written and the rest). */
  prompt: number;
  /** Read from the cache. */
  read: number;
  /** Written to the cache and counted apart (Anthropic only: the others count writes as plain input). */
  written: number;
}

/**
 * The longest prefix seen before, at token boundaries: a server whose cache holds prefixes ending on a grid (vLLM's
 * blocks, DeepSeek's units, OpenAI's 1,024 + 128n). Every boundary of every request is kept.
 */
class GridCache {
  private readonly seen = new Set<string>();

  /** The tokens read (the last of `boundaries` up to `limit` seen before), then every boundary stored. */
  use(scope: string, bytes: Buffer, boundaries: readonly number[], limit = Number.POSITIVE_INFINITY): number {
    const hashes = prefixHashes(
      scope,
      bytes,
      boundaries.map((tokens) => tokens * BYTES_PER_TOKEN),
    );
    let read = 0;
    boundaries.forEach((tokens, index) => {
      if (tokens <= limit && this.seen.has(hashes[index]!)) read = tokens;
    });
    for (const hash of hashes) this.seen.add(hash);
    return read;
  }
}

/** Multiples of `step` up to `limit`, starting at `first`. */
function grid(first: number, step: number, limit: number): number[] {
  const out: number[] = [];
  for (let tokens = first; tokens <= limit; tokens += step) out.push(tokens);
  return out;
}

/** A caching server of one of the kinds above: its counts for a request, and its usage object for them. */
export interface PromptCacheServer {
  readonly name: string;
  /** Looks the request up and keeps what the server keeps; a refusal when the server would refuse the request. */
  use(body: Json): CacheCounts | { refusal: { status: number; body: unknown } };
  /** The counts (and an answer of `outputTokens`) as the server's `usage`. */
  usage(counts: CacheCounts, outputTokens: number): Json;
}

/** Whole blocks of prompt, hashed by their prefix: vLLM's automatic prefix caching, DeepSeek's disk cache. */
function blockCache(
  name: string,
  blockTokens: number,
  recomputeLastToken: boolean,
  usage: PromptCacheServer["usage"],
): PromptCacheServer {
  const cache = new GridCache();
  return {
    name,
    use(body) {
      const { bytes } = renderChatPrompt(body);
      const prompt = tokensOf(bytes.length);
      const whole = grid(blockTokens, blockTokens, Math.floor(bytes.length / BYTES_PER_TOKEN));
      const limit = recomputeLastToken ? prompt - 1 : prompt;
      return { prompt, read: cache.use(String(body.model), bytes, whole, limit), written: 0 };
    },
    usage,
  };
}

export interface VllmCacheOptions {
  /** `--block-size`: 16 by default. */
  blockTokens?: number;
  /** `--enable-prompt-tokens-details`: without it the usage has no cached count. True here. */
  promptTokensDetails?: boolean;
}

export function vllmPromptCache(options: VllmCacheOptions = {}): PromptCacheServer {
  const details = options.promptTokensDetails ?? true;
  return blockCache("vLLM", options.blockTokens ?? 16, true, (counts, output) => ({
    prompt_tokens: counts.prompt,
    total_tokens: counts.prompt + output,
    completion_tokens: output,
    prompt_tokens_details: details ? { cached_tokens: counts.read } : null,
  }));
}

export function deepseekPromptCache(options: { unitTokens?: number } = {}): PromptCacheServer {
  return blockCache("DeepSeek", options.unitTokens ?? 64, false, (counts, output) => ({
    prompt_tokens: counts.prompt,
    completion_tokens: output,
    total_tokens: counts.prompt + output,
    prompt_tokens_details: { cached_tokens: counts.read },
    prompt_cache_hit_tokens: counts.read,
    prompt_cache_miss_tokens: counts.prompt - counts.read,
  }));
}

export interface OpenAICacheOptions {
  minimumTokens?: number;
  incrementTokens?: number;
  /** The prompt's start that routes a request, with its `prompt_cache_key`. */
  routingTokens?: number;
}

function openaiCache(
  name: string,
  render: (body: Json) => RenderedPrompt,
  options: OpenAICacheOptions,
  usage: PromptCacheServer["usage"],
): PromptCacheServer {
  const minimum = options.minimumTokens ?? 1024;
  const increment = options.incrementTokens ?? 128;
  const routing = options.routingTokens ?? 256;
  const cache = new GridCache();
  return {
    name,
    use(body) {
      const { bytes } = render(body);
      const prompt = tokensOf(bytes.length);
      const start = prefixHashes("route", bytes, [Math.min(bytes.length, routing * BYTES_PER_TOKEN)])[0]!;
      const key = typeof body.prompt_cache_key === "string" ? body.prompt_cache_key : "";
      const scope = JSON.stringify([body.model, key, start]);
      const boundaries = grid(minimum, increment, Math.floor(bytes.length / BYTES_PER_TOKEN));
      return { prompt, read: cache.use(scope, bytes, boundaries), written: 0 };
    },
    usage,
  };
}

export function openaiChatPromptCache(options: OpenAICacheOptions = {}): PromptCacheServer {
  return openaiCache("OpenAI Chat Completions", renderChatPrompt, options, (counts, output) => ({
    prompt_tokens: counts.prompt,
    completion_tokens: output,
    total_tokens: counts.prompt + output,
    prompt_tokens_details: { cached_tokens: counts.read, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  }));
}

export function openaiResponsesPromptCache(options: OpenAICacheOptions = {}): PromptCacheServer {
  return openaiCache("OpenAI Responses", renderResponsesPrompt, options, (counts, output) => ({
    input_tokens: counts.prompt,
    input_tokens_details: { cached_tokens: counts.read },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: counts.prompt + output,
  }));
}

export interface AnthropicCacheOptions {
  /** The model's minimum cacheable prefix: 1,024 (Sonnet 4.5, Opus 4.1); 4,096 for Opus 4.5+ and Haiku 4.5. */
  minimumTokens?: number;
  /** Positions looked at from each breakpoint back, its own included. */
  lookbackBlocks?: number;
  maxBreakpoints?: number;
}

export function anthropicPromptCache(options: AnthropicCacheOptions = {}): PromptCacheServer {
  const minimum = options.minimumTokens ?? 1024;
  const lookback = options.lookbackBlocks ?? 20;
  const maxBreakpoints = options.maxBreakpoints ?? 4;
  const written = new Set<string>();
  return {
    name: "Anthropic",
    use(body) {
      const { bytes, positionEnds, breakpoints } = renderAnthropicPrompt(body);
      if (breakpoints.length > maxBreakpoints) {
        const message = `A maximum of ${maxBreakpoints} blocks with cache_control may be provided. Found ${breakpoints.length}.`;
        return {
          refusal: { status: 400, body: { type: "error", error: { type: "invalid_request_error", message } } },
        };
      }
      const hashes = prefixHashes(String(body.model), bytes, positionEnds);
      const tokensAt = (position: number) => tokensOf(positionEnds[position]!);
      const cacheable = (position: number) => tokensAt(position) >= minimum;
      let read = 0;
      for (const breakpoint of breakpoints) {
        for (let position = breakpoint; position >= 0 && position > breakpoint - lookback; position--) {
          if (cacheable(position) && written.has(hashes[position]!)) {
            read = Math.max(read, tokensAt(position));
            break;
          }
        }
      }
      let writtenUpTo = read;
      for (const breakpoint of breakpoints) {
        if (!cacheable(breakpoint) || tokensAt(breakpoint) <= read) continue;
        written.add(hashes[breakpoint]!);
        writtenUpTo = Math.max(writtenUpTo, tokensAt(breakpoint));
      }
      return { prompt: tokensOf(bytes.length), read, written: writtenUpTo - read };
    },
    usage: (counts, output) => ({
      input_tokens: counts.prompt - counts.read - counts.written,
      cache_creation_input_tokens: counts.written,
      cache_read_input_tokens: counts.read,
      output_tokens: output,
    }),
  };
}

/** The share of a session's input tokens read from the cache. */
export function cachedShare(counts: readonly CacheCounts[]): number {
  const prompt = counts.reduce((sum, count) => sum + count.prompt, 0);
  return prompt === 0 ? 0 : counts.reduce((sum, count) => sum + count.read, 0) / prompt;
}
