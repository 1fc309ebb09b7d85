import { describe, expect, test } from "vitest";
import {
  FORMAT_IDS,
  FORMATS,
  findFormat,
  findUpstreamType,
  formatAdapter,
  orList,
  UPSTREAM_TYPES,
} from "./registry.js";

describe("the format registry", () => {
  test("lists each format under its own id, the ids the CLI and stored data use", () => {
    expect(FORMAT_IDS).toEqual(["anthropic", "openai"]);
    for (const id of FORMAT_IDS) expect(formatAdapter(id).id).toBe(id);
    expect(findFormat("openai")?.id).toBe("openai");
    expect(findFormat("gemini")).toBeUndefined();
    expect(findFormat("toString")).toBeUndefined();
  });

  test("each provider type belongs to one format", () => {
    expect(new Set(UPSTREAM_TYPES).size).toBe(UPSTREAM_TYPES.length);
    for (const adapter of FORMATS) expect(findUpstreamType(adapter.upstream.type)).toBe(adapter);
  });

  test("no two formats answer the same route, and each route's kind has what it needs", () => {
    const routes = FORMATS.flatMap((adapter) =>
      adapter.client.routes.map((route) => ({ key: `${route.method} ${route.path}`, route, adapter })),
    );
    expect(new Set(routes.map((entry) => entry.key)).size).toBe(routes.length);
    for (const { route, adapter } of routes) {
      if (route.kind === "count-tokens") expect(adapter.client.readCountTokensRequest).toBeDefined();
      if (route.kind === "models" || route.kind === "model") expect(adapter.client.models).toBeDefined();
    }
  });

  test("choices are listed as a person reads them", () => {
    expect(orList(["anthropic", "openai"])).toBe("anthropic or openai");
    expect(orList(["a", "b", "c"])).toBe("a, b or c");
    expect(orList(["a"])).toBe("a");
  });
});
