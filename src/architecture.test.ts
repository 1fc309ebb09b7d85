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

/** The folder a file of `store/` is in (`sqlite`, `traces`...), undefined for one at its root or elsewhere. */
function storeFolder(path: string): string | undefined {
  const [top, folder, file] = path.split("/");
  return top === "store" && file !== undefined ? folder : undefined;
}

const STORE_BACKENDS = ["memory", "sqlite", "postgres"];

/** What a backend's file is: its driver (`driver.ts`, `migrations.ts`) or one store's (`conversations.ts`, `trace-tables.ts`...). */
function backendRoom(path: string): string | undefined {
  const name = posix.basename(path);
  if (name === "driver.ts" || name === "migrations.ts") return "driver";
  if (name === "conversations.ts") return "conversations";
  if (name === "answers.ts") return "answers";
  return /^traces?[-.]/.test(name) ? "traces" : undefined;
}

describe("the folder architecture", () => {
  test("reads a real import graph", () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(edges).toContainEqual({ from: "gateway/exchange/plan.ts", to: "repair/index.ts" });
  });

  test("the gateway, the CLI, repair and the inspect view reach formats only through the adapter interface and the registry", () => {
    const allowed = new Set(["formats/adapter.ts", "formats/registry.ts"]);
    const around = edges.filter(
      ({ from, to }) =>
        ["gateway", "cli", "repair", "inspect"].includes(topFolder(from)) &&
        topFolder(to) === "formats" &&
        !allowed.has(to),
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
      inspect: ["core", "text", "stream", "formats", "store"],
    };
    const upward = edges.filter(({ from, to }) => {
      const allowed = below[topFolder(from)];
      if (allowed === undefined || isTest(from) || topFolder(to) === topFolder(from)) return false;
      return !allowed.includes(topFolder(to));
    });
    expect(upward).toEqual([]);
  });

  test("the inspect view is pure: traces in, views out, no store read, no I/O", () => {
    const view = (path: string) => topFolder(path) === "inspect" && !path.startsWith("inspect/page/") && !isTest(path);
    // Nothing of the gateway, the CLI, a store's backend or the upstream client.
    expect(
      edges.filter(
        ({ from, to }) =>
          view(from) && !["core", "text", "stream", "formats", "store", "inspect"].includes(topFolder(to)),
      ),
    ).toEqual([]);
    // Of the store, only the shapes of what it holds: `import type`, never a store to call.
    const imports = /^\s*import\s+(type\s+)?[^;]*?\bfrom\s*["']([^"']+)["']/gms;
    const found: string[] = [];
    for (const file of sourceFiles(join(SRC, "inspect"))) {
      const from = relative(SRC, file).split("\\").join("/");
      if (!view(from)) continue;
      for (const match of readFileSync(file, "utf8").matchAll(imports)) {
        const target = match[2]!;
        if (target.startsWith("node:") || (target.includes("/store/") && match[1] === undefined)) {
          found.push(`${from}: ${target}`);
        }
      }
    }
    expect(found).toEqual([]);
    expect(edges).toContainEqual({ from: "gateway/inspector/routes.ts", to: "inspect/exchange-view.ts" });
    expect(edges).toContainEqual({ from: "cli/trace-show.ts", to: "inspect/exchange-view.ts" });
  });

  test("the inspector's page is its own build: it imports nothing of the server but the view types", () => {
    const page = edges.filter(({ from }) => from.startsWith("inspect/page/"));
    expect(page.length).toBeGreaterThan(5);
    expect(page.filter(({ to }) => !to.startsWith("inspect/page/") && to !== "inspect/view-types.ts")).toEqual([]);
    // And of those, types only: nothing of the server's code reaches the bundle.
    for (const file of sourceFiles(join(SRC, "inspect", "page"))) {
      const text = readFileSync(file, "utf8");
      expect(text).not.toMatch(/^\s*import\s+(?!type\b)[^;]*\bfrom\s*["']\.\.\//ms);
      expect(text).not.toMatch(/^\s*import\s+["']\.\.\//m);
    }
  });

  test("the store's three rooms do not import each other, nor a backend or what opens them", () => {
    const rooms = ["conversations", "answers", "traces"];
    const roomOf = (path: string) => storeFolder(path) ?? "";
    const across = edges.filter(
      ({ from, to }) =>
        rooms.includes(roomOf(from)) &&
        topFolder(to) === "store" &&
        roomOf(to) !== roomOf(from) &&
        (rooms.includes(roomOf(to)) || STORE_BACKENDS.includes(roomOf(to)) || to === "store/open-store.ts"),
    );
    expect(across).toEqual([]);
    expect(edges).toContainEqual({ from: "store/sqlite/conversations.ts", to: "store/conversations/message-codec.ts" });
  });

  test("a store backend's files import only their driver, their own room and the store's shared modules", () => {
    const shared = new Set([
      "store/owner.ts",
      "store/errors.ts",
      "store/migration.ts",
      "store/worker-thread.ts",
      "store/deadline.ts",
    ]);
    const files = edges.filter(({ from }) => STORE_BACKENDS.includes(storeFolder(from) ?? "") && !isTest(from));
    // Every file of a backend is its driver or belongs to one store.
    const unplaced = [...new Set(files.map(({ from }) => from))].filter((from) => backendRoom(from) === undefined);
    expect(unplaced).toEqual([]);
    const stray = files.filter(({ from, to }) => {
      if (topFolder(to) !== "store") return false;
      const room = backendRoom(from);
      if (storeFolder(to) === storeFolder(from)) return !["driver", room].includes(backendRoom(to));
      if (shared.has(to)) return false;
      // The driver needs nothing of a store; a store's file, its own room's interface and helpers.
      return room === "driver" || storeFolder(to) !== room;
    });
    expect(stray).toEqual([]);
    expect(edges).toContainEqual({ from: "store/postgres/answers.ts", to: "store/postgres/driver.ts" });
  });

  test("nothing outside a format's folder branches on the API: no format id compared as a literal", () => {
    // `src/formats/` is where an API's decisions live; `src/core/` holds the id list and the per-id data the model
    // keeps (`wire-format.ts`). Everyone else asks an adapter's face (`client`, `upstream`, `discovery`...) instead.
    // Tests are exempt: they name the format they exercise.
    const ids = "anthropic|openai|responses|gemini";
    const branch = new RegExp(
      `(?:[=!]==\\s*["'](?:${ids})["'])|(?:["'](?:${ids})["']\\s*[=!]==)|(?:\\bcase\\s+["'](?:${ids})["']\\s*:)`,
      "g",
    );
    const found: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const path = relative(SRC, file).split("\\").join("/");
      if (["formats", "core"].includes(topFolder(path)) || isTest(path)) continue;
      for (const match of readFileSync(file, "utf8").matchAll(branch)) found.push(`${path}: ${match[0]}`);
    }
    expect(found).toEqual([]);
    // The rule reads what it should: a branch written the usual ways is caught.
    for (const sample of ['if (type === "anthropic")', "x !== 'gemini'", '"responses" === f', 'case "openai":']) {
      expect(sample.match(branch), sample).not.toBeNull();
    }
  });

  test("no import circles anywhere, type-only imports included", () => {
    const next = new Map<string, string[]>();
    for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
    // Tarjan's strongly connected components: a component of more than one file (or a file importing itself) is a circle.
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const circles: string[][] = [];
    const visit = (file: string) => {
      index.set(file, index.size);
      low.set(file, index.get(file)!);
      stack.push(file);
      onStack.add(file);
      for (const to of next.get(file) ?? []) {
        if (to === file) circles.push([file]);
        if (!index.has(to)) {
          visit(to);
          low.set(file, Math.min(low.get(file)!, low.get(to)!));
        } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!));
      }
      if (low.get(file) !== index.get(file)) return;
      const component: string[] = [];
      for (let member = stack.pop()!; ; member = stack.pop()!) {
        onStack.delete(member);
        component.push(member);
        if (member === file) break;
      }
      if (component.length > 1) circles.push(component.sort());
    };
    for (const file of next.keys()) if (!index.has(file)) visit(file);
    expect(circles).toEqual([]);
  });
});
