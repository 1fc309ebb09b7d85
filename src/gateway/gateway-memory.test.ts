import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type Json, postJson } from "../../test/support/gateway-harness.js";

/**
 * A broken upstream cannot take the gateway's memory. The gateway runs as a child process with the default
 * limits (limits.maxAnswerBytes 64 MiB, limits.maxEventBytes 8 MiB, error bodies read for 64 KiB) in front of an
 * upstream that sends 200 MB where an answer should be: one endless SSE line (it peaked at 1.42 GB for a
 * gigabyte), a 200 MB whole answer (2.6 GB), a 200 MB error body (about 1 GB) and a 200 MB stream of valid
 * events. Its resident memory, sampled every 20 ms, must stay under RSS_BOUND_MB all along (docs/security.md).
 */
const RSS_BOUND_MB = 400;
const SENT_BYTES = 200 * 1024 * 1024;
const main = new URL("../cli/main.ts", import.meta.url).pathname;

let upstream: Server;
let gateway: ChildProcessWithoutNullStreams;
let url: string;

/** Writes `head`, then `piece` over and over until `total` bytes went out or the gateway hung up. */
function flood(res: ServerResponse, head: string, piece: Buffer, total = SENT_BYTES, tail = ""): void {
  let sent = res.write(head) ? Buffer.byteLength(head) : 0;
  const write = () => {
    while (sent < total) {
      sent += piece.length;
      if (!res.write(piece)) {
        res.once("drain", write);
        return;
      }
    }
    res.end(tail);
  };
  res.on("close", () => res.off("drain", write));
  write();
}

const frame = (content: string) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

const CASES: Record<string, (res: ServerResponse) => void> = {
  "endless-line": (res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    flood(res, "data: ", Buffer.alloc(1024 * 1024, "z"));
  },
  "huge-answer": (res) => {
    res.writeHead(200, { "content-type": "application/json" });
    flood(res, '{"id":"c","pad":"', Buffer.alloc(1024 * 1024, "x"), SENT_BYTES, '"}');
  },
  "huge-error": (res) => {
    res.writeHead(400, { "content-type": "application/json" });
    flood(res, '{"error":{"message":"too much","pad":"', Buffer.alloc(1024 * 1024, "e"), SENT_BYTES, '"}}');
  },
  "huge-stream": (res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    flood(res, frame("start"), Buffer.from(frame("y".repeat(64 * 1024)).repeat(16)));
  },
};

beforeAll(async () => {
  upstream = createServer((req: IncomingMessage, res: ServerResponse) => {
    // The gateway's model discovery (GET /models) finds nothing here; every case is a POST.
    if (req.method !== "POST") {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
      return;
    }
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => CASES[(JSON.parse(body) as { model: string }).model]!(res));
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  gateway = spawn(
    process.execPath,
    ["--import", "tsx", main, "serve", "--port", "0", "--store", "memory:", "--upstream", upstreamUrl],
    { env: { ...process.env, PARLEY_LOG_LEVEL: "silent" } },
  );
  let stdout = "";
  gateway.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const deadline = Date.now() + 20_000;
  while (!/parley listening on (\S+)/.test(stdout)) {
    if (Date.now() > deadline || gateway.exitCode !== null) throw new Error("the gateway did not start");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  url = /parley listening on (\S+)/.exec(stdout)![1]!;
}, 30_000);

afterAll(async () => {
  gateway?.kill("SIGKILL");
  upstream?.closeAllConnections();
  await new Promise<void>((resolve) => upstream?.close(() => resolve()));
});

function rssMegabytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

test("200 MB from a broken upstream, four ways: each a clear error, and the gateway's memory bounded", async () => {
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMegabytes(gateway.pid!));
  }, 20);
  const ask = (model: string, stream: boolean) =>
    postJson(`${url}/v1/messages`, { model, max_tokens: 16, stream, messages: [{ role: "user", content: "hi" }] });
  try {
    const endless = await ask("endless-line", true);
    expect(endless.status).toBe(502);
    expect((endless.body as Json).error.message).toContain("limits.maxEventBytes");

    const answer = await ask("huge-answer", false);
    expect(answer.status).toBe(502);
    expect((answer.body as Json).error.message).toContain("limits.maxAnswerBytes");

    const error = await ask("huge-error", false);
    expect(error.status).toBe(400);
    expect((error.body as Json).error.message).toContain("too much");

    const stream = await ask("huge-stream", true);
    expect(stream.status).toBe(200);
    expect(stream.text).toMatch(/event: error\ndata: .*limits\.maxAnswerBytes/);
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, rssMegabytes(gateway.pid!));
  expect(peak, `peak RSS ${Math.round(peak)} MB`).toBeLessThan(RSS_BOUND_MB);
  expect((await fetch(`${url}/health`)).status).toBe(200);
}, 120_000);
