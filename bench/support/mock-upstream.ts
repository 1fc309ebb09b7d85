import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";

/**
 * A lean OpenAI-compatible upstream for load tests: `POST /v1/chat/completions` answers 64 content tokens,
 * streamed as 67 SSE frames (role, 64 tokens, finish with usage, `[DONE]`, about 12 KB) or as one JSON body.
 * It keeps no per-request state, only the last body of each kind (`GET /last-request?stream=1|0`), so the
 * benchmark can send the direct baseline exactly the bytes the gateway sent upstream.
 */
export const ANSWER_TOKENS = 64;
export const STREAM_FRAMES = ANSWER_TOKENS + 3;

const words = ["The", " parser", " keeps", " every", " block", " in", " order", ",", " so", " the", " tool", " loop"];
const tokens = Array.from({ length: ANSWER_TOKENS }, (_, index) => words[index % words.length]!);
const usage = { prompt_tokens: 1200, completion_tokens: ANSWER_TOKENS, total_tokens: 1200 + ANSWER_TOKENS };

function chunk(
  delta: Record<string, unknown>,
  finishReason: string | null,
  extra: Record<string, unknown> = {},
): string {
  const body = {
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1_760_000_000,
    model: "bench-model",
    system_fingerprint: "fp_bench",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...extra,
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

export const streamFrames: string[] = [
  chunk({ role: "assistant", content: "" }, null),
  ...tokens.map((token) => chunk({ content: token }, null)),
  chunk({}, "stop", { usage }),
  "data: [DONE]\n\n",
];
const streamText = streamFrames.join("");

const completionText = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1_760_000_000,
  model: "bench-model",
  system_fingerprint: "fp_bench",
  choices: [
    { index: 0, message: { role: "assistant", content: tokens.join("") }, logprobs: null, finish_reason: "stop" },
  ],
  usage,
});

export interface MockUpstreamOptions {
  /** Milliseconds between stream frames; 0 sends the whole stream in one write. */
  frameDelayMs?: number;
}

export interface MockUpstream {
  /** `http://127.0.0.1:PORT/v1`, as a provider's base URL. */
  baseUrl: string;
  close(): Promise<void>;
}

export async function startMockUpstream(options: MockUpstreamOptions = {}): Promise<MockUpstream> {
  const frameDelayMs = options.frameDelayMs ?? 0;
  const last: { stream?: string; json?: string } = {};
  const server: Server = createServer({ keepAliveTimeout: 65_000 }, async (req, res) => {
    if (req.method === "GET" && req.url?.startsWith("/last-request")) {
      const body = req.url.endsWith("stream=1") ? last.stream : last.json;
      res.writeHead(body === undefined ? 404 : 200, { "content-type": "application/json" });
      res.end(body ?? "{}");
      return;
    }
    if (req.method !== "POST" || !req.url?.startsWith("/v1/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    const text = await readBody(req);
    let stream = false;
    try {
      stream = (JSON.parse(text) as { stream?: unknown }).stream === true;
    } catch {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "body is not JSON" } }));
      return;
    }
    if (stream) last.stream = text;
    else last.json = text;
    if (!stream) {
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(completionText) });
      res.end(completionText);
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    if (frameDelayMs === 0) {
      res.end(streamText);
      return;
    }
    for (const frame of streamFrames) {
      if (res.destroyed) return;
      res.write(frame);
      await new Promise((resolve) => setTimeout(resolve, frameDelayMs));
    }
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (part: Buffer) => chunks.push(part));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

// Run as its own process (so that it can sit on its own core): prints its base URL, stops on SIGTERM.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const delayArgument = process.argv.find((argument) => argument.startsWith("--frame-delay="));
  const upstream = await startMockUpstream({ frameDelayMs: Number(delayArgument?.split("=")[1] ?? 0) });
  process.stdout.write(`mock upstream on ${upstream.baseUrl}\n`);
  process.once("SIGTERM", () => void upstream.close().then(() => process.exit(0)));
}
