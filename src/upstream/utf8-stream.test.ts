import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cutAt } from "../../test/support/cut.js";
import { Utf8Stream } from "./utf8-stream.js";

function decodeInParts(parts: Uint8Array[]): string {
  const stream = new Utf8Stream();
  return parts.map((part) => stream.write(part)).join("") + stream.end();
}

describe("Utf8Stream", () => {
  it("gives what TextDecoder gives for the whole input, for any bytes cut anywhere", () => {
    // Valid text with a BOM, multi-byte characters, and raw bytes (invalid and truncated sequences among them).
    const bytes = fc.oneof(
      fc
        .tuple(fc.boolean(), fc.string({ unit: "grapheme" }))
        .map(([bom, text]) => new Uint8Array(Buffer.from(`${bom ? "\ufeff" : ""}${text}`, "utf8"))),
      fc.uint8Array({ maxLength: 64 }),
      fc
        .array(fc.constantFrom(0xef, 0xbb, 0xbf, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xc3, 0x41, 0x80), {
          maxLength: 24,
        })
        .map((values) => new Uint8Array(values)),
    );
    fc.assert(
      fc.property(bytes, fc.array(fc.nat(), { maxLength: 8 }), (input, points) => {
        expect(decodeInParts(cutAt(input, points))).toBe(new TextDecoder().decode(input));
      }),
      { numRuns: 2000 },
    );
  });

  it("drops a byte order mark only at the start of the stream, even when it arrives a byte at a time", () => {
    const bytes = new Uint8Array(Buffer.from("\ufeffdata: a\ufeff\n\n", "utf8"));
    expect(decodeInParts(cutAt(bytes, [1, 2, 3]))).toBe("data: a\ufeff\n\n");
  });

  it("holds a character cut between two chunks until its last byte comes", () => {
    const stream = new Utf8Stream();
    const euro = Buffer.from("€", "utf8");
    expect(stream.write(euro.subarray(0, 2))).toBe("");
    expect(stream.write(euro.subarray(2))).toBe("€");
    expect(stream.write(euro.subarray(0, 1))).toBe("");
    expect(stream.end()).toBe("\ufffd");
  });
});
