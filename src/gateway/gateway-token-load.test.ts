import { request } from "undici";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type Json, postJson, startTestGateway } from "../../test/support/gateway-harness.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * Tokenizing must never stop the gateway: the inputs that froze it (a long run of one character took time
 * quadratic in its length, on the event loop: 160 KB of `Z` 13 s, 1 MiB of `=` 11 minutes, every route timing out
 * meanwhile) are sent to count_tokens and, streamed, to an upstream that reports no input count (the
 * `message_start` estimate), while `/health` is asked every 20 ms, each probe on its own schedule so that a stall
 * shows in every probe sent during it. 95% of them must answer within 100 ms and none may take a second (the
 * smallest case alone froze the gateway for 2.7 s): the margin is for a machine whose cores other work shares.
 * Traces are off: what this measures is tokenizing, not recording a megabyte-sized trace.
 */
let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: "c",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  upstream.fallback = () => ({ kind: "sse", frames: openaiFrames([chunk({ content: "ok" }), chunk({}, "stop")]) });
  gateway = await startTestGateway({
    providers: { local: { type: "openai", upstream } },
    file: { traces: { enabled: false } },
  });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const WORST_CASES = [
  ["=", 80 * 1024],
  ["Z", 160 * 1024],
  ["=", 1024 * 1024],
  [" ", 1024 * 1024],
] as const;

test("count_tokens and the message_start estimate on the worst inputs leave /health answering within 100 ms", async () => {
  // A first request outside the measure: connections and code paths warm, as on a gateway that has been up.
  await (await request(`${gateway.url}/health`)).body.dump();
  const latencies: number[] = [];
  const probes: Array<Promise<void>> = [];
  const probe = async () => {
    const sent = performance.now();
    const response = await request(`${gateway.url}/health`);
    await response.body.dump();
    latencies.push(performance.now() - sent);
  };
  const timer = setInterval(() => probes.push(probe()), 20);
  const started = performance.now();
  const counts = [];
  const streamed = [];
  for (const [character, length] of WORST_CASES) {
    const messages = [{ role: "user", content: character.repeat(length) }];
    counts.push(await postJson(`${gateway.url}/v1/messages/count_tokens`, { model: "m", messages }));
    streamed.push(await postJson(`${gateway.url}/v1/messages`, { model: "m", max_tokens: 16, stream: true, messages }));
  }
  const elapsed = performance.now() - started;
  clearInterval(timer);
  await Promise.all(probes);

  for (const reply of counts) {
    expect(reply.status).toBe(200);
    expect((reply.body as Json).input_tokens).toBeGreaterThan(0);
  }
  for (const reply of streamed) {
    expect(reply.status).toBe(200);
    expect(reply.text).toMatch(/"input_tokens":[1-9]/);
  }
  // The probes ran all along, not only after the work was done.
  expect(latencies.length).toBeGreaterThanOrEqual(Math.floor(elapsed / 40));
  const sorted = [...latencies].sort((a, b) => a - b);
  const p95 = sorted[Math.floor(sorted.length * 0.95)]!;
  expect({ p95: p95 < 100, max: sorted.at(-1)! < 1_000 }, `p95 ${p95} ms, max ${sorted.at(-1)} ms`).toEqual({
    p95: true,
    max: true,
  });
});
