import { describe, expect, test } from "vitest";
import { parseRawHeaders, UpstreamBody } from "./response.js";

function body() {
  const calls = { resumed: 0, aborted: [] as Error[] };
  const upstream = new UpstreamBody(
    () => calls.resumed++,
    (reason) => calls.aborted.push(reason),
  );
  return { upstream, calls };
}

const kib = (count: number) => Buffer.alloc(count * 1024, 0x61);

describe("UpstreamBody", () => {
  test("pauses the socket once the reader is 64 KiB behind and resumes it when the reader catches up", async () => {
    const { upstream, calls } = body();
    expect(upstream.push(kib(32))).toBe(true);
    expect(upstream.push(kib(31))).toBe(true);
    // 64 KiB queued: the handler is told to pause.
    expect(upstream.push(kib(1))).toBe(false);
    expect(calls.resumed).toBe(0);
    const iterator = upstream[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toHaveLength(32 * 1024);
    expect(calls.resumed).toBe(1);
    upstream.end();
    const sizes: number[] = [];
    for (let result = await iterator.next(); !result.done; result = await iterator.next()) {
      sizes.push(result.value.length);
    }
    expect(sizes).toEqual([31 * 1024, 1024]);
  });

  test("a waiting reader gets each chunk as it arrives, then the end", async () => {
    const { upstream } = body();
    const iterator = upstream[Symbol.asyncIterator]();
    const first = iterator.next();
    expect(upstream.push(Buffer.from("data: 1\n\n"))).toBe(true);
    expect(Buffer.from((await first).value!).toString()).toBe("data: 1\n\n");
    const second = iterator.next();
    upstream.end();
    expect(await second).toEqual({ value: undefined, done: true });
  });

  test("text() gathers every chunk whatever its size, with UTF-8 split across chunks", async () => {
    const { upstream, calls } = body();
    const euro = Buffer.from("€");
    expect(upstream.push(Buffer.concat([kib(70), euro.subarray(0, 1)]))).toBe(false);
    const text = upstream.text();
    expect(calls.resumed).toBe(1);
    expect(upstream.push(euro.subarray(1))).toBe(true);
    upstream.end();
    expect(await text).toBe(`${"a".repeat(70 * 1024)}€`);
  });

  test("a failure mid-body reaches the reader; a body is read only once", async () => {
    const { upstream } = body();
    const text = upstream.text();
    upstream.fail(new Error("socket hang up"));
    await expect(text).rejects.toThrow("socket hang up");
    expect(() => upstream.text()).toThrow("already been read");
  });

  test("a reader that stops early aborts the request", async () => {
    const { upstream, calls } = body();
    upstream.push(Buffer.from("data: 1\n\n"));
    for await (const chunk of upstream) {
      expect(chunk.length).toBeGreaterThan(0);
      break;
    }
    expect(calls.aborted).toHaveLength(1);
    // Chunks still in flight after the abort are dropped, not queued.
    expect(upstream.push(kib(100))).toBe(true);
  });
});

describe("parseRawHeaders", () => {
  test("lower-cases names, keeps repeats as arrays and treats __proto__ as a plain header", () => {
    const raw = ["Content-Type", "text/event-stream", "Set-Cookie", "a=1", "set-cookie", "b=2", "__proto__", "x"].map(
      (text) => Buffer.from(text, "latin1"),
    );
    const headers = parseRawHeaders(raw);
    expect(headers["content-type"]).toBe("text/event-stream");
    expect(headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    expect(Object.getPrototypeOf(headers)).toBe(null);
    expect(Object.getOwnPropertyDescriptor(headers, "__proto__")?.value).toBe("x");
  });
});
