import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { LOSSY_CODE_FAMILIES, LOSSY_CODES } from "./core/lossy.js";
import { REPAIR_ACTIONS } from "./repair/history.js";

/** Every lossy code and repair action a client can meet is listed, with its meaning, in the docs. */
const DOC = readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), "..", "docs", "repair-and-normalize.md"),
  "utf8",
);

/** The first column of the table under `heading`: the names it documents. */
function tableNames(heading: string): string[] {
  const start = DOC.indexOf(`${heading}\n`);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const rest = DOC.slice(start + heading.length + 1);
  const section = rest.slice(0, rest.search(/^#{2,3} /m) === -1 ? undefined : rest.search(/^#{2,3} /m));
  return [...section.matchAll(/^\| `([^`]+)` \| .+ \|$/gm)].map((match) => match[1]!);
}

describe("the docs list every code", () => {
  test("each lossy code, families included, once, with its meaning", () => {
    const documented = tableNames("## Lossy codes");
    expect([...documented].sort()).toEqual([...LOSSY_CODES, ...LOSSY_CODE_FAMILIES].sort());
  });

  test("each repair action, once, with its meaning", () => {
    const documented = tableNames("### Repair actions");
    expect([...documented].sort()).toEqual([...REPAIR_ACTIONS].sort());
  });
});
