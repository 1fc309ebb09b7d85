import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { postJson, postStream, startTestGateway } from "../../test/support/gateway-harness.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";

/** Traces are the gateway's own business: however their writing goes, the client gets the same answer. */

const folder = mkdtempSync(join(tmpdir(), "parley-trace-writer-"));
let upstream: ScriptedUpstream;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
});

afterAll(async () => {
  await upstream.close();
  rmSync(folder, { recursive: true, force: true });
});

const answer = {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "Done." }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};
const chunk = (delta: object, finish: string | null = null) => ({
  id: "c",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const question = { model: "m", max_tokens: 20, messages: [{ role: "user", content: "Hi" }] };

async function metric(url: string, line: RegExp): Promise<string | undefined> {
  const response = await request(`${url}/metrics`);
  return line.exec(await response.body.text())?.[1];
}

describe("the trace writer and the client", () => {
  test("a trace that cannot be written changes nothing the client receives, and is counted", async () => {
    const path = join(folder, "broken.db");
    const broken = await startTestGateway({
      providers: { up: { type: "openai", upstream } },
      file: { store: `sqlite:${path}` },
    });
    const untraced = await startTestGateway({
      providers: { up: { type: "openai", upstream } },
      file: { traces: { enabled: false } },
    });
    try {
      // The trace tables are gone from under the writer: every write of a trace fails.
      const other = new Database(path);
      other.exec("DROP TABLE trace_chunks");
      other.close();
      for (let gateway = 0; gateway < 2; gateway++) upstream.enqueue({ kind: "json", body: answer });
      const [failing, plain] = [
        await postJson(`${broken.url}/v1/messages`, question),
        await postJson(`${untraced.url}/v1/messages`, question),
      ];
      expect(failing.status).toBe(200);
      expect(failing.text).toBe(plain.text);
      for (let gateway = 0; gateway < 2; gateway++) {
        upstream.enqueue({
          kind: "sse",
          frames: openaiFrames([chunk({ content: "Do" }), chunk({ content: "ne." }), chunk({}, "stop")]),
        });
      }
      const streamed = await postStream(`${broken.url}/v1/messages`, { ...question, stream: true });
      const plainStream = await postStream(`${untraced.url}/v1/messages`, { ...question, stream: true });
      expect(streamed.status).toBe(200);
      expect(streamed.text.replace(/msg_\w+/g, "msg")).toBe(plainStream.text.replace(/msg_\w+/g, "msg"));
      let failed: string | undefined;
      for (let attempt = 0; attempt < 100 && failed !== "2"; attempt++) {
        failed = await metric(broken.url, /^parley_traces_dropped_total\{reason="write_failed"\} (\d+)$/m);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(failed).toBe("2");
      expect(await metric(broken.url, /^parley_traces_recorded_total (\d+)$/m)).toBe("0");
      expect(await metric(untraced.url, /^parley_traces_recorded_total (\d+)$/m)).toBe("0");
    } finally {
      await broken.close();
      await untraced.close();
    }
  });

  test("traces.maxBytes bounds what the store keeps, the oldest going first", async () => {
    const gateway = await startTestGateway({
      providers: { up: { type: "openai", upstream } },
      file: { traces: { maxBytes: 150_000 } },
    });
    try {
      for (let index = 0; index < 30; index++) {
        upstream.enqueue({ kind: "json", body: answer });
        const content = `${index} ${randomBytes(9_000).toString("base64")}`;
        expect(
          (await postJson(`${gateway.url}/v1/messages`, { ...question, messages: [{ role: "user", content }] })).status,
        ).toBe(200);
      }
      const store = gateway.state.store!;
      for (let attempt = 0; attempt < 100 && store.traces.stats().recorded < 30; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(store.traces.stats()).toMatchObject({ recorded: 30, dropped: 0, failed: 0 });
      const usage = await store.traces.usage();
      expect(usage.bytes).toBeLessThanOrEqual(150_000);
      expect(usage.traces).toBeLessThan(30);
      const kept = (await store.traces.list({ limit: 30 })).traces;
      const newest = await store.traces.get(kept[0]!.id);
      expect(JSON.parse(newest!.clientRequest!).messages[0].content).toMatch(/^29 /);
    } finally {
      await gateway.close();
    }
  });
});
