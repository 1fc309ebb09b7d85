import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { serve } from "@hono/node-server";
import Fastify from "fastify";
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { startScript } from "./children.js";

/**
 * One handler shaped like the gateway's hot path, served by each HTTP server layer Parley could be built on:
 * `POST /v1/messages` reads the whole JSON body, parses it, and answers either a JSON message of about 1 KB or,
 * when the body says `"stream": true`, an SSE stream of 50 small frames, each frame written on its own. Every
 * layer is used the way its documentation shows (fastify's own JSON body parser and `reply.send`, hono's
 * `c.req.json()`, `c.json()` and `streamSSE`), and builds the same bytes.
 */
export const SERVER_LAYERS = ["node:http", "fastify", "hono"] as const;
export type ServerLayer = (typeof SERVER_LAYERS)[number];

export const SSE_FRAMES = 50;
const DELTA_FRAMES = SSE_FRAMES - 5;

interface RequestBody {
  model?: unknown;
  stream?: unknown;
  messages?: unknown;
}

interface SseFrame {
  event: string;
  data: string;
}

const words = ["The", " parser", " keeps", " every", " block", " in", " order", ",", " so", " the", " tool", " loop"];
const answerText = Array.from({ length: 165 }, (_, index) => words[index % words.length]!).join("");

/** The non-streamed answer: an Anthropic Messages response of about 1 KB, built per request. */
export function jsonReply(body: RequestBody): Record<string, unknown> {
  const messages = Array.isArray(body.messages) ? body.messages.length : 0;
  return {
    id: "msg_01BenchServerLayer0000000",
    type: "message",
    role: "assistant",
    model: typeof body.model === "string" ? body.model : "unknown",
    content: [{ type: "text", text: answerText }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: messages * 100, output_tokens: 165, cache_read_input_tokens: 0 },
  };
}

/** The streamed answer: message_start, a text block of 45 deltas, message_delta, message_stop. */
export function sseFrames(body: RequestBody): SseFrame[] {
  const model = typeof body.model === "string" ? body.model : "unknown";
  const frame = (event: string, data: Record<string, unknown>): SseFrame => ({
    event,
    data: JSON.stringify({ type: event, ...data }),
  });
  return [
    frame("message_start", {
      message: {
        id: "msg_01BenchServerLayer0000000",
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 1200, output_tokens: 1 },
      },
    }),
    frame("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    ...Array.from({ length: DELTA_FRAMES }, (_, index) =>
      frame("content_block_delta", { index: 0, delta: { type: "text_delta", text: words[index % words.length] } }),
    ),
    frame("content_block_stop", { index: 0 }),
    frame("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 45 } }),
    frame("message_stop", {}),
  ];
}

const wire = (frame: SseFrame) => `event: ${frame.event}\ndata: ${frame.data}\n\n`;

export const sseEnded = (text: string) => text.endsWith(`event: message_stop\ndata: {"type":"message_stop"}\n\n`);

const sseHeaders = { "content-type": "text/event-stream", "cache-control": "no-cache" };

export interface ServerLayerHandle {
  url: string;
  close(): Promise<void>;
}

export async function startServerLayer(layer: ServerLayer): Promise<ServerLayerHandle> {
  if (layer === "fastify") return startFastify();
  if (layer === "hono") return startHono();
  return startNodeHttp();
}

async function startNodeHttp(): Promise<ServerLayerHandle> {
  const server = createServer({ keepAliveTimeout: 65_000 }, async (req, res) => {
    if (req.method !== "POST" || req.url !== "/v1/messages") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"type":"error"}');
      return;
    }
    let body: RequestBody;
    try {
      body = JSON.parse(await readBody(req)) as RequestBody;
    } catch {
      res.writeHead(400, { "content-type": "application/json" });
      res.end('{"type":"error"}');
      return;
    }
    if (body.stream === true) {
      res.writeHead(200, sseHeaders);
      for (const frame of sseFrames(body)) res.write(wire(frame));
      res.end();
      return;
    }
    const text = JSON.stringify(jsonReply(body));
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => closeServer(server) };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (part: Buffer) => chunks.push(part));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

async function startFastify(): Promise<ServerLayerHandle> {
  const app = Fastify({ logger: false, keepAliveTimeout: 65_000 });
  app.post("/v1/messages", async (request, reply) => {
    const body = request.body as RequestBody;
    if (body.stream === true) {
      return reply.headers(sseHeaders).send(Readable.from(sseFrames(body).map(wire)));
    }
    return jsonReply(body);
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
}

async function startHono(): Promise<ServerLayerHandle> {
  const app = new Hono();
  app.post("/v1/messages", async (c) => {
    const body = await c.req.json<RequestBody>();
    if (body.stream === true) {
      return streamSSE(c, async (stream) => {
        for (const frame of sseFrames(body)) await stream.writeSSE(frame);
      });
    }
    return c.json(jsonReply(body));
  });
  const server = await new Promise<Server>((resolve) => {
    const started = serve(
      { fetch: app.fetch, hostname: "127.0.0.1", port: 0, serverOptions: { keepAliveTimeout: 65_000 } },
      () => resolve(started as Server),
    );
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

export interface ChildServerLayer {
  layer: ServerLayer;
  url: string;
  pid: number;
  stop(): Promise<number | null>;
}

const script = fileURLToPath(import.meta.url);

/**
 * One server layer in its own process (through tsx, like the mock upstream), optionally pinned to a core with
 * `taskset -c`; taskset execs in place, so the pid is the server's own and /proc/pid gives its CPU.
 */
export async function startChildServerLayer(layer: ServerLayer, core?: number): Promise<ChildServerLayer> {
  const child = await startScript([script, `--layer=${layer}`], /server layer \S+ on (http:\/\/\S+)/, core);
  return { layer, url: child.baseUrl, pid: child.pid, stop: child.stop };
}

// Run as its own process: `--layer=node:http|fastify|hono`; prints its URL, stops on SIGTERM.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const argument = process.argv.find((value) => value.startsWith("--layer="))?.slice("--layer=".length);
  const layer = SERVER_LAYERS.find((name) => name === argument);
  if (layer === undefined) throw new Error(`--layer must be one of ${SERVER_LAYERS.join(", ")}`);
  const server = await startServerLayer(layer);
  process.stdout.write(`server layer ${layer} on ${server.url}\n`);
  process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
}
