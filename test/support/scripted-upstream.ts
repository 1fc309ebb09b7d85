import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type StrictServer, strictServerFor, unknownFields } from "./strict-servers.js";

/** What the scripted upstream answers to one request. */
export type ScriptedReply =
  | { kind: "json"; body: unknown; status?: number; headers?: Record<string, string>; delayMs?: number }
  | {
      kind: "sse";
      /** Whole SSE frames (each ending in a blank line), written one by one. */
      frames: string[];
      frameDelayMs?: number;
      /** Waits this long before the status line and headers (a long prefill before the first byte). */
      headersDelayMs?: number;
      status?: number;
      headers?: Record<string, string>;
      /** Destroys the socket after this many frames (a connection lost mid-stream). */
      destroyAfterFrames?: number;
      /** Stops writing, without closing, after this many frames (a stalled upstream). */
      stallAfterFrames?: number;
    }
  | {
      kind: "error";
      status: number;
      body: unknown;
      retryAfter?: string;
      headers?: Record<string, string>;
      delayMs?: number;
    }
  /** Destroys the socket without answering. */
  | { kind: "destroy" }
  /** Never answers. */
  | { kind: "stall" };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: unknown;
  /** True once the caller closed the connection before the reply was complete. */
  aborted: boolean;
  /** SSE frames written so far (fully flushed or queued in the socket). */
  framesWritten: number;
  /** The caller's port: equal ports across requests mean a reused (kept-alive) connection. */
  remotePort: number | undefined;
}

export interface ScriptedUpstream {
  /** Base URL as a provider is configured with it: `.../v1` for OpenAI-compatible, the origin for Anthropic. */
  baseUrl: string;
  origin: string;
  /**
   * Requests to the API endpoint (`POST /v1/chat/completions`, `POST /v1/messages[/count_tokens]`,
   * `POST /v1/responses[/compact]`).
   */
  requests: RecordedRequest[];
  /**
   * The real server this one stands for: a request with a field it does not know is refused with its 400, as the
   * real one does, before any scripted reply is used. By default the strict server of its kind (an
   * OpenAI-compatible reasoning server, Anthropic); the test gateway sets the one of the provider's preset;
   * undefined: a server that ignores what it does not know.
   */
  server: StrictServer | undefined;
  /** Every other request (the gateway asking `GET /v1/models`, a server's own info endpoints). */
  otherRequests: RecordedRequest[];
  /**
   * Answers requests other than the API endpoint (model lists, info endpoints); undefined, or a call that returns
   * undefined, answers 404 as a server without that endpoint does.
   */
  otherRoutes: ((request: RecordedRequest) => ScriptedReply | undefined) | undefined;
  /** Replies used in order, one per request; when none is left, `fallback` answers. */
  enqueue(...replies: ScriptedReply[]): void;
  fallback: ((request: RecordedRequest) => ScriptedReply) | undefined;
  /** Resolves when a request has been aborted by the caller (or after `ms`, with false). */
  waitForAbort(ms: number): Promise<boolean>;
  close(): Promise<void>;
}

export type UpstreamKind = "openai" | "anthropic" | "openai-responses" | "gemini";

const PATHS: Record<UpstreamKind, string> = {
  openai: "/v1/chat/completions",
  anthropic: "/v1/messages",
  "openai-responses": "/v1/responses",
  gemini: "/v1beta/models/{model}:generateContent",
};

/** Gemini's model methods: the model in the path, the method after a colon. */
const GEMINI_METHOD = /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent|countTokens)$/;

/**
 * An OpenAI-compatible (`POST /v1/chat/completions`), Anthropic (`POST /v1/messages`) or Responses
 * (`POST /v1/responses`) server on 127.0.0.1 with a random port, replaying scripted replies and recording every
 * request it receives.
 */
