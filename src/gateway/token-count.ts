import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import {
  assertNever,
  type ConversationRequest,
  type MediaSource,
  missingPackage,
  type Part,
  type ToolResultContentPart,
} from "../core/index.js";
import { startWorkerThread } from "../store/worker-thread.js";
import { imageSize } from "./image-size.js";

/**
 * Input-token counts when the upstream gives none.
 *
 * `count_tokens` runs the o200k_base BPE tokenizer (gpt-tokenizer) on a worker thread started on first use: its
 * tables cost about 65 MB and 0.2 s to load, which the gateway should not pay at start-up or on every streamed
 * answer, and even linear (`token-count-bounded.ts`) the tokenizer takes about a second per megabyte of its worst
 * text, which the event loop, serving every other request, must never wait for.
 * `message_start` needs a figure before the upstream reports its own (OpenAI-compatible servers send usage at
 * the end, and `message_delta` then carries the real count), so it gets `approximateInputTokens`: one pass over
 * the same text, about 30 times cheaper than BPE, calibrated against o200k_base (see docs/gateway.md).
 */

type CountRequest = Pick<ConversationRequest, "system" | "messages" | "tools">;

/** Role and framing tokens per message, as chat templates add them. */
const PER_MESSAGE = 3;

/*
 * Images, as Anthropic's vision guide bills them: about width x height / 750 tokens, after an image whose long edge
 * is over 1,568 px is scaled down to it, and at most about 1,600 (larger images are scaled down until they fit).
 * The size is read from the image's header (`image-size.ts`); an image whose size cannot be read (a URL, a format
 * not known) counts the most, which is also what a screenshot of a 1080p screen or larger costs.
 */
const PIXELS_PER_TOKEN = 750;
const MAX_LONG_EDGE = 1_568;
const MAX_IMAGE_TOKENS = 1_600;
/** A binary document (a PDF) is not read: a flat figure keeps the meter moving. */
const PER_DOCUMENT = 1_000;

/** What an image costs, by Anthropic's formula where its size is known (see above). */
export function imageTokens(source: MediaSource): number {
  const size = source.type === "base64" ? imageSize(source.data) : undefined;
  if (size === undefined) return MAX_IMAGE_TOKENS;
  const scale = Math.min(1, MAX_LONG_EDGE / Math.max(size.width, size.height));
  const tokens = Math.ceil((size.width * scale * (size.height * scale)) / PIXELS_PER_TOKEN);
  return Math.min(MAX_IMAGE_TOKENS, Math.max(1, tokens));
}

interface RequestText {
  texts: string[];
  /** Tokens that are not text: per-message framing, images. */
  fixed: number;
}

function requestText(request: CountRequest): RequestText {
  const texts: string[] = [];
  let fixed = 0;
  const visit = (part: Part | ToolResultContentPart) => {
    switch (part.type) {
      case "text":
        texts.push(part.text);
        return;
      case "thinking":
        texts.push(part.thinking);
        return;
      case "redacted_thinking":
        return;
      case "tool_call":
        texts.push(part.name, part.rawInput ?? JSON.stringify(part.input ?? {}));
        return;
      case "tool_result":
        if (typeof part.content === "string") texts.push(part.content);
        else part.content.forEach(visit);
        return;
      case "image":
        if (part.source.type === "text") texts.push(part.source.data);
        else fixed += imageTokens(part.source);
        return;
      case "document":
        if (part.source.type === "text") texts.push(part.source.data);
        else fixed += PER_DOCUMENT;
        return;
      case "opaque":
        texts.push(JSON.stringify(part.block));
        return;
      default:
        assertNever(part, "part");
    }
  };
  if (request.system) request.system.parts.forEach(visit);
  for (const message of request.messages) {
    fixed += PER_MESSAGE;
    message.parts.forEach(visit);
  }
  for (const tool of request.tools ?? []) {
    texts.push(tool.name, tool.description ?? "", JSON.stringify(tool.inputSchema ?? {}));
  }
  return { texts, fixed };
}

/** An o200k_base count of the system prompt, messages and tool definitions (for `count_tokens`). */
export async function countInputTokens(request: CountRequest): Promise<number> {
  const { texts, fixed } = requestText(request);
  return (await tokenizerThread().count(texts.join("\n"))) + fixed;
}

interface CountReply {
  id: number;
  tokens?: number;
  error?: string;
}

/** The tokenizer's thread: jobs go out in order, answers come back by id. */
class TokenizerThread {
  private readonly pending = new Map<number, { resolve(tokens: number): void; reject(error: Error): void }>();
  private nextId = 0;

