import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

/**
 * The folder architecture, read from the import graph so that it cannot rot: the gateway, the CLI and repair
 * reach a format only through the adapter interface and the registry; each format's folder keeps to itself;
 * and nothing in a lower folder imports a higher one.
 */
const SRC = dirname(fileURLToPath(import.meta.url));

interface Edge {
  from: string;
  to: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Every relative import and re-export, as paths under src/ (`formats/anthropic/to-core.ts`). */
function importEdges(): Edge[] {
  const edges: Edge[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm;
  for (const file of sourceFiles(SRC)) {
    const from = relative(SRC, file).split("\\").join("/");
    for (const match of readFileSync(file, "utf8").matchAll(pattern)) {
      const to = posix.normalize(posix.join(posix.dirname(from), match[1]!)).replace(/\.js$/, ".ts");
      edges.push({ from, to });
    }
  }
  return edges;
}

const edges = importEdges();
const topFolder = (path: string) => path.split("/")[0]!;
const isTest = (path: string) => /\.test\.ts$|\.suite\.ts$|test-support/.test(path);

describe("the folder architecture", () => {
  test("reads a real import graph", () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(edges).toContainEqual({ from: "gateway/exchange/plan.ts", to: "repair/index.ts" });
  });

  test("the gateway, the CLI and repair reach formats only through the adapter interface and the registry", () => {
    const allowed = new Set(["formats/adapter.ts", "formats/registry.ts"]);
    const around = edges.filter(
      ({ from, to }) =>
        ["gateway", "cli", "repair"].includes(topFolder(from)) && topFolder(to) === "formats" && !allowed.has(to),
    );
    expect(around).toEqual([]);
  });

  test("the library's entry points reach a format only through its library module and the shared interfaces", () => {
    const shared = new Set(["formats/adapter.ts", "formats/registry.ts", "formats/codec.ts"]);
    const around = edges.filter(
      ({ from, to }) =>
        topFolder(from) === "library" &&
        topFolder(to) === "formats" &&
        !shared.has(to) &&
        !/^formats\/[^/]+\/(library|wire-types)\.ts$/.test(to),
    );
    expect(around).toEqual([]);
    expect(edges).toContainEqual({ from: "library/codecs.ts", to: "formats/anthropic/library.ts" });
    // Nothing but the package's root builds on the entry points.
    expect(
      edges.filter(
        ({ from, to }) =>
          topFolder(to) === "library" && topFolder(from) !== "library" && from !== "index.ts" && !isTest(from),
      ),
    ).toEqual([]);
  });

  test("a format's folder imports no other format's folder, only the shared interface", () => {
    const across = edges.filter(({ from, to }) => {
      const [top, format] = from.split("/");
      const [toTop, toFormat] = to.split("/");
      const inFormat = (path: string) => path.split("/").length > 2;
      return top === "formats" && toTop === "formats" && inFormat(from) && inFormat(to) && format !== toFormat;
    });
    expect(across).toEqual([]);
  });

  test("nothing in a lower folder imports a higher one", () => {
    // What each folder may import besides itself.
    const below: Record<string, string[]> = {
      core: [],
      text: ["core"],
      stream: ["core", "text"],
      formats: ["core", "text", "stream"],
      repair: ["core", "formats"],
      store: ["core", "stream"],
      upstream: ["core"],
    };
    const upward = edges.filter(({ from, to }) => {
      const allowed = below[topFolder(from)];
      if (allowed === undefined || isTest(from) || topFolder(to) === topFolder(from)) return false;
      return !allowed.includes(topFolder(to));
    });
    expect(upward).toEqual([]);
  });
});
