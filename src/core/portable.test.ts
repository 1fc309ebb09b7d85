import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { decodeOriginSignature, encodeOriginSignature } from "./index.js";
import { base64ToUtf8, randomHex, utf8ToBase64 } from "./portable.js";

describe("portable base64 and ids (no Buffer, no node:crypto)", () => {
  test("base64 and base64url are Buffer's, for any text, astral characters included", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 200 }), (text) => {
        expect(utf8ToBase64(text)).toBe(Buffer.from(text, "utf8").toString("base64"));
        expect(utf8ToBase64(text, true)).toBe(Buffer.from(text, "utf8").toString("base64url"));
        expect(base64ToUtf8(utf8ToBase64(text))).toBe(text);
        expect(base64ToUtf8(utf8ToBase64(text, true))).toBe(text);
      }),
    );
  });

  test("decoding reads what it can, as Buffer does", () => {
    for (const damaged of ["eyJmIjoib3BlbmFpIn0", "eyJmIjoib3BlbmFpIn0=", "eyJm*Ijoi", "e", ""]) {
      expect(base64ToUtf8(damaged)).toBe(Buffer.from(damaged, "base64url").toString("utf8"));
    }
  });

  test("origin envelopes written before read the same", () => {
    const origin = {
      format: "openai" as const,
      provider: "deepseek",
      field: "reasoning_content" as const,
      model: "é🙂",
    };
    const legacy = `parley.v1.${Buffer.from(JSON.stringify({ f: "openai", p: "deepseek", r: "reasoning_content", m: "é🙂" })).toString("base64url")}`;
    expect(encodeOriginSignature(origin)).toBe(legacy);
    expect(decodeOriginSignature(legacy)).toEqual(origin);
  });

  test("random hex has the length asked for and differs between calls", () => {
    expect(randomHex(12)).toMatch(/^[0-9a-f]{24}$/);
    expect(randomHex(8)).not.toBe(randomHex(8));
  });
});