export async function startScriptedUpstream(kind: UpstreamKind): Promise<ScriptedUpstream> {
  const queue: ScriptedReply[] = [];
  const requests: RecordedRequest[] = [];
  const abortWaiters: Array<() => void> = [];
  const sockets = new Set<import("node:net").Socket>();
  const expectedPath = PATHS[kind];

  const upstream: ScriptedUpstream = {
    baseUrl: "",
    origin: "",
    requests,
    // Gemini's refusals are its own module's (`gemini-server.ts`), set as the fallback.
    server: kind === "gemini" ? undefined : strictServerFor(kind, undefined),
    otherRequests: [],
    otherRoutes: undefined,
    enqueue: (...replies) => queue.push(...replies),
    fallback: undefined,
    waitForAbort: (ms) =>
      new Promise((resolve) => {
        if (requests.some((request) => request.aborted)) return resolve(true);
        const timer = setTimeout(() => resolve(false), ms);
        abortWaiters.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = createServer(async (req, res) => {
    const rawBody = await readAll(req);
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
    const recorded: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      rawBody,
      body,
      aborted: false,
      framesWritten: 0,
      remotePort: req.socket.remotePort,
    };
    const path = (req.url ?? "").split("?")[0];
    const isApi =
      req.method === "POST" &&
      (path === expectedPath ||
        (kind === "anthropic" && path === `${expectedPath}/count_tokens`) ||
        (kind === "openai-responses" && path === `${expectedPath}/compact`) ||
        (kind === "gemini" && GEMINI_METHOD.test(path ?? "")));
    (isApi ? requests : upstream.otherRequests).push(recorded);
    res.on("close", () => {
      if (res.writableFinished) return;
      recorded.aborted = true;
      for (const wake of abortWaiters.splice(0)) wake();
    });
    if (!isApi) {
      const other = upstream.otherRoutes?.(recorded);
      if (other !== undefined) {
        await play(other, res, recorded);
        return;
      }
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
      return;
    }
    const unknown = upstream.server === undefined ? [] : unknownFields(upstream.server, body);
    if (upstream.server !== undefined && unknown.length > 0) {
      await play(upstream.server.refuse(unknown), res, recorded);
      return;
    }
    const reply = queue.shift() ?? upstream.fallback?.(recorded);
    if (reply === undefined) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "scripted upstream: no reply queued" } }));
      return;
    }
    await play(reply, res, recorded);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  upstream.origin = `http://127.0.0.1:${port}`;
  upstream.baseUrl = kind === "anthropic" || kind === "gemini" ? upstream.origin : `${upstream.origin}/v1`;
  return upstream;
}

async function play(reply: ScriptedReply, res: ServerResponse, recorded: RecordedRequest): Promise<void> {
  switch (reply.kind) {
    case "json": {
      if (reply.delayMs) await delay(reply.delayMs);
      const text = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
      res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
      res.end(text);
      return;
    }
    case "error": {
      if (reply.delayMs) await delay(reply.delayMs);
      if (recorded.aborted) return;
      const headers: Record<string, string> = { "content-type": "application/json", ...reply.headers };
      if (reply.retryAfter !== undefined) headers["retry-after"] = reply.retryAfter;
      res.writeHead(reply.status, headers);
      res.end(typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body));
      return;
    }
    case "destroy":
      res.socket?.destroy();
      return;
    case "stall":
      return;
    case "sse": {
      if (reply.headersDelayMs) await delay(reply.headersDelayMs);
      if (recorded.aborted || res.destroyed) return;
      res.writeHead(reply.status ?? 200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        ...reply.headers,
      });
      res.flushHeaders();
      for (const frame of reply.frames) {
        if (recorded.aborted || res.destroyed) return;
        if (reply.destroyAfterFrames !== undefined && recorded.framesWritten >= reply.destroyAfterFrames) {
          res.socket?.destroy();
          return;
        }
        if (reply.stallAfterFrames !== undefined && recorded.framesWritten >= reply.stallAfterFrames) return;
        if (reply.frameDelayMs) await delay(reply.frameDelayMs);
        const flushed = res.write(frame);
        recorded.framesWritten++;
        // Honour backpressure like a real server: a slow reader slows the writer.
        if (!flushed) await drainedOrClosed(res);
      }
      res.end();
      return;
    }
  }
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done).off("close", done);
      resolve();
    };
    res.on("drain", done).on("close", done);
  });
}

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The frames of a recorded `.sse` file, split at blank lines, each ending in `\n\n`. */
export function framesFromSseFile(path: string): string[] {
  return framesFromSseText(readFileSync(path, "utf8"));
}

export function framesFromSseText(text: string): string[] {
  return text
    .replace(/\r\n/g, "\n")
    .split(/\n\n+/)
    .filter((frame) => frame.trim() !== "")
    .map((frame) => `${frame}\n\n`);
}

/**
 * Frames from a `.chunks.jsonl` file (one event JSON per line, framing stripped): OpenAI chunks become
 * `data:` frames ending in `[DONE]`, Anthropic and Responses events get their `event:` line back from their `type`.
 */
export function framesFromChunksFile(path: string, kind: UpstreamKind): string[] {
  const lines = readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
  if (kind === "openai") return [...lines.map((line) => `data: ${line}\n\n`), "data: [DONE]\n\n"];
  return lines.map((line) => `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`);
}

/** OpenAI chunks as frames, `[DONE]` last. */
export function openaiFrames(chunks: unknown[]): string[] {
  return [...chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`), "data: [DONE]\n\n"];
}

/** Anthropic events as frames. */
export function anthropicFrames(events: Array<{ type: string }>): string[] {
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
}
