import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Json, postJson, postStream, startTestGateway } from "../../test/support/gateway-harness.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/** Every exchange is recorded: both sides of it, the repair and lossy reports, timings, and no key anywhere. */

const CLIENT_KEY = "client-secret-key-123";
const UPSTREAM_KEY = "nvapi-upstream-secret-456";

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  gateway = await startTestGateway({
    providers: { nim: { type: "openai", upstream, apiKey: UPSTREAM_KEY } },
    apiKeys: [CLIENT_KEY],
  });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const chunk = (delta: object, finish: string | null = null) => ({
  id: "c",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

// An interrupted tool call (no result before the user spoke again): repair must add one.
const interrupted = [
  { role: "user", content: "Run it." },
  { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } }] },
  { role: "user", content: `Never mind. My key is ${CLIENT_KEY}.` },
];

async function newestTrace(): Promise<Json> {
  // Traces are written after the answer, without holding it up.
  for (let attempt = 0; attempt < 50; attempt++) {
    const [summary] = (await gateway.state.store!.traces.list({ limit: 1 })).traces;
    if (summary !== undefined && summary.requestId === lastRequestId)
      return gateway.state.store!.traces.get(summary.id);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("no trace recorded");
}

let lastRequestId = "";

describe("traces of gateway exchanges", () => {
  test("a whole answer: both sides as sent, both models, the repair report, timings, keys redacted", async () => {
    upstream.enqueue({
      kind: "json",
      body: {
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: "Stopped." }, finish_reason: "stop" }],
        usage: { prompt_tokens: 30, completion_tokens: 2, total_tokens: 32 },
      },
    });
    // Spacing and a number a parse would rewrite: the trace keeps the text as it came.
    const sent = ` {"model": "m",  "max_tokens": 50.0, "messages": ${JSON.stringify(interrupted)}}`;
    const reply = await postJson(`${gateway.url}/v1/messages`, sent, { "x-api-key": CLIENT_KEY });
    expect(reply.status).toBe(200);
    lastRequestId = String(reply.headers["request-id"] ?? reply.headers["x-request-id"]);
    const trace = await newestTrace();
    expect(trace.route).toBe("POST /v1/messages");
    expect(trace.provider).toBe("nim");
    expect(trace.clientModel).toBe("m");
    expect(trace.upstreamModel).toBe("m");
    expect(trace.status).toBe(200);
    expect(trace.stream).toBe(false);
    expect(trace.inputTokens).toBe(30);
    expect(trace.outputTokens).toBe(2);
    expect(trace.durationMs).toBeGreaterThan(0);
    expect(trace.clientRequest).toBe(sent.replace(CLIENT_KEY, "[redacted]"));
    expect(trace.upstreamRequest).toBe(upstream.requests.at(-1)!.rawBody.replace(CLIENT_KEY, "[redacted]"));
    expect(trace.clientResponse).toBe(reply.text);
    expect(JSON.parse(trace.upstreamRequest).messages.map((message: Json) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "user",
    ]);
    expect(trace.upstreamResponse).toContain("Stopped.");
    expect(trace.clientResponse).toContain("Stopped.");
    expect(trace.repair).toEqual([expect.objectContaining({ messageIndex: expect.any(Number) })]);
    expect(trace.timings.totalMs).toBeGreaterThan(0);
    const text = JSON.stringify(trace);
    expect(text).not.toContain(CLIENT_KEY);
    expect(text).not.toContain(UPSTREAM_KEY);
    expect(text).toContain("My key is [redacted]");
  });

  test("a stream: the raw upstream stream and the client's events are recorded", async () => {
    upstream.enqueue({
      kind: "sse",
      frames: openaiFrames([chunk({ content: "Hel" }), chunk({ content: "lo" }), chunk({}, "stop")]),
    });
    const reply = await postStream(
      `${gateway.url}/v1/messages`,
      { model: "m", max_tokens: 50, stream: true, messages: [{ role: "user", content: "Hi" }] },
      { authorization: `Bearer ${CLIENT_KEY}` },
    );
    expect(reply.status).toBe(200);
    lastRequestId = String(reply.headers["request-id"] ?? reply.headers["x-request-id"]);
    const trace = await newestTrace();
    expect(trace.upstreamResponse).toContain('"content":"Hel"');
    expect(trace.upstreamResponse).toContain("data: [DONE]");
    expect(trace.clientResponse).toContain("event: message_stop");
    expect(trace.timings.firstTokenMs).toBeGreaterThan(0);
    // Each piece's offset in the traced text and when it came: the inspector shows the events' timing.
    for (const side of ["upstreamResponse", "clientResponse"]) {
      const marks: number[] = trace.arrivals[side];
      expect(marks.length).toBeGreaterThanOrEqual(2);
      expect(marks[0]).toBe(0);
      // Times to a tenth of a millisecond, as the inspector shows them.
      for (let index = 1; index < marks.length; index += 2)
        expect(Math.round(marks[index]! * 10) / 10).toBe(marks[index]);
      for (let index = 2; index < marks.length; index += 2) {
        expect(marks[index]).toBeGreaterThan(marks[index - 2]!);
        expect(marks[index + 1]).toBeGreaterThanOrEqual(marks[index - 1]!);
        expect(marks[index]).toBeLessThan(trace[side].length);
      }
    }
    expect(JSON.stringify(trace)).not.toContain(CLIENT_KEY);
  });

  test("a Responses exchange is traced as the others are: the body text, both sides, the tenant", async () => {
    upstream.enqueue({
      kind: "sse",
      frames: openaiFrames([chunk({ content: "Hel" }), chunk({ content: "lo" }), chunk({}, "stop")]),
    });
    const sent = ` {"model": "m",  "input": "Hi", "max_output_tokens": 50.0, "stream": true}`;
    const streamed = await postStream(`${gateway.url}/v1/responses`, sent, { authorization: `Bearer ${CLIENT_KEY}` });
    expect(streamed.status).toBe(200);
    lastRequestId = String(streamed.headers["request-id"] ?? streamed.headers["x-request-id"]);
    const trace = await newestTrace();
    expect(trace.route).toBe("POST /v1/responses");
    expect(trace.stream).toBe(true);
    expect(trace.tenant).toMatch(/^key-[0-9a-f]{32}$/);
    expect(trace.clientRequest).toBe(sent);
    expect(trace.upstreamRequest).toBe(upstream.requests.at(-1)!.rawBody);
    expect(JSON.parse(trace.upstreamRequest).messages).toEqual([{ role: "user", content: "Hi" }]);
    expect(trace.upstreamResponse).toContain('"content":"Hel"');
    expect(trace.clientResponse).toContain("event: response.completed");
    expect(trace.clientResponse).toContain('"delta":"lo"');

    upstream.enqueue({
      kind: "json",
      body: {
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: "Whole." }, finish_reason: "stop" }],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      },
    });
    const whole = await postJson(
      `${gateway.url}/v1/responses`,
      { model: "m", input: "Hi" },
      { "x-api-key": CLIENT_KEY },
    );
    expect(whole.status).toBe(200);
    lastRequestId = String(whole.headers["request-id"] ?? whole.headers["x-request-id"]);
    const wholeTrace = await newestTrace();
    expect(wholeTrace.stream).toBe(false);
    expect(wholeTrace.upstreamResponse).toContain("Whole.");
    expect(wholeTrace.clientResponse).toBe(whole.text);
    expect(JSON.parse(wholeTrace.clientResponse).object).toBe("response");
    expect(JSON.stringify(trace) + JSON.stringify(wholeTrace)).not.toContain(CLIENT_KEY);
  });

  test("a stream's trace says what the answer could not carry to the client", async () => {
    const call = { index: 0, id: "call_1", type: "function", function: { name: "Bash", arguments: "{not json" } };
    upstream.enqueue({
      kind: "sse",
      frames: openaiFrames([chunk({ tool_calls: [call] }), chunk({}, "tool_calls")]),
    });
    const reply = await postStream(
      `${gateway.url}/v1/messages`,
      { model: "m", max_tokens: 50, stream: true, messages: [{ role: "user", content: "Run it" }] },
      { "x-api-key": CLIENT_KEY },
    );
    expect(reply.status).toBe(200);
    lastRequestId = String(reply.headers["request-id"] ?? reply.headers["x-request-id"]);
    const trace = await newestTrace();
    expect(trace.lossy).toContainEqual(
      expect.objectContaining({ code: "tool-arguments-repaired", path: "message.content[0]" }),
    );
  });

  test("an upstream stream error that echoes the keys reaches the client redacted, before and after content", async () => {
    const echo = { error: { message: `bad key ${UPSTREAM_KEY} for ${CLIENT_KEY}`, type: "invalid_request_error" } };
    const body = { model: "m", max_tokens: 50, stream: true, messages: [{ role: "user", content: "Hi" }] };
    const auth = { "x-api-key": CLIENT_KEY };
    // Before any content: an error status.
    upstream.enqueue({ kind: "sse", frames: openaiFrames([echo]) });
    const early = await postStream(`${gateway.url}/v1/messages`, body, auth);
    expect(early.status).toBe(400);
    // After content: an error event, on the Anthropic route and on the OpenAI one.
    for (const path of ["/v1/messages", "/v1/chat/completions"]) {
      upstream.enqueue({ kind: "sse", frames: openaiFrames([chunk({ content: "Hel" }), echo]) });
      const late = await postStream(`${gateway.url}${path}`, body, auth);
      expect(late.status).toBe(200);
      expect(late.text).toContain("bad key [redacted] for [redacted]");
      expect(late.text).not.toContain(UPSTREAM_KEY);
      expect(late.text).not.toContain(CLIENT_KEY);
    }
    expect(early.text).toContain("bad key [redacted]");
    expect(early.text).not.toContain(UPSTREAM_KEY);
    expect(early.text).not.toContain(CLIENT_KEY);
  });
  test("a stream that fails after its 200 is recorded as failed, and the inspector's failed filter finds it", async () => {
    const body = { model: "m", max_tokens: 50, stream: true, messages: [{ role: "user", content: "Hi" }] };
    const auth = { "x-api-key": CLIENT_KEY };
    const overloaded = { error: { message: "overloaded mid-answer", type: "overloaded_error" } };
    upstream.enqueue({ kind: "sse", frames: openaiFrames([chunk({ content: "Hel" }), overloaded]) });
    const late = await postStream(`${gateway.url}/v1/messages`, body, auth);
    expect(late.status).toBe(200);
    expect(late.text).toContain("event: error");
    const requestId = late.headers["request-id"] ?? late.headers["x-request-id"];
    let failed: Json[] = [];
    for (let attempt = 0; attempt < 50 && failed.length === 0; attempt++) {
      const listed = await fetch(`${gateway.url}/inspect/api/traces?status=error&limit=200`, { headers: auth });
      failed = ((await listed.json()) as Json).traces.filter((trace: Json) => trace.requestId === requestId);
      if (failed.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(failed).toHaveLength(1);
    expect(failed[0].status).toBeGreaterThanOrEqual(500);
  });
});
