import { describe, expect, test } from "vitest";
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

async function* body(chunks: string[]): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) yield new TextEncoder().encode(chunk);
}

async function collect(chunks: string[]): Promise<StreamEvent[][]> {
  const batches: StreamEvent[][] = [];
  const iterator = upstreamEventBatches(body(chunks), formatAdapter("openai").upstream.streamDecoder());
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
});
