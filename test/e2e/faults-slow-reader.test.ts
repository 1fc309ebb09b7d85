import { request as httpRequest, type IncomingMessage } from "node:http";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type ChildGateway, startChildGateway } from "../../bench/support/children.js";
import { readProcessStats } from "../../bench/support/process-stats.js";
import { parseSse } from "../../src/stream/sse.js";
import { postJson } from "../support/gateway-harness.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../support/scripted-upstream.js";

/**
 * Backpressure, measured from the outside: `parley serve` runs in its own process, a client reads a long
 * answer slowly, and the gateway's resident memory (from /proc) must not grow with the answer. A gateway that
 * buffered would read the whole upstream stream into memory while the client dawdles.
 */
const FRAMES = 12_000;
const FRAME_TEXT = 4_000;
const STREAM_BYTES = FRAMES * FRAME_TEXT;
const WARM_UP_FRAMES = 3_000;
const SLOW_PHASE_MS = 2_500;
const MB = 1024 * 1024;

let upstream: ScriptedUpstream;
let gateway: ChildGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  gateway = await startChildGateway({
    runner: "tsx",
    config: { providers: { up: { type: "openai", baseUrl: upstream.baseUrl } }, logLevel: "warn" },
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

function longAnswer(): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null, extra = {}) => ({
    id: "chatcmpl-long",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });
  const chunks = [chunk({ role: "assistant", content: "" }, null)];
  for (let index = 0; index < FRAMES; index++) {
    chunks.push(chunk({ content: `${String(index).padStart(8, "0")}${"x".repeat(FRAME_TEXT - 8)}` }, null));
  }
  chunks.push(
    chunk({}, "stop", { usage: { prompt_tokens: 10, completion_tokens: FRAMES, total_tokens: FRAMES + 10 } }),
  );
  return openaiFrames(chunks);
}

const body = JSON.stringify({
  model: "claude-sonnet-4-5",
  max_tokens: 64_000,
  stream: true,
  messages: [{ role: "user", content: "Write at length." }],
});

function openStream(url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}/v1/messages`,
      { method: "POST", headers: { "content-type": "application/json" } },
      resolve,
    );
    req.on("error", reject);
    req.end(body);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("a slow-reading client on a long stream: the gateway's memory stays flat and the answer arrives whole", async () => {
  // Warm the gateway up with a whole answer of a few MB read at full speed, so that its code is compiled and
  // its heap has grown to its working size before the baseline: what is left to see is buffering.
  const frames = longAnswer();
  upstream.enqueue({ kind: "sse", frames: [...frames.slice(0, WARM_UP_FRAMES), ...frames.slice(-2)] });
  const warm = await postJson(`${gateway.url}/v1/messages`, JSON.parse(body));
  expect(warm.status).toBe(200);
  expect(warm.text).toContain("event: message_stop");

  upstream.enqueue({ kind: "sse", frames });
  const baseline = readProcessStats(gateway.pid).rssBytes;
  const response = await openStream(gateway.url);
  expect(response.statusCode).toBe(200);

  // Slow phase: one chunk, then a pause, again and again.
  let received = 0;
  let text = "";
  let maxRss = baseline;
  const slowUntil = performance.now() + SLOW_PHASE_MS;
  while (performance.now() < slowUntil) {
    const chunk = response.read() as Buffer | null;
    if (chunk) {
      received += chunk.length;
      text += chunk.toString("latin1");
    }
    maxRss = Math.max(maxRss, readProcessStats(gateway.pid).rssBytes);
    await sleep(50);
  }
  const framesWrittenWhileSlow = upstream.requests.at(-1)!.framesWritten;

  // Then read the rest at full speed: nothing may be missing.
  await new Promise<void>((resolve, reject) => {
    response.on("data", (chunk: Buffer) => {
      received += chunk.length;
      text += chunk.toString("latin1");
    });
    response.on("end", resolve);
    response.on("error", reject);
  });

  const growth = maxRss - baseline;
  expect(received).toBeGreaterThan(STREAM_BYTES);
  expect(
    growth,
    `RSS grew by ${(growth / MB).toFixed(1)} MB for a ${(STREAM_BYTES / MB).toFixed(0)} MB stream`,
  ).toBeLessThan(STREAM_BYTES / 2); // buffering would hold the whole answer (more, as strings); heap churn on a busy machine reached 20 MB
  // The upstream was held back too: it could not push the whole answer while the client was slow.
  expect(framesWrittenWhileSlow).toBeLessThan(FRAMES / 2);
  const events = parseSse(text).map((event) => JSON.parse(event.data) as { type: string; delta?: { text?: string } });
  expect(events.at(-1)?.type).toBe("message_stop");
  const answer = events.map((event) => event.delta?.text ?? "").join("");
  expect(answer.length).toBe(STREAM_BYTES);
  expect(answer.endsWith(`${String(FRAMES - 1).padStart(8, "0")}${"x".repeat(FRAME_TEXT - 8)}`)).toBe(true);
  expect(upstream.requests.at(-1)!.aborted).toBe(false);
}, 60_000);
