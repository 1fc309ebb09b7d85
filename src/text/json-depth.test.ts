import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { jsonNestsDeeperThan } from "./json-depth.js";

/** The depth JSON.parse's value has, walked without recursion. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== "object") continue;
    deepest = Math.max(deepest, depth + 1);
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return deepest;
}

describe("jsonNestsDeeperThan", () => {
  test("agrees with the parsed value's depth, brackets, quotes and escapes inside strings aside", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 8 }), (value, max) => {
        const text = JSON.stringify(value);
        if (text === undefined) return;
        const deeper = depthOf(JSON.parse(text)) > max;
        // Below `max` characters nothing is scanned: that text cannot be deeper.
        expect(jsonNestsDeeperThan(text, max)).toBe(text.length > max && deeper);
      }),
      { numRuns: 500 },
    );
  });

  test("strings full of brackets, escaped quotes and backslashes count for nothing", () => {
    const tricky = JSON.stringify({ text: `${"[{".repeat(600)}\\"]}\\\\` });
    expect(jsonNestsDeeperThan(tricky, 512)).toBe(false);
    expect(jsonNestsDeeperThan(`[${JSON.stringify('\\"[[')}${"[".repeat(512)}${"]".repeat(513)}`, 512)).toBe(true);
    expect(jsonNestsDeeperThan(`${"[".repeat(512)}${"]".repeat(512)}`, 512)).toBe(false);
  });
});