  constructor(private readonly worker: Worker) {
    // An idle tokenizer never keeps the process alive; a busy one does, until its answers are in.
    worker.unref();
    worker.on("message", (reply: CountReply) => {
      const job = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if (reply.tokens !== undefined) job?.resolve(reply.tokens);
      else job?.reject(new Error(`token counting failed: ${reply.error}`));
    });
    const stop = (error: Error) => {
      if (thread === this) thread = undefined;
      for (const job of this.pending.values()) job.reject(error);
      this.pending.clear();
    };
    // The tokenizer is an optional package for a library install: its absence names it.
    worker.on("error", (error) => stop(missingPackage(error, "gpt-tokenizer", "count_tokens") ?? error));
    worker.on("exit", (code) => stop(new Error(`the token counting thread exited (${code})`)));
  }

  count(text: string): Promise<number> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, text });
    });
  }
}

let thread: TokenizerThread | undefined;

function tokenizerThread(): TokenizerThread {
  thread ??= new TokenizerThread(startWorker());
  return thread;
}

/**
 * The compiled worker beside this module (the library's `dist/gateway/`, or the CLI bundle's `dist/`); run from
 * the TypeScript sources (tests), the source file through tsx, the development loader.
 */
function startWorker(): Worker {
  const compiled = new URL("./token-count-worker.js", import.meta.url);
  if (existsSync(fileURLToPath(compiled))) return startWorkerThread(compiled);
  const source = new URL("./token-count-worker.ts", import.meta.url).href;
  const bootstrap = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`;
  return new Worker(bootstrap, { eval: true });
}

/** A fast approximation of `countInputTokens`, for `message_start` before the upstream's own count. */
export function approximateInputTokens(request: CountRequest): number {
  const { texts, fixed } = requestText(request);
  let total = fixed;
  for (const text of texts) total += text.length < CACHED_FROM ? approximateTokens(text) : cachedApproximation(text);
  return Math.max(1, Math.round(total));
}

/*
 * Clients resend the same system prompt, tool definitions and history on every turn (Claude Code: 7 KB of system
 * prompt and a dozen schemas before the first message), so long texts are remembered: a hit costs a hash and a compare instead of a pass that
 * branches on every character (measured on a 1.4 MB Claude Code history: 2.3 ms against 7 ms). Bounded by
 * characters held, room for a few such histories (a bound below one history's size cleared the map on every
 * request and made every text a miss); when full it starts over.
 */
const CACHED_FROM = 256;
const CACHE_MAX_CHARACTERS = 4 << 20;
const approximations = new Map<string, number>();
let cachedCharacters = 0;

function cachedApproximation(text: string): number {
  const known = approximations.get(text);
  if (known !== undefined) return known;
  const tokens = approximateTokens(text);
  if (cachedCharacters + text.length > CACHE_MAX_CHARACTERS) {
    approximations.clear();
    cachedCharacters = 0;
  }
  if (text.length <= CACHE_MAX_CHARACTERS) {
    approximations.set(text, tokens);
    cachedCharacters += text.length;
  }
  return tokens;
}

/*
 * Weights fitted on 2 KB samples of prose, code, JSON, CJK and recorded provider traffic against o200k_base:
 * a short ASCII word is one token, a long one (identifiers, base64) about one per 3 characters; ASCII
 * punctuation about half a token; CJK characters 0.8; other non-ASCII 0.6.
 */
const SHORT_WORD = 7;
const CHARS_PER_TOKEN_LONG_WORD = 3;
const PUNCTUATION = 0.5;
const CJK = 0.8;
const OTHER = 0.6;

/** ASCII character classes, by code: 1 a letter or digit, 2 punctuation, 0 a space. */
const ASCII_CLASS = new Uint8Array(128).map((_, code) =>
  (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) ? 1 : code === 32 ? 0 : 2,
);

export function approximateTokens(text: string): number {
  let total = 0;
  let run = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const kind = code < 128 ? ASCII_CLASS[code]! : 3;
    if (kind === 1) {
      run++;
      continue;
    }
    if (run > 0) {
      total += run <= SHORT_WORD ? 1 : run / CHARS_PER_TOKEN_LONG_WORD;
      run = 0;
    }
    if (kind === 2) total += PUNCTUATION;
    else if (kind === 3) total += isCjk(code) ? CJK : OTHER;
  }
  if (run > 0) total += run <= SHORT_WORD ? 1 : run / CHARS_PER_TOKEN_LONG_WORD;
  return total;
}

function isCjk(code: number): boolean {
  return (
    (code >= 0x2e80 && code <= 0x9fff) ||
    (code >= 0xac00 && code <= 0xd7af) ||
    (code >= 0xff00 && code <= 0xffef) ||
    (code >= 0x3000 && code <= 0x303f)
  );
}
