import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { cutAt } from "../../../test/support/cut.js";
import type { StreamEvent } from "../../core/index.js";
import { formatAdapter } from "../../formats/registry.js";
import { upstreamEventBatches } from "./upstream-events.js";

const frame = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c1", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

const frames = [
  frame({ role: "assistant", content: "<think>用户" }),
  frame({ content: "用中文说" }),
  frame({ content: "</think>" }),
  frame({ content: "\n\n" }),
  frame({ content: "你好" }),
  frame({ content: " 👋" }),
  frame({}, "stop"),
  "data: [DONE]\n\n",
];

async function* body(chunks: Array<string | Uint8Array>): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) yield typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
}

async function collect(chunks: Array<string | Uint8Array>, onChunk?: (text: string) => void): Promise<StreamEvent[][]> {
  const batches: StreamEvent[][] = [];
  const iterator = upstreamEventBatches(body(chunks), formatAdapter("openai").upstream.streamDecoder(), onChunk);
  for (;;) {
    const result = await iterator.next();
    if (result.done) return batches;
    batches.push(result.value);
  }
}

const deltas = (batches: StreamEvent[][]) =>
  batches
    .flat()
    .flatMap((event) =>
      event.type === "text-delta"
        ? [`text:${event.text}`]
        : event.type === "thinking-delta"
          ? [`thinking:${event.thinking}`]
          : [],
    );

/** The answer's thinking and text, however the deltas were cut. */
const answerText = (batches: StreamEvent[][]) => {
  const all = batches.flat();
  return {
    thinking: all.map((event) => (event.type === "thinking-delta" ? event.thinking : "")).join(""),
    text: all.map((event) => (event.type === "text-delta" ? event.text : "")).join(""),
  };
};

describe("upstream event batches", () => {
  test("the deltas of one read leave as one delta per block", async () => {
    const batches = await collect([frames.join("")]);
    expect(batches).toHaveLength(1);
    expect(deltas(batches)).toEqual(["thinking:用户用中文说", "text:\n\n你好 👋"]);
  });

  test("deltas of separate reads stay separate, and give the same text", async () => {
    const batches = await collect(frames);
    // Whitespace alone opens no text block: it waits for the text it stands in front of.
    expect(deltas(batches)).toEqual(["thinking:用户", "thinking:用中文说", "text:\n\n你好", "text: 👋"]);
  });

  test("bytes cut anywhere, mid-character included, give the same text to the trace and the same answer", async () => {
    const bytes = new TextEncoder().encode(frames.join(""));
    const whole = answerText(await collect([bytes]));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 40 }), async (cuts) => {
        let traced = "";
        const batches = await collect(cutAt(bytes, cuts), (text) => {
          traced += text;
        });
        expect(traced).toBe(frames.join(""));
        expect(answerText(batches)).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  test("a byte order mark before the first event is not part of the stream, and a cut last character ends as U+FFFD", async () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
    const text = new TextEncoder().encode(`${frames.slice(0, 2).join("")}data: x\n\n`);
    let traced = "";
    const batches = await collect(
      [bom.subarray(0, 1), bom.subarray(1), text, new Uint8Array([0xe4, 0xbd])],
      (chunk) => {
        traced += chunk;
      },
    );
    expect(traced).toBe(`${frames.slice(0, 2).join("")}data: x\n\n\ufffd`);
    expect(deltas(batches)).toEqual(["thinking:用户用中文说"]);
  });
});

describe("an upstream that sends nothing but keep-alive comments", () => {
  async function* commentsEvery(ms: number, count: number): AsyncGenerator<Uint8Array> {
    yield new TextEncoder().encode(frame({ role: "assistant", content: "" }));
    for (let index = 0; index < count; index++) {
      await new Promise((resolve) => setTimeout(resolve, ms));
      yield new TextEncoder().encode(": keep-alive\n\n");
    }
  }

  test("ends with a timeout once no message has come for the quiet limit, comments or not", async () => {
    const decoder = formatAdapter("openai").upstream.streamDecoder();
    const iterator = upstreamEventBatches(commentsEvery(20, 50), decoder, undefined, undefined, 100);
    await iterator.next();
    const started = performance.now();
    await expect(iterator.next()).rejects.toMatchObject({ type: "timeout_error" });
    expect(performance.now() - started).toBeLessThan(500);
  });

  test("comments between messages within the limit change nothing", async () => {
    const chunks = [frames[0]!, ": keep-alive\n\n", ...frames.slice(1)];
    const iterator = upstreamEventBatches(
      body(chunks),
      formatAdapter("openai").upstream.streamDecoder(),
      undefined,
      undefined,
      10_000,
    );
    const batches: StreamEvent[][] = [];
    for (let result = await iterator.next(); !result.done; result = await iterator.next()) batches.push(result.value);
    expect(deltas(batches)).toEqual(deltas(await collect(frames)));
  });
});
